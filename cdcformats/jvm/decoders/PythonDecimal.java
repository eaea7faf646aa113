package cdcformats.jvm.decoders;

import java.math.BigInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Python's {@code str(Decimal(text))}: what is written of a decimal given as text, which Python reads with
 * {@code Decimal(text)} (a decimal member of an event row, a {@code $decimal} of nested text). Text that Python does
 * not take for a decimal gives null.
 */
public final class PythonDecimal {
    private PythonDecimal() {
    }

    // The decimal module's numeric strings, in ASCII (asciiForm).
    private static final String DIGITS = "\\d+";
    private static final Pattern NUMBER = Pattern.compile("([+-]?)(?:(" + DIGITS + ")?(?:\\.(" + DIGITS + ")?)?)"
        + "(?:[eE]([+-]?" + DIGITS + "))?");
    private static final Pattern SPECIAL = Pattern.compile("([+-]?)(?:(inf|infinity)|(s?nan)(" + DIGITS + ")?)",
        Pattern.CASE_INSENSITIVE);

    public static String str(String text) {
        String stripped = asciiForm(text);
        if (stripped == null) {
            return null;
        }
        Matcher special = SPECIAL.matcher(stripped);
        if (special.matches()) {
            String sign = special.group(1).equals("-") ? "-" : "";
            if (special.group(2) != null) {
                return sign + "Infinity";
            }
            String payload = special.group(4) == null ? "" : special.group(4).replaceFirst("^0+", "");
            return sign + (special.group(3).length() == 4 ? "sNaN" : "NaN") + payload;
        }
        Matcher number = NUMBER.matcher(stripped);
        if (!number.matches() || number.group(2) == null && number.group(3) == null) {
            return null;
        }
        String whole = number.group(2) == null ? "" : number.group(2);
        String fraction = number.group(3) == null ? "" : number.group(3);
        String coefficient = (whole + fraction).replaceFirst("^0+(?=.)", "");
        BigInteger exponent = (number.group(4) == null ? BigInteger.ZERO
            : new BigInteger(number.group(4))).subtract(BigInteger.valueOf(fraction.length()));
        return (number.group(1).equals("-") ? "-" : "") + scientific(coefficient, exponent);
    }

    /**
     * The text CPython's decimal module parses ({@code numeric_as_ascii}): without the whitespace around it (as
     * {@code str.isspace} finds it) and every underscore, each decimal digit of any script as its ASCII digit; null
     * where another character beyond ASCII is left.
     */
    private static String asciiForm(String text) {
        int start = 0;
        int end = text.length();
        while (start < end && isSpace(text.codePointAt(start))) {
            start += Character.charCount(text.codePointAt(start));
        }
        while (end > start && isSpace(text.codePointBefore(end))) {
            end -= Character.charCount(text.codePointBefore(end));
        }
        StringBuilder ascii = new StringBuilder(end - start);
        for (int at = start; at < end; ) {
            int point = text.codePointAt(at);
            at += Character.charCount(point);
            if (Character.getType(point) == Character.DECIMAL_DIGIT_NUMBER) {
                ascii.append((char) ('0' + Character.digit(point, 10)));
            } else if (point >= 0x80) {
                return null;
            } else if (point != '_') {
                ascii.append((char) point);
            }
        }
        return ascii.toString();
    }

    /** Python's {@code str.isspace} of one character. */
    private static boolean isSpace(int point) {
        return Character.isWhitespace(point) || Character.isSpaceChar(point) || point == 0x85;
    }

    /** {@code Decimal.__str__} of a finite number: plain where its exponent is at most 0 and it is not tiny. */
    private static String scientific(String coefficient, BigInteger exponent) {
        BigInteger leftDigits = exponent.add(BigInteger.valueOf(coefficient.length()));
        BigInteger dotPlace = exponent.signum() <= 0 && leftDigits.compareTo(BigInteger.valueOf(-6)) > 0
            ? leftDigits : BigInteger.ONE;
        int dot = dotPlace.intValueExact();
        String integral;
        String fractional;
        if (dot <= 0) {
            integral = "0";
            fractional = "." + "0".repeat(-dot) + coefficient;
        } else if (dot >= coefficient.length()) {
            integral = coefficient + "0".repeat(dot - coefficient.length());
            fractional = "";
        } else {
            integral = coefficient.substring(0, dot);
            fractional = "." + coefficient.substring(dot);
        }
        BigInteger shown = leftDigits.subtract(dotPlace);
        String suffix = leftDigits.equals(dotPlace) ? "" : "E" + (shown.signum() >= 0 ? "+" : "") + shown;
        return integral + fractional + suffix;
    }
}
