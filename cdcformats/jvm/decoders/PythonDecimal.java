package cdcformats.jvm.decoders;

import java.math.BigInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Python's {@code str(Decimal(text))}: what is written of a decimal given as text, which Python reads with
 * {@code Decimal(text)} (a decimal member of an event row, a {@code $decimal} of nested text). Text that Python does
 * not take for a decimal gives null. Not {@link java.math.BigDecimal}, whose scale has 32 bits and whose parser refuses
 * an exponent beyond them, where a Decimal's exponent has nearly 64 ({@code 1.5E+2147483648}).
 */
public final class PythonDecimal {
    private PythonDecimal() {
    }

    // The decimal module's numeric strings, in ASCII (asciiForm).
    private static final String DIGITS = "\\d+";
    private static final Pattern NUMBER = Pattern.compile("([+-]?)(?:(" + DIGITS + ")?(?:\\.(" + DIGITS + ")?)?)"
        + "(?:[eE]([+-]?" + DIGITS + "))?");
    // libmpdec's MPD_MAX_EMAX and MPD_MIN_ETINY on a 64-bit machine.
    private static final BigInteger MOST_ADJUSTED_EXPONENT = BigInteger.valueOf(999_999_999_999_999_999L);
    private static final BigInteger LEAST_EXPONENT = BigInteger.valueOf(-1_999_999_999_999_999_997L);
    // Decimal.__str__ writes a decimal in scientific notation where the digits before its point would be this or fewer.
    private static final int SCIENTIFIC_BELOW = -6;
    private static final Pattern SPECIAL = Pattern.compile("([+-]?)(?:(inf|infinity)|(s?nan)(" + DIGITS + ")?)",
        Pattern.CASE_INSENSITIVE);

    public static String str(String text) {
        int places = plainPlaces(text);
        if (places >= 0 && significantDigits(text) - places > SCIENTIFIC_BELOW) {
            return text; // as str writes it
        }
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
        Finite finite = finite(stripped);
        return finite == null ? null : finite.sign + scientific(finite.coefficient, finite.exponent);
    }

    /**
     * Python's {@code format(Decimal(text), "f")} where the decimal is finite and its exponent is between
     * {@code -mostPlaces} and 0 (as Java's {@code BigDecimal.toPlainString} writes it too), else null.
     */
    public static String plainDigits(String text, int mostPlaces) {
        int plainPlaces = plainPlaces(text);
        if (plainPlaces >= 0 && plainPlaces <= mostPlaces) {
            return text; // as format writes it
        }
        String stripped = asciiForm(text);
        Finite finite = stripped == null ? null : finite(stripped); // NaN and the infinities are not finite
        if (finite == null || finite.exponent.signum() > 0
                || finite.exponent.compareTo(BigInteger.valueOf(-mostPlaces)) < 0) {
            return null;
        }
        int places = -finite.exponent.intValueExact();
        String digits = "0".repeat(Math.max(0, places + 1 - finite.coefficient.length())) + finite.coefficient;
        int point = digits.length() - places;
        return finite.sign + digits.substring(0, point) + (places == 0 ? "" : "." + digits.substring(point));
    }

    /**
     * How many digits follow the point of a decimal in plain digits as Python writes one (a minus sign or none, no
     * leading zero, digits after a point, no exponent), or -1 for other text: most decimals' text, whose digits and
     * exponent are read here without the general path.
     */
    private static int plainPlaces(String text) {
        int start = text.startsWith("-") ? 1 : 0;
        int point = -1;
        for (int at = start; at < text.length(); at++) {
            char c = text.charAt(at);
            if (c == '.' && point < 0) {
                point = at;
            } else if (c < '0' || c > '9') {
                return -1;
            }
        }
        int end = point < 0 ? text.length() : point;
        if (end == start || end - start > 1 && text.charAt(start) == '0' || point == text.length() - 1) {
            return -1;
        }
        return point < 0 ? 0 : text.length() - point - 1;
    }

    /** The digits of a plain decimal's coefficient, without its leading zeros (a zero has one). */
    private static int significantDigits(String text) {
        int digits = 0;
        for (int at = 0; at < text.length(); at++) {
            char c = text.charAt(at);
            if (c >= '0' && c <= '9' && (digits > 0 || c != '0')) {
                digits++;
            }
        }
        return Math.max(digits, 1);
    }

    /** A finite decimal: its sign, its coefficient's digits without leading zeros, and its exponent. */
    private record Finite(String sign, String coefficient, BigInteger exponent) {
    }

    /**
     * The finite decimal a numeric string spells, or null where it spells none or one beyond libmpdec's limits (on a
     * 64-bit machine), where {@code Decimal(text)} fails: an adjusted exponent above MPD_MAX_EMAX, an exponent below
     * MPD_MIN_ETINY.
     */
    private static Finite finite(String stripped) {
        Matcher number = NUMBER.matcher(stripped);
        if (!number.matches() || number.group(2) == null && number.group(3) == null) {
            return null;
        }
        String whole = number.group(2) == null ? "" : number.group(2);
        String fraction = number.group(3) == null ? "" : number.group(3);
        String coefficient = (whole + fraction).replaceFirst("^0+(?=.)", "");
        BigInteger exponent = (number.group(4) == null ? BigInteger.ZERO
            : new BigInteger(number.group(4))).subtract(BigInteger.valueOf(fraction.length()));
        BigInteger adjusted = exponent.add(BigInteger.valueOf(coefficient.length() - 1));
        if (adjusted.compareTo(MOST_ADJUSTED_EXPONENT) > 0 || exponent.compareTo(LEAST_EXPONENT) < 0) {
            return null;
        }
        return new Finite(number.group(1).equals("-") ? "-" : "", coefficient, exponent);
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
        boolean plain = exponent.signum() <= 0 && leftDigits.compareTo(BigInteger.valueOf(SCIENTIFIC_BELOW)) > 0;
        BigInteger dotPlace = plain ? leftDigits : BigInteger.ONE;
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
