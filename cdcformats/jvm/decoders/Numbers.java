package cdcformats.jvm.decoders;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * The texts Python writes for a double: {@code repr} (what {@code typed_text.render} writes) and msgspec's JSON
 * number. Both use the shortest digits that read back as the same double, the nearest such where there are several
 * (Java 17's {@code Double.toString} does not always, so the digits are found here); they differ only in where they
 * switch to an exponent and how they write it.
 */
public final class Numbers {
    private Numbers() {
    }

    /** Python's {@code repr(value)}: "1.0", "0.0001", "1e-05", "1.5e+16", "nan", "-inf". */
    public static String pythonRepr(double value) {
        if (Double.isNaN(value)) {
            return "nan";
        }
        if (Double.isInfinite(value)) {
            return value > 0 ? "inf" : "-inf";
        }
        return text(value, -4, true);
    }

    /**
     * Java's {@code Double.toString} of a finite double with the shortest digits, as Canal writes a value and Jackson
     * a number ({@code json_message.jackson_float}): plain from 10^-3 up to 10^7, else "1.0E7", "-3.4E38", "1.0E-4".
     */
    public static String javaText(double value) {
        double magnitude = Math.abs(value);
        if (value == 0 || (magnitude >= 1e-3 && magnitude < 1e7)) {
            return pythonRepr(value); // plain there, as repr writes it
        }
        BigDecimal shortest = shortest(magnitude);
        String digits = shortest.unscaledValue().toString();
        int exponent = digits.length() - 1 - shortest.scale();
        return (value < 0 ? "-" : "") + digits.charAt(0) + "." + (digits.length() > 1 ? digits.substring(1) : "0")
            + "E" + exponent;
    }

    /** msgspec.json.encode's text of a finite double: "1.0", "0.00001", "1e-6", "1.5e16". */
    public static String msgspecText(double value) {
        return text(value, -5, false);
    }

    private static String text(double value, int smallestFixed, boolean python) {
        if (value == 0) {
            return (Double.doubleToRawLongBits(value) < 0 ? "-" : "") + "0.0";
        }
        BigDecimal shortest = shortest(Math.abs(value));
        String digits = shortest.unscaledValue().toString();
        // value = 0.digits * 10^(exponent+1) = d.igits * 10^exponent
        int exponent = digits.length() - 1 - shortest.scale();
        StringBuilder out = new StringBuilder(24);
        if (value < 0) {
            out.append('-');
        }
        if (exponent >= smallestFixed && exponent < 16) {
            if (exponent < 0) {
                out.append("0.");
                for (int i = -1; i > exponent; i--) {
                    out.append('0');
                }
                out.append(digits);
            } else if (digits.length() > exponent + 1) {
                out.append(digits, 0, exponent + 1).append('.').append(digits, exponent + 1, digits.length());
            } else {
                out.append(digits);
                for (int i = digits.length(); i <= exponent; i++) {
                    out.append('0');
                }
                out.append(".0");
            }
            return out.toString();
        }
        out.append(digits.charAt(0));
        if (digits.length() > 1) {
            out.append('.').append(digits, 1, digits.length());
        }
        out.append('e');
        if (python) {
            out.append(exponent < 0 ? '-' : '+');
            int magnitude = Math.abs(exponent);
            if (magnitude < 10) {
                out.append('0');
            }
            out.append(magnitude);
        } else {
            out.append(exponent);
        }
        return out.toString();
    }

    /**
     * The shortest decimal that reads back as {@code value} (positive, finite), without trailing zeros; of two as
     * short, the nearer. Java's own text reads back, so the shortest has at most its digits; fewer are tried until
     * none of that many digits reads back.
     */
    static BigDecimal shortest(double value) {
        BigDecimal exact = new BigDecimal(value);
        BigDecimal best = new BigDecimal(Double.toString(value)).stripTrailingZeros();
        for (int precision = best.precision() - 1; precision >= 1; precision--) {
            BigDecimal candidate = readingBack(exact, precision, value);
            if (candidate == null) {
                break;
            }
            best = candidate;
        }
        // Java's text may have the right length but not the nearest digits: the nearest of that length is.
        BigDecimal nearest = readingBack(exact, best.precision(), value);
        return (nearest == null ? best : nearest).stripTrailingZeros();
    }

    /**
     * The decimal of {@code precision} digits nearest to {@code exact} that reads back as {@code value}, or null.
     * Just above a power of two the doubles below are closer together than those above, so the nearest may not
     * read back where its neighbour on the other side does (2^-24: 5.960464477539063e-08).
     */
    private static BigDecimal readingBack(BigDecimal exact, int precision, double value) {
        BigDecimal nearest = exact.round(new MathContext(precision, RoundingMode.HALF_EVEN));
        if (nearest.doubleValue() == value) {
            return nearest;
        }
        RoundingMode away = nearest.compareTo(exact) < 0 ? RoundingMode.CEILING : RoundingMode.FLOOR;
        BigDecimal other = exact.round(new MathContext(precision, away));
        return other.doubleValue() == value ? other : null;
    }
}
