package cdcformats.spark.jvm;

import java.util.ArrayList;
import java.util.List;

import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.decoders.PythonDecimal;
import cdcformats.jvm.decoders.TypedText;
import cdcformats.jvm.encoders.EncodeException;
import cdcformats.jvm.encoders.TaggedValues;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;

/**
 * A row of the canonical event's Spark type ({@code cdcformats.envelopes.arrow.EVENT}, see {@link SparkRows}) read
 * back into an {@link Events.Event}, as {@code arrow.event_from_row} reads it: the same checks in the same order, each
 * refusal an {@link EncodeException} with Python's reason and field. Reads go through the row's getters only, so that
 * an {@code UnsafeRow} (from Parquet, or whole-stage code) reads as a {@code GenericInternalRow} does.
 */
public final class EventRows {
    private EventRows() {
    }

    private static final List<String> OPS = List.of("INSERT", "UPDATE", "DELETE", "UPSERT", "READ", "TRUNCATE");
    private static final List<String> KINDS = List.of(Events.PUT, Events.DELETE_VERSION, Events.DELETE_ALL_VERSIONS);
    private static final String[] VALUE_MEMBERS = {"boolean", "long", "double", "string", "bytes", "decimal", "nested"};

    /** The ERROR row of a dead-letter row, or null when the row is an event. */
    public static InternalRow deadLetter(InternalRow row) {
        return row.isNullAt(8) ? null : row.getStruct(8, 5);
    }

    public static Events.Event event(InternalRow row) throws EncodeException {
        String op = text(row, 0);
        if (op == null || !OPS.contains(op)) {
            throw new EncodeException("unknown op " + PythonRepr.of(op) + "; expected one of "
                + String.join(", ", OPS), "op");
        }
        Events.Table table = null;
        if (!row.isNullAt(1)) {
            InternalRow tableRow = row.getStruct(1, 3);
            if (tableRow.isNullAt(2)) {
                throw new EncodeException("table name: expected a str, got NoneType", null);
            }
            table = new Events.Table(text(tableRow, 0), text(tableRow, 1), text(tableRow, 2));
        }
        String system = null;
        List<Events.Entry> position = List.of();
        Long commitTimeUs = null;
        Long captureTimeUs = null;
        if (!row.isNullAt(5)) {
            InternalRow source = row.getStruct(5, 4);
            system = text(source, 0);
            position = entries(source, 1, "source.position", "source position");
            commitTimeUs = source.isNullAt(2) ? null : source.getLong(2);
            captureTimeUs = source.isNullAt(3) ? null : source.getLong(3);
        }
        List<Events.Cell> key = cells(row, 2, "key");
        List<Events.Cell> before = cells(row, 3, "before");
        List<Events.Cell> after = cells(row, 4, "after");
        boolean keyOnly = !row.isNullAt(6) && row.getBoolean(6);
        List<Events.Entry> attributes = entries(row, 7, "attributes", "attributes");
        return new Events.Event(op, table, key == null ? List.of() : key, before, after,
            new Events.Source(system, position, commitTimeUs, captureTimeUs), keyOnly, attributes);
    }

    private static String text(InternalRow row, int ordinal) {
        return row.isNullAt(ordinal) ? null : row.getUTF8String(ordinal).toString();
    }

    private static List<Events.Cell> cells(InternalRow row, int ordinal, String where) throws EncodeException {
        if (row.isNullAt(ordinal)) {
            return null;
        }
        ArrayData rows = row.getArray(ordinal);
        List<Events.Cell> cells = new ArrayList<>(rows.numElements());
        for (int i = 0; i < rows.numElements(); i++) {
            String path = where + "[" + i + "]";
            InternalRow cell = rows.getStruct(i, 5);
            String kind = text(cell, 4);
            if (kind == null || kind.isEmpty()) {
                kind = Events.PUT;
            } else if (!KINDS.contains(kind)) {
                throw new EncodeException("unknown cell kind " + PythonRepr.of(kind) + "; expected one of "
                    + String.join(", ", KINDS), path + ".kind");
            }
            Object value = value(cell, 1, path + ".value");
            String name = text(cell, 0);
            if (name == null) {
                throw new EncodeException("cell name: expected a str, got NoneType", null);
            }
            cells.add(new Events.Cell(name, value, text(cell, 2), cell.isNullAt(3) ? null : cell.getLong(3), kind));
        }
        return cells;
    }

    /** The entries of a list of ENTRY rows (null for none); {@code where} names them in a value's field, {@code
     *  named} in the model's refusal of a null name, which comes once all the values are read. */
    private static List<Events.Entry> entries(InternalRow row, int ordinal, String where, String named)
            throws EncodeException {
        if (row.isNullAt(ordinal)) {
            return List.of();
        }
        ArrayData rows = row.getArray(ordinal);
        List<String> names = new ArrayList<>(rows.numElements());
        List<Object> values = new ArrayList<>(rows.numElements());
        for (int i = 0; i < rows.numElements(); i++) {
            InternalRow entry = rows.getStruct(i, 2);
            names.add(text(entry, 0));
            values.add(value(entry, 1, where + "[" + i + "].value"));
        }
        List<Events.Entry> entries = new ArrayList<>(names.size());
        for (int i = 0; i < names.size(); i++) {
            if (names.get(i) == null) {
                throw new EncodeException(named + ": entry name must be a str, got NoneType", null);
            }
            entries.add(new Events.Entry(names.get(i), values.get(i)));
        }
        return entries;
    }

    /** The value of a VALUE row ({@code arrow.value_from_row}): null, or the one member set. */
    private static Object value(InternalRow row, int ordinal, String where) throws EncodeException {
        if (row.isNullAt(ordinal)) {
            return null;
        }
        InternalRow value = row.getStruct(ordinal, 7);
        int set = -1;
        for (int i = 0; i < 7; i++) {
            if (!value.isNullAt(i)) {
                if (set >= 0) {
                    throw new EncodeException(twoMembers(value), where);
                }
                set = i;
            }
        }
        switch (set) {
            case -1: return null;
            case 0: return value.getBoolean(0);
            case 1: return value.getLong(1);
            case 2: return value.getDouble(2);
            case 3: return value.getUTF8String(3).toString();
            case 4: return value.getBinary(4);
            case 5: {
                String text = value.getUTF8String(5).toString();
                String decimal = PythonDecimal.str(text);
                if (decimal == null) {
                    throw new EncodeException("not a decimal: " + PythonRepr.of(text), where);
                }
                return new TypedText.DecimalText(decimal);
            }
            default: return TaggedValues.nested(value.getUTF8String(6).getBytes(), where);
        }
    }

    /** Python's reason for a VALUE row of several members, which names them all. */
    private static String twoMembers(InternalRow value) {
        List<String> members = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            if (!value.isNullAt(i)) {
                members.add(VALUE_MEMBERS[i]);
            }
        }
        return "a value has one member set, this one " + members.size() + ": " + String.join(", ", members);
    }
}
