package cdcformats.jvm.decoders;

import java.math.BigDecimal;
import java.util.Locale;
import java.util.function.DoubleFunction;
import java.util.regex.Pattern;

/**
 * {@code core/typed_text.py} for the JVM decoders: a text value becomes a typed value only when its column's type
 * name says which type and writing the typed value back gives the same text. Typed values are {@code Long},
 * {@code Double}, {@code Boolean} and {@link DecimalText}.
 */
public final class TypedText {
    private TypedText() {
    }

    private enum Kind { INTEGER, FLOAT, BOOLEAN, DECIMAL }

    private static final Pattern INTEGER = Pattern.compile("0|-?[1-9][0-9]*");
    // canal.MOST_DECIMAL_PLACES: the most places of a decimal written in plain digits.
    private static final int MOST_DECIMAL_PLACES = 38;
    private static final Pattern DECIMAL_NAN = Pattern.compile("-?s?NaN([1-9][0-9]*)?");

    private static Kind kindOf(String typeName) {
        if (typeName == null || typeName.isEmpty()) {
            return null;
        }
        int parenthesis = typeName.indexOf('(');
        String base = withoutAttributes(pythonStrip(parenthesis < 0 ? typeName : typeName.substring(0, parenthesis))
            .toUpperCase(Locale.ROOT));
        switch (base) {
            case "TINYINT": case "SMALLINT": case "MEDIUMINT": case "INT": case "INTEGER": case "BIGINT": case "LONG":
                return Kind.INTEGER;
            case "FLOAT": case "DOUBLE": case "REAL":
                return Kind.FLOAT;
            case "BOOLEAN": case "BOOL":
                return Kind.BOOLEAN;
            case "DECIMAL": case "NUMERIC":
                return Kind.DECIMAL;
            default:
                return null;
        }
    }

    /** The typed value of {@code text} in a column of {@code typeName}, or {@code text} itself. */
    public static Object parse(String text, String typeName) {
        Kind kind = kindOf(typeName);
        if (kind == null) {
            return text;
        }
        switch (kind) {
            case INTEGER:
                if (text.length() <= 20 && INTEGER.matcher(text).matches()) {
                    try {
                        return Long.parseLong(text);
                    } catch (NumberFormatException outsideLong) {
                        return text;
                    }
                }
                return text;
            case BOOLEAN:
                return text.equals("true") ? Boolean.TRUE : text.equals("false") ? Boolean.FALSE : text;
            case FLOAT:
                return parseFloat(text);
            default:
                return parseDecimal(text, false);
        }
    }

    /**
     * {@code typed_text.parse} with canal-json's spelling ({@code canal._spelled}): a double as Java's
     * {@code Double.toString} ("1.0E7"), a decimal without a positive exponent in plain digits ("0.000000000001").
     */
    public static Object parseAsJava(String text, String typeName) {
        Kind kind = kindOf(typeName);
        if (kind == Kind.FLOAT) {
            return parseJavaDouble(text);
        }
        if (kind == Kind.DECIMAL) {
            return parseDecimal(text, true);
        }
        return parse(text, typeName);
    }

    private static Object parseJavaDouble(String text) {
        // Java's spelling has digits, a minus, a point and an exponent's E; Java reads more ("1d", "0x1p3").
        return parseDouble(text, "0123456789-.E", Numbers::javaText);
    }

    private static Object parseFloat(String text) {
        // Java reads forms Python does not ("1d", "0x1p3") and the reverse ("1_0"), but repr writes neither.
        return parseDouble(text, "0123456789-+.e", Numbers::pythonRepr);
    }

    /**
     * A double whose text is {@code text} as {@code spelling} writes it back, or {@code text}: the non-finite ones
     * by their names, the others of no character but {@code characters}.
     */
    private static Object parseDouble(String text, String characters, DoubleFunction<String> spelling) {
        switch (text) {
            case "NaN": return Double.NaN;
            case "Infinity": return Double.POSITIVE_INFINITY;
            case "-Infinity": return Double.NEGATIVE_INFINITY;
            default:
        }
        if (text.isEmpty() || text.length() > 32 || !text.chars().allMatch(c -> characters.indexOf(c) >= 0)) {
            return text;
        }
        double value;
        try {
            value = Double.parseDouble(text);
        } catch (NumberFormatException notANumber) {
            return text;
        }
        return !Double.isInfinite(value) && !Double.isNaN(value) && spelling.apply(value).equals(text)
            ? (Object) value : text;
    }

    /**
     * A decimal whose text is {@code text} as written back: Python's {@code str}, or, {@code plain}, its plain digits
     * unless its exponent is positive or it has more places than a MySQL column (Java's {@code toPlainString}).
     */
    private static Object parseDecimal(String text, boolean plain) {
        switch (text) {
            case "Infinity": case "-Infinity":
                return new DecimalText(text);
            default:
        }
        if (DECIMAL_NAN.matcher(text).matches()) {
            return new DecimalText(text);
        }
        if (text.isEmpty() || !isDecimalCharacters(text)) {
            return text;
        }
        BigDecimal value;
        try {
            value = new BigDecimal(text);
        } catch (NumberFormatException | ArithmeticException notADecimal) {
            return text;
        }
        String written = plain && value.scale() >= 0 && value.scale() <= MOST_DECIMAL_PLACES ? value.toPlainString()
            : value.toString();
        // BigDecimal has no negative zero; Python's Decimal keeps the sign: "-0.00" is canonical there.
        if (value.signum() == 0 && text.startsWith("-")) {
            written = "-" + written;
        }
        return written.equals(text) ? new DecimalText(text) : text;
    }

    private static boolean isDecimalCharacters(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (!(c >= '0' && c <= '9') && c != '-' && c != '+' && c != '.' && c != 'E') {
                return false;
            }
        }
        return true;
    }

    /**
     * A stripped type name without MySQL's attributes of a number type after it ("INT UNSIGNED ZEROFILL" is "INT"),
     * as {@code kind_of} drops them: trailing words, each after whitespace, while another word is left.
     */
    private static String withoutAttributes(String name) {
        int end = name.length();
        while (true) {
            int start = end;
            while (start > 0 && !isPythonSpace(name.charAt(start - 1))) {
                start--;
            }
            String word = name.substring(start, end);
            if (start == 0 || !(word.equals("UNSIGNED") || word.equals("SIGNED") || word.equals("ZEROFILL"))) {
                return name.substring(0, end);
            }
            end = start;
            while (end > 0 && isPythonSpace(name.charAt(end - 1))) {
                end--;
            }
        }
    }

    /** Python's {@code str.strip()}: every character {@code str.isspace} calls whitespace. */
    static String pythonStrip(String text) {
        int start = 0;
        int end = text.length();
        while (start < end && isPythonSpace(text.charAt(start))) {
            start++;
        }
        while (end > start && isPythonSpace(text.charAt(end - 1))) {
            end--;
        }
        return text.substring(start, end);
    }

    private static boolean isPythonSpace(char c) {
        return (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x20) || c == 0x85 || c == 0xa0 || c == 0x1680
            || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f
            || c == 0x3000;
    }

    /** A decimal value, held as its exact text (the text Python's {@code str(Decimal)} gives). */
    public static final class DecimalText {
        public final String text;

        public DecimalText(String text) {
            this.text = text;
        }
    }
}
