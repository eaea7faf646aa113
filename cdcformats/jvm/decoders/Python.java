package cdcformats.jvm.decoders;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.math.BigInteger;
import java.util.Arrays;
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
            text.codePoints().forEach(point -> escaped(point, quote, out));
            return out.append(quote).toString();
        }
        if (value instanceof Map || value instanceof List) {
            return Json.write(value);
        }
        return value.toString();
    }

    /**
     * One character of a Python string literal quoted with {@code quote}: escaped where Python's {@code repr} escapes
     * it, as a character that {@code str.isprintable} refuses (controls, formats, surrogates, private use,
     * unassigned, separators but the space), told by its Unicode category.
     */
    private static void escaped(int c, char quote, StringBuilder out) {
        if (c == quote || c == '\\') {
            out.append('\\').append((char) c);
        } else if (!isPrintable(c)) {
            appendEscape(c, out);
        } else {
            out.appendCodePoint(c);
        }
    }

    /**
     * Python's {@code str.isprintable} of one character, which {@code repr} writes as it is: all but the control,
     * format, surrogate, private-use and unassigned characters and the separators, the space aside.
     */
    private static boolean isPrintable(int c) {
        switch (Character.getType(c)) {
            case Character.UNASSIGNED:
                return isPrintableSinceUnicode14(c);
            case Character.CONTROL: case Character.FORMAT: case Character.SURROGATE: case Character.PRIVATE_USE:
            case Character.LINE_SEPARATOR: case Character.PARAGRAPH_SEPARATOR:
                return false;
            case Character.SPACE_SEPARATOR:
                return c == ' ';
            default:
                return true;
        }
    }

    // The characters Unicode 14 assigned that str.isprintable accepts, as first and last of each run: Python 3.11
    // knows Unicode 14, Java 17 Unicode 13, which has them unassigned (from unicodedata and Character.getType over
    // every code point; no character printable in Java is unprintable in Python).
    private static final int[] PRINTABLE_SINCE_UNICODE_14 = {
        0x61D, 0x61D, 0x870, 0x88E, 0x898, 0x89F, 0x8B5, 0x8B5, 0x8C8, 0x8D2, 0xC3C, 0xC3C, 0xC5D, 0xC5D,
        0xCDD, 0xCDD, 0x170D, 0x170D, 0x1715, 0x1715, 0x171F, 0x171F, 0x180F, 0x180F, 0x1AC1, 0x1ACE, 0x1B4C, 0x1B4C,
        0x1B7D, 0x1B7E, 0x1DFA, 0x1DFA, 0x20C0, 0x20C0, 0x2C2F, 0x2C2F, 0x2C5F, 0x2C5F, 0x2E53, 0x2E5D,
        0x9FFD, 0x9FFF, 0xA7C0, 0xA7C1, 0xA7D0, 0xA7D1, 0xA7D3, 0xA7D3, 0xA7D5, 0xA7D9, 0xA7F2, 0xA7F4,
        0xFBC2, 0xFBC2, 0xFD40, 0xFD4F, 0xFDCF, 0xFDCF, 0xFDFE, 0xFDFF, 0x10570, 0x1057A, 0x1057C, 0x1058A,
        0x1058C, 0x10592, 0x10594, 0x10595, 0x10597, 0x105A1, 0x105A3, 0x105B1, 0x105B3, 0x105B9, 0x105BB, 0x105BC,
        0x10780, 0x10785, 0x10787, 0x107B0, 0x107B2, 0x107BA, 0x10F70, 0x10F89, 0x11070, 0x11075, 0x110C2, 0x110C2,
        0x116B9, 0x116B9, 0x11740, 0x11746, 0x11AB0, 0x11ABF, 0x12F90, 0x12FF2, 0x16A70, 0x16ABE, 0x16AC0, 0x16AC9,
        0x1AFF0, 0x1AFF3, 0x1AFF5, 0x1AFFB, 0x1AFFD, 0x1AFFE, 0x1B11F, 0x1B122, 0x1CF00, 0x1CF2D, 0x1CF30, 0x1CF46,
        0x1CF50, 0x1CFC3, 0x1D1E9, 0x1D1EA, 0x1DF00, 0x1DF1E, 0x1E290, 0x1E2AE, 0x1E7E0, 0x1E7E6, 0x1E7E8, 0x1E7EB,
        0x1E7ED, 0x1E7EE, 0x1E7F0, 0x1E7FE, 0x1F6DD, 0x1F6DF, 0x1F7F0, 0x1F7F0, 0x1F979, 0x1F979, 0x1F9CC, 0x1F9CC,
        0x1FA7B, 0x1FA7C, 0x1FAA9, 0x1FAAC, 0x1FAB7, 0x1FABA, 0x1FAC3, 0x1FAC5, 0x1FAD7, 0x1FAD9, 0x1FAE0, 0x1FAE7,
        0x1FAF0, 0x1FAF6, 0x2A6DE, 0x2A6DF, 0x2B735, 0x2B738
    };

    private static boolean isPrintableSinceUnicode14(int c) {
        int at = Arrays.binarySearch(PRINTABLE_SINCE_UNICODE_14, c);
        return at >= 0 || (-at - 1) % 2 == 1; // a bound itself, or between a first and its last
    }

    /**
     * A character as Python's {@code repr} escapes it: {@code \\n}, {@code \\r}, {@code \\t}, else its number,
     * {@code \\xNN}, {@code \\uNNNN} or {@code \\UNNNNNNNN}.
     */
    private static void appendEscape(int c, StringBuilder out) {
        switch (c) {
            case '\n': out.append("\\n"); break;
            case '\r': out.append("\\r"); break;
            case '\t': out.append("\\t"); break;
            default: out.append(String.format(c < 0x100 ? "\\x%02x" : c < 0x10000 ? "\\u%04x" : "\\U%08x", c));
        }
    }

    /**
     * {@code errors.excerpt} of a message: its UTF-8 text, each byte that is not UTF-8 as {@code \\xNN} and each
     * control character or line separator as Python's {@code ascii()} writes it, at most {@code limit} code points.
     */
    public static String inputExcerpt(byte[] raw, int limit) {
        StringBuilder out = new StringBuilder();
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
        // enough bytes for more than limit characters: a character takes at most four
        ByteBuffer in = ByteBuffer.wrap(raw, 0, Math.min(raw.length, 4 * limit + 4));
        CharBuffer chars = CharBuffer.allocate(in.remaining() + 1);
        while (out.codePointCount(0, out.length()) <= limit) {
            CoderResult result = decoder.decode(in, chars, true);
            chars.flip();
            chars.codePoints().forEach(point -> appendShown(point, out));
            chars.clear();
            if (!result.isError()) {
                break;
            }
            for (int i = 0; i < result.length(); i++) {
                out.append(String.format("\\x%02x", in.get() & 0xff));
            }
        }
        // cut as Python cuts, counting code points, not UTF-16 units
        return out.codePointCount(0, out.length()) <= limit ? out.toString()
            : out.substring(0, out.offsetByCodePoints(0, limit - 3)) + "...";
    }

    private static void appendShown(int point, StringBuilder out) {
        // errors._breaks_lines: control characters and line separators, the same in every Unicode version
        boolean breaksLines = point < 0x20 || (point >= 0x7f && point <= 0x9f) || point == 0x2028 || point == 0x2029;
        if (breaksLines) {
            appendEscape(point, out);
        } else {
            out.appendCodePoint(point);
        }
    }

    /** Bytes that are not UTF-8, as Python's {@code bytes.decode()} refuses them: its UnicodeDecodeError's text. */
    public static final class Utf8Error extends Exception {
        private static final long serialVersionUID = 1L;

        Utf8Error(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * {@code data[start:end].decode()}: the text of UTF-8 bytes, or a {@link Utf8Error} saying what CPython's decoder
     * says of the first bytes it refuses (its {@code utf8_decode}: the longest start of a sequence that could still be
     * valid is one error, so that the positions and reasons are Python's).
     */
    public static String utf8(byte[] data, int start, int end) throws Utf8Error {
        int at = start;
        while (at < end) {
            int lead = data[at] & 0xff;
            if (lead < 0x80) {
                at++;
                continue;
            }
            int left = end - at;
            int second = left > 1 ? data[at + 1] & 0xff : -1;
            int third = left > 2 ? data[at + 2] & 0xff : -1;
            int fourth = left > 3 ? data[at + 3] & 0xff : -1;
            // 0: the data ends inside the sequence; 1: not a first byte; n: its n-th byte is no continuation
            int problem;
            if (lead < 0xc2) {
                problem = 1; // a continuation byte, or an overlong form of 0000-007F
            } else if (lead < 0xe0) {
                problem = left < 2 ? 0 : !continuation(second) ? 2 : -1;
            } else if (lead < 0xf0) {
                boolean badSecond = second >= 0 && (!continuation(second) || (lead == 0xe0 && second < 0xa0)
                    || (lead == 0xed && second >= 0xa0)); // overlong, or a surrogate
                problem = left < 2 ? 0 : badSecond ? 2 : left < 3 ? 0 : !continuation(third) ? 3 : -1;
            } else if (lead < 0xf5) {
                boolean badSecond = second >= 0 && (!continuation(second) || (lead == 0xf0 && second < 0x90)
                    || (lead == 0xf4 && second >= 0x90)); // overlong, or beyond U+10FFFF
                problem = left < 2 ? 0 : badSecond ? 2 : left < 3 ? 0 : !continuation(third) ? 3
                    : left < 4 ? 0 : !continuation(fourth) ? 4 : -1;
            } else {
                problem = 1;
            }
            if (problem < 0) {
                at += lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
                continue;
            }
            int from = at - start;
            int to = problem == 0 ? end - start : problem == 1 ? from + 1 : from + problem - 1;
            String reason = problem == 0 ? "unexpected end of data" : problem == 1 ? "invalid start byte"
                : "invalid continuation byte";
            throw new Utf8Error(to == from + 1
                ? String.format("'utf-8' codec can't decode byte 0x%02x in position %d: %s", lead, from, reason)
                : String.format("'utf-8' codec can't decode bytes in position %d-%d: %s", from, to - 1, reason));
        }
        return new String(data, start, end - start, StandardCharsets.UTF_8);
    }

    private static boolean continuation(int octet) {
        return octet >= 0x80 && octet < 0xc0;
    }
}
