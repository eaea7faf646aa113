package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.Json;
import cdcformats.jvm.decoders.Numbers;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
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
 * has no JSON form: the codecs write it as text before it gets here. The text is written as UTF-8 straight into an
 * array of bytes.
 */
public final class JsonOut {
    private static final byte[] LOWER_HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] UPPER_HEX = "0123456789ABCDEF".getBytes(StandardCharsets.US_ASCII);
    // The escape letter of each character JSON escapes with one (0: none): msgspec's and Jackson's alike.
    private static final byte[] ESCAPE_LETTER = new byte[128];

    // By the byte of UTF-8 text: whether it opens a character that a spelling escapes (needsEscape).
    private static final boolean[] ESCAPED_BY_MSGSPEC = new boolean[256];
    private static final boolean[] ESCAPED_BY_JACKSON = new boolean[256];

    static {
        for (int b = 0; b < 256; b++) {
            ESCAPED_BY_MSGSPEC[b] = b < 0x20 || b == '"' || b == '\\';
            ESCAPED_BY_JACKSON[b] = ESCAPED_BY_MSGSPEC[b] || (b & 0xF8) == 0xF0; // a four-byte sequence's lead
        }
        String escaped = "\"\\\b\f\n\r\t";
        String letters = "\"\\bfnrt";
        for (int i = 0; i < escaped.length(); i++) {
            ESCAPE_LETTER[escaped.charAt(i)] = (byte) letters.charAt(i);
        }
    }

    /** JSON text written as it is (a kept field: {@code msgspec.Raw}), spelt as msgspec wrote it. */
    public record Raw(String text) {
    }

    private final boolean jackson;
    private byte[] bytes = new byte[512];
    private int size;

    private JsonOut(boolean jackson) {
        this.jackson = jackson;
    }

    public static String msgspec(Object document) {
        JsonOut out = new JsonOut(false);
        out.write(document);
        return new String(out.bytes, 0, out.size, StandardCharsets.UTF_8);
    }

    /** {@code encode_as_jackson(with_jackson_floats(document))}, as UTF-8. */
    public static byte[] jackson(Object document) {
        JsonOut out = new JsonOut(true);
        out.write(document);
        return Arrays.copyOf(out.bytes, out.size);
    }

    private void write(Object value) {
        if (value instanceof String) {
            writeString((String) value);
        } else if (value instanceof Map) {
            writeByte('{');
            boolean first = true;
            for (Map.Entry<?, ?> field : ((Map<?, ?>) value).entrySet()) {
                if (!first) {
                    writeByte(',');
                }
                first = false;
                writeString((String) field.getKey());
                writeByte(':');
                write(field.getValue());
            }
            writeByte('}');
        } else if (value instanceof List) {
            writeByte('[');
            boolean first = true;
            for (Object item : (List<?>) value) {
                if (!first) {
                    writeByte(',');
                }
                first = false;
                write(item);
            }
            writeByte(']');
        } else if (value instanceof Double) {
            double number = (Double) value;
            if (!Double.isFinite(number)) {
                throw new IllegalArgumentException("no JSON number holds " + number);
            }
            writeAscii(jackson ? Numbers.javaText(number) : Numbers.msgspecText(number));
        } else if (value instanceof Raw) {
            String text = ((Raw) value).text();
            if (jackson) {
                writeAsJackson(text);
            } else {
                writeUtf8(text, 0, text.length());
            }
        } else if (Json.isNull(value)) {
            writeAscii("null");
        } else {
            writeAscii(value.toString()); // Long, Boolean, BigInteger
        }
    }

    private void writeString(String value) {
        byte[] utf8 = value.getBytes(StandardCharsets.UTF_8);
        if (!needsEscape(utf8)) { // most text: its UTF-8 as it is
            ensure(utf8.length + 2);
            bytes[size++] = '"';
            System.arraycopy(utf8, 0, bytes, size, utf8.length);
            size += utf8.length;
            bytes[size++] = '"';
            return;
        }
        writeByte('"');
        int written = 0; // the characters before this are written: runs that need no escape are written whole
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c >= 0x20 && c != '"' && c != '\\' && !(jackson && Character.isHighSurrogate(c))) {
                continue;
            }
            writeUtf8(value, written, i);
            written = i + 1;
            if (c < 0x80 && ESCAPE_LETTER[c] != 0) {
                writeByte('\\');
                writeByte(ESCAPE_LETTER[c]);
            } else if (c < 0x20) {
                hexEscape(c, jackson ? UPPER_HEX : LOWER_HEX);
            } else if (i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
                hexEscape(c, UPPER_HEX);
                hexEscape(value.charAt(++i), UPPER_HEX);
                written = i + 1;
            } else {
                written = i; // a lone surrogate: written as UTF-8 writes it
            }
        }
        writeUtf8(value, written, value.length());
        writeByte('"');
    }

    /**
     * Whether UTF-8 text has a character that this spelling escapes: a control character, a quote, a backslash, or,
     * for Jackson, one beyond the BMP (a four-byte sequence).
     */
    private boolean needsEscape(byte[] utf8) {
        boolean[] escaped = jackson ? ESCAPED_BY_JACKSON : ESCAPED_BY_MSGSPEC;
        for (byte b : utf8) {
            if (escaped[b & 0xFF]) {
                return true;
            }
        }
        return false;
    }

    private void hexEscape(char c, byte[] hex) {
        ensure(6);
        bytes[size++] = '\\';
        bytes[size++] = 'u';
        bytes[size++] = hex[c >> 12];
        bytes[size++] = hex[(c >> 8) & 0xF];
        bytes[size++] = hex[(c >> 4) & 0xF];
        bytes[size++] = hex[c & 0xF];
    }

    /**
     * msgspec's JSON text as Jackson spells it: {@code json_message._NOT_JACKSON} applied to it, which upper-cases the
     * hex digits of a control character's escape and escapes a character beyond the BMP as its surrogate pair (an
     * escaped backslash is passed over whole, so that the text after it is not read as an escape).
     */
    private void writeAsJackson(String text) {
        int written = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\\' && i + 1 < text.length() && text.charAt(i + 1) == '\\') {
                i++;
            } else if (c == '\\' && i + 5 < text.length() && text.startsWith("u00", i + 1)
                    && isLowerHex(text.charAt(i + 4)) && isLowerHex(text.charAt(i + 5))) {
                writeUtf8(text, written, i + 4);
                writeByte(Character.toUpperCase(text.charAt(i + 4)));
                writeByte(Character.toUpperCase(text.charAt(i + 5)));
                i += 5;
                written = i + 1;
            } else if (Character.isHighSurrogate(c) && i + 1 < text.length()
                    && Character.isLowSurrogate(text.charAt(i + 1))) {
                writeUtf8(text, written, i);
                hexEscape(c, UPPER_HEX);
                hexEscape(text.charAt(++i), UPPER_HEX);
                written = i + 1;
            }
        }
        writeUtf8(text, written, text.length());
    }

    private static boolean isLowerHex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    }

    private void writeByte(int b) {
        ensure(1);
        bytes[size++] = (byte) b;
    }

    private void writeAscii(String text) {
        ensure(text.length());
        for (int i = 0; i < text.length(); i++) {
            bytes[size++] = (byte) text.charAt(i);
        }
    }

    /** The characters {@code start} to {@code end} of {@code text} as UTF-8, as {@code String.getBytes} writes them. */
    private void writeUtf8(String text, int start, int end) {
        ensure((end - start) * 3);
        for (int i = start; i < end; i++) {
            char c = text.charAt(i);
            if (c < 0x80) {
                bytes[size++] = (byte) c;
            } else if (c < 0x800) {
                bytes[size++] = (byte) (0xC0 | (c >> 6));
                bytes[size++] = (byte) (0x80 | (c & 0x3F));
            } else if (Character.isHighSurrogate(c) && i + 1 < end && Character.isLowSurrogate(text.charAt(i + 1))) {
                int point = Character.toCodePoint(c, text.charAt(++i));
                bytes[size++] = (byte) (0xF0 | (point >> 18));
                bytes[size++] = (byte) (0x80 | ((point >> 12) & 0x3F));
                bytes[size++] = (byte) (0x80 | ((point >> 6) & 0x3F));
                bytes[size++] = (byte) (0x80 | (point & 0x3F));
            } else if (Character.isSurrogate(c)) {
                bytes[size++] = '?'; // a lone surrogate, which UTF-8 has no form for
            } else {
                bytes[size++] = (byte) (0xE0 | (c >> 12));
                bytes[size++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                bytes[size++] = (byte) (0x80 | (c & 0x3F));
            }
        }
    }

    private void ensure(int more) {
        if (size + more > bytes.length) {
            bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, size + more));
        }
    }
}
