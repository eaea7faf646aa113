package cdcformats.codecs.jvm;

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

    /** About what Python's {@code repr} shows of a parsed JSON value, for error messages. */
    public static String repr(Object value) {
        if (value == null || value == Json.NULL) {
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
                char c = text.charAt(i);
                if (c == quote || c == '\\') {
                    out.append('\\').append(c);
                } else if (c == '\n') {
                    out.append("\\n");
                } else if (c == '\r') {
                    out.append("\\r");
                } else if (c == '\t') {
                    out.append("\\t");
                } else if (c < 0x20 || c == 0x7f) {
                    out.append(String.format("\\x%02x", (int) c));
                } else {
                    out.append(c);
                }
            }
            return out.append(quote).toString();
        }
        if (value instanceof Map || value instanceof List) {
            return Json.write(value);
        }
        return value.toString();
    }

    /** Python's {@code repr} of bytes ({@code b'...'}), at most {@code limit} characters as {@code excerpt} cuts. */
    public static String bytesExcerpt(byte[] raw, int limit) {
        StringBuilder out = new StringBuilder("b'");
        for (byte b : raw) {
            int c = b & 0xff;
            if (c == '\'' || c == '\\') {
                out.append('\\').append((char) c);
            } else if (c == '\n') {
                out.append("\\n");
            } else if (c == '\r') {
                out.append("\\r");
            } else if (c == '\t') {
                out.append("\\t");
            } else if (c < 0x20 || c >= 0x7f) {
                out.append(String.format("\\x%02x", c));
            } else {
                out.append((char) c);
            }
            if (out.length() > limit) {
                break;
            }
        }
        out.append('\'');
        return out.length() <= limit ? out.toString() : out.substring(0, limit - 3) + "...";
    }
}
