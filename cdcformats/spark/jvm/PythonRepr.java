package cdcformats.spark.jvm;

import java.nio.charset.StandardCharsets;

import cdcformats.jvm.decoders.Numbers;
import cdcformats.jvm.encoders.PythonStrings;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;

/**
 * Python's {@code repr} of an event row as {@code to_pylist} gives it (a dict of dicts and lists, every member named),
 * which the Arrow path keeps as the raw input of an event a target refuses ({@code arrow.encode_array}); its text as
 * {@link PythonStrings#repr} shows it.
 */
final class PythonRepr {
    private PythonRepr() {
    }

    private static final String[] TABLE = {"catalog", "schema", "name"};
    private static final String[] CELL = {"name", "value", "type", "version", "kind"};
    private static final String[] ENTRY = {"name", "value"};
    private static final String[] VALUE = {"boolean", "long", "double", "string", "bytes", "decimal", "nested"};
    private static final String[] SOURCE = {"system", "position", "commit_time_us", "capture_time_us"};
    private static final String[] ERROR = {"format", "reason", "field", "message", "raw"};

    /** The row's repr as UTF-8, as {@code error_row} keeps it. */
    static byte[] ofEvent(InternalRow row) {
        StringBuilder out = new StringBuilder("{'op': ");
        text(out, row, 0);
        out.append(", 'table': ");
        struct(out, row, 1, TABLE);
        out.append(", 'key': ");
        cells(out, row, 2);
        out.append(", 'before': ");
        cells(out, row, 3);
        out.append(", 'after': ");
        cells(out, row, 4);
        out.append(", 'source': ");
        if (row.isNullAt(5)) {
            out.append("None");
        } else {
            InternalRow source = row.getStruct(5, 4);
            out.append("{'system': ");
            text(out, source, 0);
            out.append(", 'position': ");
            entries(out, source, 1);
            out.append(", 'commit_time_us': ");
            number(out, source, 2);
            out.append(", 'capture_time_us': ");
            number(out, source, 3);
            out.append('}');
        }
        out.append(", 'key_only': ").append(row.isNullAt(6) ? "None" : row.getBoolean(6) ? "True" : "False");
        out.append(", 'attributes': ");
        entries(out, row, 7);
        out.append(", 'error': ");
        struct(out, row, 8, ERROR);
        return out.append('}').toString().getBytes(StandardCharsets.UTF_8);
    }

    static String of(String text) {
        return text == null ? "None" : PythonStrings.repr(text);
    }

    private static void text(StringBuilder out, InternalRow row, int ordinal) {
        out.append(of(row.isNullAt(ordinal) ? null : row.getUTF8String(ordinal).toString()));
    }

    private static void number(StringBuilder out, InternalRow row, int ordinal) {
        out.append(row.isNullAt(ordinal) ? "None" : String.valueOf(row.getLong(ordinal)));
    }

    /** A struct of text members but for ERROR's raw bytes. */
    private static void struct(StringBuilder out, InternalRow row, int ordinal, String[] names) {
        if (row.isNullAt(ordinal)) {
            out.append("None");
            return;
        }
        InternalRow struct = row.getStruct(ordinal, names.length);
        out.append('{');
        for (int i = 0; i < names.length; i++) {
            out.append(i == 0 ? "'" : ", '").append(names[i]).append("': ");
            if (names[i].equals("raw")) {
                bytes(out, struct.isNullAt(i) ? null : struct.getBinary(i));
            } else {
                text(out, struct, i);
            }
        }
        out.append('}');
    }

    private static void cells(StringBuilder out, InternalRow row, int ordinal) {
        if (row.isNullAt(ordinal)) {
            out.append("None");
            return;
        }
        ArrayData cells = row.getArray(ordinal);
        out.append('[');
        for (int i = 0; i < cells.numElements(); i++) {
            InternalRow cell = cells.getStruct(i, CELL.length);
            out.append(i == 0 ? "{'name': " : ", {'name': ");
            text(out, cell, 0);
            out.append(", 'value': ");
            value(out, cell, 1);
            out.append(", 'type': ");
            text(out, cell, 2);
            out.append(", 'version': ");
            number(out, cell, 3);
            out.append(", 'kind': ");
            text(out, cell, 4);
            out.append('}');
        }
        out.append(']');
    }

    private static void entries(StringBuilder out, InternalRow row, int ordinal) {
        if (row.isNullAt(ordinal)) {
            out.append("None");
            return;
        }
        ArrayData entries = row.getArray(ordinal);
        out.append('[');
        for (int i = 0; i < entries.numElements(); i++) {
            InternalRow entry = entries.getStruct(i, ENTRY.length);
            out.append(i == 0 ? "{'name': " : ", {'name': ");
            text(out, entry, 0);
            out.append(", 'value': ");
            value(out, entry, 1);
            out.append('}');
        }
        out.append(']');
    }

    private static void value(StringBuilder out, InternalRow row, int ordinal) {
        if (row.isNullAt(ordinal)) {
            out.append("None");
            return;
        }
        InternalRow value = row.getStruct(ordinal, VALUE.length);
        for (int i = 0; i < VALUE.length; i++) {
            out.append(i == 0 ? "{'" : ", '").append(VALUE[i]).append("': ");
            if (value.isNullAt(i)) {
                out.append("None");
            } else if (i == 0) {
                out.append(value.getBoolean(0) ? "True" : "False");
            } else if (i == 1) {
                out.append(value.getLong(1));
            } else if (i == 2) {
                double number = value.getDouble(2);
                out.append(Double.isNaN(number) ? "nan" : Double.isInfinite(number) ? (number > 0 ? "inf" : "-inf")
                    : Numbers.pythonRepr(number));
            } else if (i == 4) {
                bytes(out, value.getBinary(4));
            } else {
                text(out, value, i);
            }
        }
        out.append('}');
    }

    private static void bytes(StringBuilder out, byte[] data) {
        out.append(data == null ? "None" : PythonStrings.bytesRepr(data));
    }
}
