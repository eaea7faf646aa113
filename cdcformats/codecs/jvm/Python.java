package cdcformats.codecs.jvm;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/** Python's ways the decoders' messages and orders follow, so that the JVM path reads as the Python codecs do. */
public final class Python {
    private Python() {
    }

    /** Python's string order: by code point (Java's compareTo orders by UTF-16 unit). */
    public static final Comparator<String> CODE_POINT_ORDER = (left, right) -> {
        int i = 0;
        int j = 0;
        while (i < left.length() && j < right.length()) {
            int a = left.codePointAt(i);
            int b = right.codePointAt(j);
            if (a != b) {
                return Integer.compare(a, b);
            }
            i += Character.charCount(a);
            j += Character.charCount(b);
        }
        return Integer.compare(left.length() - i, right.length() - j);
    };

    /** Python's truth of a parsed JSON value: null, false, zero and empty are false. */
    public static boolean isTruthy(Object value) {
        if (Json.isNull(value)) {
            return false;
        }
        if (value instanceof Boolean) {
            return (Boolean) value;
        }
        if (value instanceof Long) {
            return (Long) value != 0;
        }
        if (value instanceof Double) {
            return (Double) value != 0;
        }
        if (value instanceof String) {
            return !((String) value).isEmpty();
        }
        if (value instanceof Map) {
            return !((Map<?, ?>) value).isEmpty();
        }
        if (value instanceof List) {
            return !((List<?>) value).isEmpty();
        }
        return true; // a BigInteger is never zero
    }

    /** Python's {@code ==} between parsed JSON values (and Strings, Booleans, Longs): {@code True == 1 == 1.0}. */
    public static boolean equal(Object left, Object right) {
        if (Json.isNull(left) || Json.isNull(right)) {
            return Json.isNull(left) && Json.isNull(right);
        }
        BigDecimal leftNumber = number(left);
        BigDecimal rightNumber = number(right);
        if (leftNumber != null || rightNumber != null) {
            return leftNumber != null && rightNumber != null && leftNumber.compareTo(rightNumber) == 0;
        }
        if (left instanceof Map && right instanceof Map) {
            Map<?, ?> leftMap = (Map<?, ?>) left;
            Map<?, ?> rightMap = (Map<?, ?>) right;
            if (!leftMap.keySet().equals(rightMap.keySet())) {
                return false;
            }
            for (Map.Entry<?, ?> entry : leftMap.entrySet()) {
                if (!equal(entry.getValue(), rightMap.get(entry.getKey()))) {
                    return false;
                }
            }
            return true;
        }
        if (left instanceof List && right instanceof List) {
            List<?> leftList = (List<?>) left;
            List<?> rightList = (List<?>) right;
            if (leftList.size() != rightList.size()) {
                return false;
            }
            for (int i = 0; i < leftList.size(); i++) {
                if (!equal(leftList.get(i), rightList.get(i))) {
                    return false;
                }
            }
            return true;
        }
        return left.equals(right);
    }

    /** A number, or a boolean as the number Python takes it for; null for anything else (NaN too: never equal). */
    private static BigDecimal number(Object value) {
        if (value instanceof Boolean) {
            return (Boolean) value ? BigDecimal.ONE : BigDecimal.ZERO;
        }
        if (value instanceof Long) {
            return BigDecimal.valueOf((Long) value);
        }
        if (value instanceof BigInteger) {
            return new BigDecimal((BigInteger) value);
        }
        if (value instanceof Double && Double.isFinite((Double) value)) {
            return new BigDecimal((Double) value);
        }
        return null;
    }

    /** About what Python's {@code repr} shows of a parsed JSON value, for error messages. */
    public static String repr(Object value) {
        if (Json.isNull(value)) {
            return "None";
        }
        if (value instanceof Boolean) {
            return (Boolean) value ? "True" : "False";
        }
        if (value instanceof Double) {
            double number = (Double) value;
            return Double.isNaN(number) ? "nan" : Double.isInfinite(number) ? (number > 0 ? "inf" : "-inf")
                : Numbers.pythonRepr(number);
        }
        if (value instanceof String) {
            String text = (String) value;
            char quote = text.indexOf('\'') >= 0 && text.indexOf('"') < 0 ? '"' : '\'';
            StringBuilder out = new StringBuilder().append(quote);
            for (int i = 0; i < text.length(); i++) {
                escaped(text.charAt(i), quote, false, out);
            }
            return out.append(quote).toString();
        }
        if (value instanceof Map || value instanceof List) {
            return Json.write(value);
        }
        return value.toString();
    }

    /** One character of a Python string or bytes literal quoted with {@code quote}; in bytes, non-ASCII is hex. */
    private static void escaped(int c, char quote, boolean bytes, StringBuilder out) {
        if (c == quote || c == '\\') {
            out.append('\\').append((char) c);
        } else if (c == '\n') {
            out.append("\\n");
        } else if (c == '\r') {
            out.append("\\r");
        } else if (c == '\t') {
            out.append("\\t");
        } else if (c < 0x20 || c == 0x7f || (bytes && c > 0x7f)) {
            out.append(String.format("\\x%02x", c));
        } else {
            out.append((char) c);
        }
    }

    /** Python's {@code repr} of bytes ({@code b'...'}), at most {@code limit} characters as {@code excerpt} cuts. */
    public static String bytesExcerpt(byte[] raw, int limit) {
        StringBuilder out = new StringBuilder("b'");
        for (byte b : raw) {
            escaped(b & 0xff, '\'', true, out);
            if (out.length() > limit) {
                break;
            }
        }
        out.append('\'');
        return out.length() <= limit ? out.toString() : out.substring(0, limit - 3) + "...";
    }
}
