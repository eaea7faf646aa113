package cdcformats.jvm.decoders;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON in and out for the JVM decoders, with exactly the rules of the Python codecs' parser (msgspec, in
 * {@code _kit/json_message.py}), so that both accept the same messages and read them as the same values.
 *
 * <p>Parsed values: an object is a {@code LinkedHashMap} (a repeated name keeps its first place and its last value,
 * as a Python dict does), an array an {@code ArrayList}, a string a {@code String}, an integer a {@code Long} or, beyond
 * 64 bits, a {@code BigInteger}, any other number a {@code Double}, {@code true}/{@code false} a {@code Boolean}, and
 * {@code null} the {@link #NULL} marker, so that a field set to null is told from a field that is absent. The grammar
 * is RFC 8259's with nothing added: no NaN, no leading zeros or plus signs, no comments, no byte order mark; strings
 * must be valid UTF-8 without lone surrogates; a number beyond a double is refused, one below its smallest is zero.
 */
public final class Json {
    /** JSON's null. */
    public static final Object NULL = new Object() {
        @Override
        public String toString() {
            return "null";
        }
    };

    /** Deeper nesting is refused (Python refuses it when its stack runs out, at about this depth). */
    static final int MAX_DEPTH = 900;
    // JSON's escapes of one letter after the backslash, and the characters they stand for: all are read, and all but
    // the last are written (a solidus is written as it is).
    private static final String ESCAPE_LETTERS = "\"\\bfnrt/";
    private static final String ESCAPED = "\"\\\b\f\n\r\t/";
    private static final int WRITTEN_ESCAPES = ESCAPED.length() - 1;

    // The keys last read, by a hash of their bytes: one slot each, shared by every parser (see key()).
    private static final String[] KEYS = new String[4096];
    private static final int MOST_KEY_BYTES = 64;

    private final byte[] text;
    private int at;
    private int depth;

    private Json(byte[] text) {
        this.text = text;
    }

    /** The value of one JSON document. */
    public static Object parse(byte[] text) throws DecodeException {
        Json parser = new Json(text);
        parser.skipSpace();
        Object value = parser.value();
        parser.skipSpace();
        if (parser.at < text.length) {
            throw parser.malformed("trailing characters");
        }
        return value;
    }

    private DecodeException truncated() {
        return new DecodeException("not valid JSON: Input data was truncated", null);
    }

    private DecodeException malformed(String what) {
        return new DecodeException("not valid JSON: JSON is malformed: " + what + " (byte " + at + ")", null);
    }

    private void skipSpace() {
        while (at < text.length) {
            byte b = text[at];
            if (b != ' ' && b != '\t' && b != '\n' && b != '\r') {
                return;
            }
            at++;
        }
    }

    private Object value() throws DecodeException {
        if (at >= text.length) {
            throw truncated();
        }
        byte b = text[at];
        switch (b) {
            case '{':
                return object();
            case '[':
                return array();
            case '"':
                return string();
            case 't':
                return literal("true", Boolean.TRUE);
            case 'f':
                return literal("false", Boolean.FALSE);
            case 'n':
                return literal("null", NULL);
            default:
                if (b == '-' || (b >= '0' && b <= '9')) {
                    return number();
                }
                throw malformed("invalid character");
        }
    }

    private Object literal(String word, Object value) throws DecodeException {
        int length = word.length();
        if (at + length > text.length) {
            throw truncated();
        }
        for (int i = 0; i < length; i++) {
            if (text[at + i] != word.charAt(i)) {
                throw malformed("invalid character");
            }
        }
        at += length;
        return value;
    }

    private void enter() throws DecodeException {
        if (++depth > MAX_DEPTH) {
            throw new DecodeException("not valid JSON: nested too deeply", null);
        }
    }

    private Map<String, Object> object() throws DecodeException {
        Map<String, Object> fields = new LinkedHashMap<>();
        if (opened('}')) {
            return fields;
        }
        do {
            skipSpace();
            if (at >= text.length) {
                throw truncated();
            }
            if (text[at] != '"') {
                throw malformed("object keys must be strings");
            }
            String name = key();
            skipSpace();
            expect(':');
            skipSpace();
            fields.put(name, value());
        } while (!closed('}'));
        return fields;
    }

    private List<Object> array() throws DecodeException {
        List<Object> items = new ArrayList<>();
        if (opened(']')) {
            return items;
        }
        do {
            skipSpace();
            items.add(value());
        } while (!closed(']'));
        return items;
    }

    /** At an object's or array's first byte: enters it, and whether {@code close} ends it at once (then left). */
    private boolean opened(char close) throws DecodeException {
        enter();
        at++; // { or [
        skipSpace();
        if (at < text.length && text[at] == close) {
            at++;
            depth--;
            return true;
        }
        return false;
    }

    /** After a member: whether {@code close} ends the object or array (then left), else a comma goes on to the next. */
    private boolean closed(char close) throws DecodeException {
        skipSpace();
        if (at >= text.length) {
            throw truncated();
        }
        byte b = text[at++];
        if (b == close) {
            depth--;
            return true;
        }
        if (b != ',') {
            at--;
            throw malformed("expected ',' or '" + close + "'");
        }
        return false;
    }

    private void expect(char c) throws DecodeException {
        if (at >= text.length) {
            throw truncated();
        }
        if (text[at] != c) {
            throw malformed("expected '" + c + "'");
        }
        at++;
    }

    private Object number() throws DecodeException {
        int start = at;
        if (text[at] == '-') {
            at++;
        }
        if (at >= text.length) {
            throw malformed("invalid number");
        }
        if (text[at] == '0') {
            at++;
        } else if (text[at] >= '1' && text[at] <= '9') {
            while (at < text.length && isDigit(text[at])) {
                at++;
            }
        } else {
            throw malformed("invalid number");
        }
        boolean integer = true;
        if (at < text.length && text[at] == '.') {
            integer = false;
            at++;
            digits();
        }
        if (at < text.length && (text[at] == 'e' || text[at] == 'E')) {
            integer = false;
            at++;
            if (at < text.length && (text[at] == '+' || text[at] == '-')) {
                at++;
            }
            digits();
        }
        if (at < text.length && isDigit(text[at])) {
            throw malformed("invalid number"); // a leading zero
        }
        String number = new String(text, start, at - start, StandardCharsets.ISO_8859_1);
        if (integer) {
            if (at - start <= 18) {
                return Long.parseLong(number);
            }
            BigInteger big = new BigInteger(number);
            return big.bitLength() < 64 ? (Object) big.longValue() : big;
        }
        double value = Double.parseDouble(number);
        if (Double.isInfinite(value)) {
            throw new DecodeException("not valid JSON: number out of range", null);
        }
        return value;
    }

    private void digits() throws DecodeException {
        int start = at;
        while (at < text.length && isDigit(text[at])) {
            at++;
        }
        if (at == start) {
            throw malformed("invalid number");
        }
    }

    private static boolean isDigit(byte b) {
        return b >= '0' && b <= '9';
    }

    /**
     * An object's key: short ASCII keys without escapes come from {@link #KEYS}, so that a stream's few keys are the
     * same strings in every message and each hashes once (every key goes into a map, and is looked up in others).
     */
    private String key() throws DecodeException {
        int start = at + 1;
        int hash = 0;
        for (int end = start; end < text.length && end - start <= MOST_KEY_BYTES; end++) {
            byte b = text[end];
            if (b == '"') {
                int slot = (hash ^ (hash >>> 16)) & (KEYS.length - 1);
                String cached = KEYS[slot];
                if (cached == null || !sameBytes(cached, start, end)) {
                    cached = new String(text, start, end - start, StandardCharsets.ISO_8859_1);
                    KEYS[slot] = cached; // a race only loses a key to another: each is a whole String
                }
                at = end + 1;
                return cached;
            }
            if (b == '\\' || b < 0x20) { // an escape, a control character or a byte of a multi-byte character
                break;
            }
            hash = 31 * hash + b;
        }
        return string();
    }

    private boolean sameBytes(String key, int start, int end) {
        if (key.length() != end - start) {
            return false;
        }
        for (int index = 0; index < key.length(); index++) {
            if (key.charAt(index) != text[start + index]) {
                return false;
            }
        }
        return true;
    }

    private String string() throws DecodeException {
        at++; // "
        int start = at;
        // The common case: ASCII without escapes.
        while (at < text.length) {
            byte b = text[at];
            if (b == '"') {
                String value = new String(text, start, at - start, StandardCharsets.ISO_8859_1);
                at++;
                return value;
            }
            if (b == '\\' || b < 0x20) { // also every byte of a multi-byte character (negative)
                break;
            }
            at++;
        }
        StringBuilder value = new StringBuilder(at - start + 16);
        value.append(new String(text, start, at - start, StandardCharsets.ISO_8859_1));
        while (true) {
            if (at >= text.length) {
                throw truncated();
            }
            int b = text[at] & 0xff;
            if (b == '"') {
                at++;
                return value.toString();
            }
            if (b == '\\') {
                at++;
                escape(value);
            } else if (b < 0x20) {
                throw malformed("invalid character");
            } else if (b < 0x80) {
                value.append((char) b);
                at++;
            } else {
                value.appendCodePoint(utf8());
            }
        }
    }

    private void escape(StringBuilder value) throws DecodeException {
        if (at >= text.length) {
            throw truncated();
        }
        byte b = text[at++];
        int letter = ESCAPE_LETTERS.indexOf(b);
        if (letter >= 0) {
            value.append(ESCAPED.charAt(letter));
            return;
        }
        if (b != 'u') {
            at--;
            throw malformed("invalid escape character in string");
        }
        int unit = hex4();
        if (unit >= 0xD800 && unit <= 0xDBFF) {
            if (at + 6 > text.length) {
                throw truncated();
            }
            if (text[at] != '\\' || text[at + 1] != 'u') {
                throw malformed("invalid utf-16 surrogate pair");
            }
            at += 2;
            int low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) {
                throw malformed("invalid utf-16 surrogate pair");
            }
            value.append((char) unit).append((char) low);
        } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
            throw malformed("invalid utf-16 surrogate pair");
        } else {
            value.append((char) unit);
        }
    }

    private int hex4() throws DecodeException {
        if (at + 4 > text.length) {
            throw truncated();
        }
        int unit = 0;
        for (int i = 0; i < 4; i++) {
            int digit = Character.digit(text[at + i], 16);
            if (digit < 0) {
                throw malformed("invalid character in unicode escape");
            }
            unit = unit * 16 + digit;
        }
        at += 4;
        return unit;
    }

    /** One UTF-8 encoded character of two to four bytes, checked as Python's strict decoder checks it. */
    private int utf8() throws DecodeException {
        int first = text[at] & 0xff;
        int length;
        int codePoint;
        int min;
        if (first >= 0xC2 && first <= 0xDF) {
            length = 2;
            codePoint = first & 0x1f;
            min = 0x80;
        } else if (first >= 0xE0 && first <= 0xEF) {
            length = 3;
            codePoint = first & 0x0f;
            min = 0x800;
        } else if (first >= 0xF0 && first <= 0xF4) {
            length = 4;
            codePoint = first & 0x07;
            min = 0x10000;
        } else {
            throw invalidUtf8();
        }
        if (at + length > text.length) {
            throw invalidUtf8();
        }
        for (int i = 1; i < length; i++) {
            int next = text[at + i] & 0xff;
            if ((next & 0xc0) != 0x80) {
                throw invalidUtf8();
            }
            codePoint = (codePoint << 6) | (next & 0x3f);
        }
        if (codePoint < min || codePoint > 0x10FFFF || (codePoint >= 0xD800 && codePoint <= 0xDFFF)) {
            throw invalidUtf8();
        }
        at += length;
        return codePoint;
    }

    private DecodeException invalidUtf8() {
        return new DecodeException("not valid JSON: invalid UTF-8 at byte " + at, null);
    }

    // -- writing, as msgspec writes ---------------------------------------------------------------------------------

    /** The JSON text of a parsed value, byte for byte as msgspec.json.encode writes it (compact, non-ASCII as is). */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    private static void write(Object value, StringBuilder out) {
        if (value instanceof String) {
            writeString((String) value, out);
        } else if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> field : ((Map<?, ?>) value).entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                writeString((String) field.getKey(), out);
                out.append(':');
                write(field.getValue(), out);
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
                write(item, out);
            }
            out.append(']');
        } else if (value instanceof Double) {
            out.append(Numbers.msgspecText((Double) value));
        } else {
            out.append(value); // Long, BigInteger, Boolean, NULL
        }
    }

    static void writeString(String value, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            int escape = ESCAPED.indexOf(c);
            if (escape >= 0 && escape < WRITTEN_ESCAPES) {
                out.append('\\').append(ESCAPE_LETTERS.charAt(escape));
            } else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        out.append('"');
    }

    /** JSON's null or an absent field: both are None to Python's {@code dict.get}, which the codecs read with. */
    public static boolean isNull(Object value) {
        return value == null || value == NULL;
    }

    /** How a parsed value is called in an error message, as {@code json_message.json_type} calls it. */
    public static String typeName(Object value) {
        if (value instanceof Map) {
            return "an object";
        }
        if (value instanceof List) {
            return "an array";
        }
        if (value instanceof String) {
            return "a string";
        }
        if (value instanceof Boolean) {
            return "a boolean";
        }
        if (isNull(value)) {
            return "null";
        }
        return "a number";
    }
}
