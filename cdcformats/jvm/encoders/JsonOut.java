package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.Json;
import cdcformats.jvm.decoders.Numbers;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * JSON out for the JVM encoders, byte for byte as the Python codecs write it ({@code _kit/json_message.py}), in one
 * of two spellings:
 * <ul>
 * <li>{@link #msgspec}: {@code msgspec.json.encode}, compact, control characters escaped as four hex digits in lower
 * case, characters beyond the BMP as they are, doubles as {@link Numbers#msgspecText};</li>
 * <li>{@link #jackson}: {@code encode_as_jackson(with_jackson_floats(document))}, as Kafka Connect's JsonConverter
 * writes: the same, but control characters with upper-case hex digits, characters beyond the BMP as their escaped
 * UTF-16 surrogate pair, and finite doubles as {@link Numbers#javaText}.</li>
 * </ul>
 * A document is made of {@code Map}s (with text keys, in order), {@code List}s, {@code String}s, {@code Long}s,
 * {@code Boolean}s, null (or {@link Json#NULL}), {@code Double}s and {@link Raw} texts. A double that is not finite
 * has no JSON form: the codecs write it as text before it gets here.
 */
public final class JsonOut {
    private JsonOut() {
    }

    /** JSON text written as it is (a kept field: {@code msgspec.Raw}), spelt as msgspec wrote it. */
    public record Raw(String text) {
    }

    public static String msgspec(Object document) {
        StringBuilder out = new StringBuilder();
        write(document, out, false);
        return out.toString();
    }

    /** {@code encode_as_jackson(with_jackson_floats(document))}, as UTF-8. */
    public static byte[] jackson(Object document) {
        StringBuilder out = new StringBuilder();
        write(document, out, true);
        return out.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static void write(Object value, StringBuilder out, boolean jackson) {
        if (value instanceof String) {
            writeString((String) value, out, jackson);
        } else if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> field : ((Map<?, ?>) value).entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                writeString((String) field.getKey(), out, jackson);
                out.append(':');
                write(field.getValue(), out, jackson);
            }
            out.append('}');
        } else if (value instanceof List) {
            out.append('[');
            boolean first = true;
            for (Object item : (List<?>) value) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                write(item, out, jackson);
            }
            out.append(']');
        } else if (value instanceof Double) {
            double number = (Double) value;
            if (!Double.isFinite(number)) {
                throw new IllegalArgumentException("no JSON number holds " + number);
            }
            out.append(jackson ? Numbers.javaText(number) : Numbers.msgspecText(number));
        } else if (value instanceof Raw) {
            String text = ((Raw) value).text();
            out.append(jackson ? asJackson(text) : text);
        } else if (Json.isNull(value)) {
            out.append("null");
        } else {
            out.append(value); // Long, Boolean, BigInteger
        }
    }

    private static final String ESCAPED = "\"\\\b\f\n\r\t";
    private static final String ESCAPE_LETTERS = "\"\\bfnrt";
    private static final char[] LOWER_HEX = "0123456789abcdef".toCharArray();
    private static final char[] UPPER_HEX = "0123456789ABCDEF".toCharArray();

    private static void writeString(String value, StringBuilder out, boolean jackson) {
        out.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            int escape = ESCAPED.indexOf(c);
            if (escape >= 0) {
                out.append('\\').append(ESCAPE_LETTERS.charAt(escape));
            } else if (c < 0x20) {
                hexEscape(c, out, jackson ? UPPER_HEX : LOWER_HEX);
            } else if (jackson && Character.isHighSurrogate(c) && i + 1 < value.length()
                    && Character.isLowSurrogate(value.charAt(i + 1))) {
                hexEscape(c, out, UPPER_HEX);
                hexEscape(value.charAt(++i), out, UPPER_HEX);
            } else {
                out.append(c);
            }
        }
        out.append('"');
    }

    private static void hexEscape(char c, StringBuilder out, char[] hex) {
        out.append("\\u").append(hex[c >> 12]).append(hex[(c >> 8) & 0xF]).append(hex[(c >> 4) & 0xF])
            .append(hex[c & 0xF]);
    }

    /**
     * msgspec's JSON text as Jackson spells it: {@code json_message._NOT_JACKSON} applied to it, which upper-cases the
     * hex digits of a control character's escape and escapes a character beyond the BMP as its surrogate pair (an
     * escaped backslash is passed over whole, so that the text after it is not read as an escape).
     */
    static String asJackson(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\\' && i + 1 < text.length() && text.charAt(i + 1) == '\\') {
                out.append("\\\\");
                i++;
            } else if (c == '\\' && i + 5 < text.length() && text.startsWith("u00", i + 1)
                    && isLowerHex(text.charAt(i + 4)) && isLowerHex(text.charAt(i + 5))) {
                out.append("\\u00").append(Character.toUpperCase(text.charAt(i + 4)))
                    .append(Character.toUpperCase(text.charAt(i + 5)));
                i += 5;
            } else if (Character.isHighSurrogate(c) && i + 1 < text.length()
                    && Character.isLowSurrogate(text.charAt(i + 1))) {
                hexEscape(c, out, UPPER_HEX);
                hexEscape(text.charAt(++i), out, UPPER_HEX);
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static boolean isLowerHex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    }
}
