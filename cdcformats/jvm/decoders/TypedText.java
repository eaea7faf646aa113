package cdcformats.jvm.decoders;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.DoubleFunction;
import java.util.regex.Pattern;

/**
 * {@code core/typed_text.py} for the JVM decoders and encoders: a text value becomes a typed value only when its column's type
 * name says which type and writing the typed value back gives the same text. Typed values are {@code Long},
 * {@code Double}, {@code Boolean} and {@link DecimalText}.
 */
public final class TypedText {
    private TypedText() {
    }

    private enum Kind { INTEGER, FLOAT, BOOLEAN, DECIMAL }

    // MySQL's attributes of a number type, written after its name (sql_types.ATTRIBUTES).
    private static final Set<String> ATTRIBUTES = Set.of("UNSIGNED", "SIGNED", "ZEROFILL");

    private static final Pattern INTEGER = Pattern.compile("0|-?[1-9][0-9]*");
    // canal.MOST_DECIMAL_PLACES: the most places of a decimal written in plain digits.
    private static final int MOST_DECIMAL_PLACES = 38;

    // core/sql_types.py's names of the SQL types whose text is typed, by the kind of value their column type holds
    // (tests/unit/test_sql_types.py holds them to that table).
    private static final Map<String, Kind> KINDS = new HashMap<>();

    static {
        kinds(Kind.INTEGER, "TINYINT", "INT1", "BYTE", "SMALLINT", "INT2", "SHORT", "SMALLSERIAL", "MEDIUMINT",
            "MIDDLEINT", "INT3", "INT", "INTEGER", "INT4", "SERIAL", "BIGINT", "INT8", "LONG", "BIGSERIAL");
        kinds(Kind.FLOAT, "FLOAT", "REAL", "FLOAT4", "DOUBLE", "DOUBLE PRECISION", "FLOAT8");
        kinds(Kind.DECIMAL, "DECIMAL", "NUMERIC", "NUMBER", "DEC");
        kinds(Kind.BOOLEAN, "BOOLEAN", "BOOL");
    }

    private static void kinds(Kind kind, String... names) {
        for (String name : names) {
            KINDS.put(name, kind);
        }
    }

    /**
     * {@code sql_types.sql_type}'s reading of a name, as {@code typed_text.kind_of} uses it: the words before any
     * parenthesis, upper case, without MySQL's attributes of a number type after them ("INT UNSIGNED ZEROFILL" is
     * "INT"), joined by one space.
     */
    private static Kind kindOf(String typeName) {
        if (typeName == null || typeName.isEmpty()) {
            return null;
        }
        int parenthesis = typeName.indexOf('(');
        List<String> words = pythonSplit((parenthesis < 0 ? typeName : typeName.substring(0, parenthesis))
            .toUpperCase(Locale.ROOT));
        while (words.size() > 1 && ATTRIBUTES.contains(words.get(words.size() - 1))) {
            words.remove(words.size() - 1);
        }
        return KINDS.get(String.join(" ", words));
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
     * {@code typed_text.carries}: whether {@code value} in a column of {@code typeName} survives being written as its
     * text and parsed back unchanged: null always; text where the type leaves it text; a nested value (whose text is
     * JSON, which no SQL type reads) where the type types no text; any other value where it is of the kind the type
     * holds.
     */
    public static boolean carries(Object value, String typeName) {
        if (Json.isNull(value)) {
            return true;
        }
        Kind kind = kindOf(typeName);
        if (value instanceof String) {
            return kind == null || parse((String) value, typeName) == value; // parse gives the text itself back
        }
        if (value instanceof List || value instanceof Map) {
            return kind == null;
        }
        return kind == Kind.INTEGER && value instanceof Long || kind == Kind.FLOAT && value instanceof Double
            || kind == Kind.BOOLEAN && value instanceof Boolean || kind == Kind.DECIMAL && value instanceof DecimalText;
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
     * unless its exponent is positive or it has more places than a MySQL column (Java's {@code toPlainString}); held
     * as Python's {@code str} of it, whatever the spelling, as the model holds a {@code Decimal}.
     */
    private static Object parseDecimal(String text, boolean plain) {
        String decimal = PythonDecimal.str(text);
        if (decimal == null) {
            return text;
        }
        String plainDigits = plain ? PythonDecimal.plainDigits(text, MOST_DECIMAL_PLACES) : null;
        return (plainDigits == null ? decimal : plainDigits).equals(text) ? new DecimalText(decimal) : text;
    }

    /** Python's {@code str.split()}: the words between runs of what {@code str.isspace} calls whitespace. */
    private static List<String> pythonSplit(String text) {
        List<String> words = new ArrayList<>();
        int start = -1;
        for (int i = 0; i <= text.length(); i++) {
            boolean space = i == text.length() || isPythonSpace(text.charAt(i));
            if (space && start >= 0) {
                words.add(text.substring(start, i));
                start = -1;
            } else if (!space && start < 0) {
                start = i;
            }
        }
        return words;
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
