package cdcformats.jvm.decoders;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.avro.Schema;

/**
 * An Avro datum read from its writer schema as Python's codecs read one ({@code fastavro.schemaless_reader}), value
 * for value and error for error, so that a JVM decoder refuses the same bytes with the same reason: integers are
 * zig-zag varints of any length (an {@code int} is read as a {@code long}); a union's branch and an enum's symbol are
 * picked as Python indexes a list (-1 is the last); a block count below zero is followed by the block's size; text is
 * UTF-8 as Python decodes it.
 *
 * <p>Values: a record or map is a {@code LinkedHashMap} of its fields or entries, an array an {@code ArrayList}, text
 * a {@code String}, bytes and fixed a {@code byte[]}, {@code int}/{@code long} a {@code Long}, {@code float} (the
 * double of the single) and {@code double} a {@code Double}, null {@code null}. fastavro's logical types are read as
 * {@code _kit/avro_records.value_in} then takes them: {@code date} the days and {@code time-millis} /
 * {@code time-micros} the milliseconds (Longs); {@code timestamp-*} and {@code local-timestamp-*} the milliseconds,
 * or the microseconds where the moment has a part of a millisecond; {@code decimal} a {@link TypedText.DecimalText}
 * rounded to the schema's precision; {@code uuid} a {@link Uuid}, which no change-event value is.
 */
final class AvroDatums {
    private static final long MICROS_PER_DAY = 86_400_000_000L;
    private static final long DAYS_SHIFT = 719_163; // the proleptic Gregorian ordinal of 1970-01-01, less one
    private static final long LAST_ORDINAL = 3_652_059; // 9999-12-31
    private static final long FIRST_MICROS = -62_135_596_800_000_000L; // 0001-01-01T00:00:00
    private static final long LAST_MICROS = 253_402_300_799_999_999L; // 9999-12-31T23:59:59.999999

    /** A UUID read from a string of logical type {@code uuid}: {@code value_in} has no change-event form for it. */
    record Uuid(String text) {
    }

    /** What fastavro raises on bytes that do not read: the Python exception's type and its text. */
    static final class Unreadable extends Exception {
        private static final long serialVersionUID = 1L;

        Unreadable(String pythonType, String message) {
            super(pythonType + ": " + message, null, false, false);
        }
    }

    private final byte[] data;
    private int at;

    private AvroDatums(byte[] data, int from) {
        this.data = data;
        this.at = from;
    }

    /** The datum of {@code schema} that {@code data} holds from {@code from}, and where it ends. */
    static Object read(Schema schema, byte[] data, int from, int[] end) throws Unreadable {
        AvroDatums reading = new AvroDatums(data, from);
        Object datum = reading.datum(schema);
        end[0] = reading.at;
        return datum;
    }

    private Object datum(Schema schema) throws Unreadable {
        switch (schema.getType()) {
            case NULL:
                return null;
            case BOOLEAN:
                if (at >= data.length) {
                    throw new Unreadable("EOFError", "cannot read boolean from <_io.BytesIO object>");
                }
                return data[at++] != 0;
            case INT:
            case LONG:
                return logical(schema, readLong());
            case FLOAT:
                if (data.length - at < 4) {
                    throw new Unreadable("EOFError", "cannot read float from <_io.BytesIO object>");
                }
                at += 4;
                return (double) Float.intBitsToFloat((int) littleEndian(at - 4, 4));
            case DOUBLE:
                if (data.length - at < 8) {
                    throw new Unreadable("EOFError", "cannot read double from <_io.BytesIO object>");
                }
                at += 8;
                return Double.longBitsToDouble(littleEndian(at - 8, 8));
            case STRING: {
                String text = text(readLong());
                return "uuid".equals(schema.getProp("logicalType")) ? uuid(text) : text;
            }
            case BYTES:
                return decimalOr(schema, readBytes(readLong()));
            case FIXED:
                return decimalOr(schema, readBytes(schema.getFixedSize()));
            case ENUM:
                return pythonIndex(schema.getEnumSymbols(), readLong());
            case UNION:
                return datum(pythonIndex(schema.getTypes(), readLong()));
            case ARRAY: {
                List<Object> items = new ArrayList<>();
                for (long count = blockCount(); count != 0; count = blockCount()) {
                    for (long item = 0; item < count; item++) {
                        items.add(datum(schema.getElementType()));
                    }
                }
                return items;
            }
            case MAP: {
                Map<String, Object> entries = new LinkedHashMap<>();
                for (long count = blockCount(); count != 0; count = blockCount()) {
                    for (long entry = 0; entry < count; entry++) {
                        String key = text(readLong());
                        entries.put(key, datum(schema.getValueType()));
                    }
                }
                return entries;
            }
            default: { // RECORD
                Map<String, Object> fields = new LinkedHashMap<>();
                for (Schema.Field field : schema.getFields()) {
                    fields.put(field.name(), datum(field.schema()));
                }
                return fields;
            }
        }
    }

    private long littleEndian(int from, int length) {
        long bits = 0;
        for (int i = length - 1; i >= 0; i--) {
            bits = (bits << 8) | (data[from + i] & 0xff);
        }
        return bits;
    }

    /** A zig-zag varint, its bits past the 64th wrapping as the C reader's shifts do. */
    private long readLong() throws Unreadable {
        if (at >= data.length) {
            throw new Unreadable("EOFError", "");
        }
        int b = data[at++] & 0xff;
        long n = b & 0x7f;
        int shift = 7;
        while ((b & 0x80) != 0) {
            if (at >= data.length) {
                throw new Unreadable("IndexError", "string index out of range");
            }
            b = data[at++] & 0xff;
            n |= (long) (b & 0x7f) << shift; // Java masks the shift to 6 bits, as x86 does fastavro's
            shift += 7;
        }
        return (n >>> 1) ^ -(n & 1);
    }

    /** A block's count, its size passed over where the count is negative. */
    private long blockCount() throws Unreadable {
        long count = readLong();
        if (count < 0) {
            readLong();
            return -count;
        }
        return count;
    }

    /** {@code size} bytes, as {@code stream.read(size)} gives them (all that is left for a negative size). */
    private byte[] readBytes(long size) throws Unreadable {
        int from = skip(size);
        return java.util.Arrays.copyOfRange(data, from, at);
    }

    /** Where {@code size} bytes start, passed over; refused as {@code stream.read(size)} gives fewer. */
    private int skip(long size) throws Unreadable {
        int left = data.length - at;
        if (size < 0 || size > left) {
            throw new Unreadable("EOFError", "Expected " + size + " bytes, read " + left);
        }
        at += (int) size;
        return at - (int) size;
    }

    /** {@code size} bytes of UTF-8 text, read in place. */
    private String text(long size) throws Unreadable {
        int from = skip(size);
        return text(data, from, at);
    }

    /** {@code items[index]} as Python indexes a list. */
    private static <T> T pythonIndex(List<T> items, long index) throws Unreadable {
        long at = index < 0 ? index + items.size() : index;
        if (at < 0 || at >= items.size()) {
            throw new Unreadable("IndexError", "list index out of range");
        }
        return items.get((int) at);
    }

    // -- fastavro's logical types, as value_in takes them -------------------------------------------------------------

    private static Object logical(Schema schema, long value) throws Unreadable {
        String logicalType = schema.getProp("logicalType");
        if (logicalType == null) {
            return value;
        }
        boolean isLong = schema.getType() == Schema.Type.LONG;
        switch ((isLong ? "long-" : "int-") + logicalType) {
            case "long-timestamp-millis":
            case "long-local-timestamp-millis":
                return moment(Math.floorDiv(value, 86_400_000L), value, 1000);
            case "long-timestamp-micros":
            case "long-local-timestamp-micros":
                return moment(Math.floorDiv(value, MICROS_PER_DAY), value, 1);
            case "int-date":
                return date(value);
            case "int-time-millis":
                return timeOfDay(value, 1000);
            case "long-time-micros":
                return timeOfDay(value, 1);
            default:
                return value;
        }
    }

    /**
     * {@code epoch + timedelta(microseconds=count * unit)}, then {@code value_in}: the milliseconds, or the
     * microseconds where the moment has a part of a millisecond. The errors are Python's for a count of days beyond a
     * C int or a timedelta, and for a moment beyond the years 1 to 9999.
     */
    private static long moment(long days, long count, long unit) throws Unreadable {
        if (days < Integer.MIN_VALUE || days > Integer.MAX_VALUE) {
            throw new Unreadable("OverflowError", "Python int too large to convert to C int");
        }
        if (Math.abs(days) > 999_999_999) {
            throw new Unreadable("OverflowError", "days=" + days + "; must have magnitude <= 999999999");
        }
        if (days < Math.floorDiv(FIRST_MICROS, MICROS_PER_DAY) || days > Math.floorDiv(LAST_MICROS, MICROS_PER_DAY)) {
            throw new Unreadable("OverflowError", "date value out of range"); // beyond a long of microseconds too
        }
        long micros = count * unit;
        if (micros < FIRST_MICROS || micros > LAST_MICROS) {
            throw new Unreadable("OverflowError", "date value out of range");
        }
        return Math.floorMod(micros, 1000L) != 0 ? micros : Math.floorDiv(micros, 1000L);
    }

    /**
     * {@code date.fromordinal(days + DAYS_SHIFT)}, then the days again ({@code value_in}): refused as a C long, then as
     * a C int, then as a date of the years 1 to 9999 (its year named as the proleptic Gregorian calendar has it).
     */
    private static long date(long days) throws Unreadable {
        if (days > Long.MAX_VALUE - DAYS_SHIFT) {
            throw new Unreadable("OverflowError", "Python int too large to convert to C long");
        }
        long ordinal = days + DAYS_SHIFT;
        cInt(ordinal);
        if (ordinal < 1) {
            throw new Unreadable("ValueError", "ordinal must be >= 1");
        }
        if (ordinal > LAST_ORDINAL) {
            long n = ordinal - 1; // CPython's ord_to_ymd, as far as the year
            long year = n / 146_097 * 400 + 1;
            n %= 146_097;
            long hundreds = n / 36_524;
            n %= 36_524;
            long fours = n / 1461;
            long ones = n % 1461 / 365;
            year += hundreds * 100 + fours * 4 + ones - (ones == 4 || hundreds == 4 ? 1 : 0);
            throw new Unreadable("ValueError", "year " + year + " is out of range");
        }
        return days;
    }

    /** That a number fits the C int that Python converts it to, as Python refuses one that does not. */
    private static void cInt(long number) throws Unreadable {
        if (number > Integer.MAX_VALUE) {
            throw new Unreadable("OverflowError", "signed integer is greater than maximum");
        }
        if (number < Integer.MIN_VALUE) {
            throw new Unreadable("OverflowError", "signed integer is less than minimum");
        }
    }

    /**
     * fastavro's {@code time(h, m, s, sub)} of a count of milliseconds ({@code unit} 1000) or microseconds (1): the
     * hour by float division truncated, the rest modulo; then the milliseconds of that time ({@code value_in}).
     */
    private static long timeOfDay(long count, long unit) throws Unreadable {
        double perHour = 3_600_000_000.0 / unit;
        long hour = (long) (count / perHour);
        long minute = Math.floorMod((long) (count / (perHour / 60)), 60L);
        long second = Math.floorMod((long) (count / (perHour / 3600)), 60L);
        long micro = Math.floorMod(count, 1_000_000L / unit) * unit;
        cInt(hour);
        if (hour < 0 || hour > 23) {
            throw new Unreadable("ValueError", "hour must be in 0..23");
        }
        return hour * 3_600_000 + minute * 60_000 + second * 1000 + micro / 1000;
    }

    /** {@code read_decimal}: the unscaled integer rounded to the schema's precision, then scaled. */
    private static Object decimalOr(Schema schema, byte[] bytes) throws Unreadable {
        if (!"decimal".equals(schema.getProp("logicalType"))) {
            return bytes;
        }
        Object precision = schema.getObjectProp("precision");
        if (precision == null) {
            throw new Unreadable("KeyError", "'precision'");
        }
        Object scale = schema.getObjectProp("scale");
        if (!(precision instanceof Number) || !(scale == null || scale instanceof Number)) {
            return bytes; // no decimal to fastavro, which refuses such a schema as it parses it
        }
        int digits = ((Number) precision).intValue();
        if (digits < 1) {
            throw new Unreadable("ValueError", "valid range for prec is [1, MAX_PREC]");
        }
        BigInteger unscaled = bytes.length == 0 ? BigInteger.ZERO : new BigInteger(bytes);
        BigDecimal value = new BigDecimal(unscaled).round(new MathContext(digits, RoundingMode.HALF_EVEN))
            .scaleByPowerOfTen(-(scale == null ? 0 : ((Number) scale).intValue()));
        return new TypedText.DecimalText(value.toString());
    }

    /**
     * {@code uuid.UUID(text)}: braces, hyphens and the prefixes {@code urn:} and {@code uuid:} taken away, 32
     * hexadecimal digits as Python's {@code int(text, 16)} reads them.
     */
    private static Uuid uuid(String text) throws Unreadable {
        String hex = text.replace("urn:", "").replace("uuid:", "");
        int start = 0;
        int end = hex.length();
        while (start < end && (hex.charAt(start) == '{' || hex.charAt(start) == '}')) {
            start++;
        }
        while (end > start && (hex.charAt(end - 1) == '{' || hex.charAt(end - 1) == '}')) {
            end--;
        }
        hex = hex.substring(start, end).replace("-", "");
        if (hex.codePointCount(0, hex.length()) != 32) {
            throw new Unreadable("ValueError", "badly formed hexadecimal UUID string");
        }
        String digits = hex.strip(); // int(hex, 16): a sign, a 0x prefix and _ between digits allowed
        int from = digits.startsWith("+") || digits.startsWith("-") ? 1 : 0;
        if (digits.regionMatches(true, from, "0x", 0, 2)) {
            from += digits.startsWith("_", from + 2) ? 3 : 2;
        }
        if (!digits.substring(from).matches("[0-9a-fA-F]+(_[0-9a-fA-F]+)*")) {
            throw new Unreadable("ValueError", "invalid literal for int() with base 16: " + Python.repr(hex));
        }
        if (digits.startsWith("-") && !digits.substring(from).matches("[0_]*")) {
            throw new Unreadable("ValueError", "int is out of range (need a 128-bit value)");
        }
        return new Uuid(text);
    }

    // -- text -----------------------------------------------------------------------------------------------------

    /** The UTF-8 text of {@code bytes[start:end]}, refused as Python's decoder refuses it, with its words and its
     * positions in the text. */
    private static String text(byte[] bytes, int start, int end) throws Unreadable {
        int i = start;
        while (i < end) {
            int b = bytes[i] & 0xff;
            if (b < 0x80) {
                i++;
                continue;
            }
            int length = b < 0xC2 ? 0 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : b < 0xF5 ? 4 : 0;
            if (length == 0) {
                throw undecodable(bytes, start, i, i + 1, "invalid start byte");
            }
            for (int k = 1; k < length; k++) {
                if (i + k >= end) {
                    throw undecodable(bytes, start, i, end, "unexpected end of data");
                }
                int c = bytes[i + k] & 0xff;
                boolean valid = (c & 0xC0) == 0x80;
                if (k == 1 && valid) { // no overlong form, surrogate or code point beyond U+10FFFF
                    valid = b == 0xE0 ? c >= 0xA0 : b == 0xED ? c < 0xA0 : b == 0xF0 ? c >= 0x90
                        : b != 0xF4 || c < 0x90;
                }
                if (!valid) {
                    throw undecodable(bytes, start, i, i + k, "invalid continuation byte");
                }
            }
            i += length;
        }
        return new String(bytes, start, end - start, StandardCharsets.UTF_8);
    }

    /** The error of the bytes {@code from} to {@code to} of the text that starts at {@code start}. */
    private static Unreadable undecodable(byte[] bytes, int start, int from, int to, String reason) {
        return new Unreadable("UnicodeDecodeError", "'utf-8' codec can't decode " + (to - from == 1
            ? String.format("byte 0x%02x in position %d", bytes[from] & 0xff, from - start)
            : "bytes in position " + (from - start) + "-" + (to - 1 - start)) + ": " + reason);
    }
}
