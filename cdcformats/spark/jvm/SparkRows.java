package cdcformats.spark.jvm;

import java.util.List;

import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.decoders.Json;
import cdcformats.jvm.decoders.TypedText;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A decoder's {@link Events.Event} as a row of the canonical event's Spark type
 * ({@code cdcformats.envelopes.arrow.EVENT}), field for field:
 * <pre>
 * EVENT  = op, table TABLE, key [CELL], before [CELL], after [CELL], source SOURCE, key_only, attributes [ENTRY], error
 * TABLE  = catalog, schema, name          SOURCE = system, position [ENTRY], commit_time_us, capture_time_us
 * CELL   = name, value VALUE, type, version, kind                 ENTRY = name, value VALUE
 * VALUE  = boolean, long, double, string, bytes, decimal, nested (exactly one set; the whole value null for a null)
 * ERROR  = format, reason, field, message, raw
 * </pre>
 * A nested value is written to {@code nested} as the tagged JSON text of {@code arrow.value_row}, byte for byte.
 */
public final class SparkRows {
    private SparkRows() {
    }

    private static UTF8String text(String value) {
        return value == null ? null : UTF8String.fromString(value);
    }

    /** A VALUE row, or null for a null value. */
    static InternalRow value(Object value) {
        if (Json.isNull(value)) {
            return null;
        }
        Object[] members = new Object[7];
        if (value instanceof Boolean) {
            members[0] = value;
        } else if (value instanceof Long) {
            members[1] = value;
        } else if (value instanceof Double) {
            members[2] = value;
        } else if (value instanceof String) {
            members[3] = UTF8String.fromString((String) value);
        } else if (value instanceof byte[]) {
            members[4] = value;
        } else if (value instanceof TypedText.DecimalText) {
            members[5] = UTF8String.fromString(((TypedText.DecimalText) value).text);
        } else { // a List or a Map: Events refuses every other value as it is built
            members[6] = UTF8String.fromString(Json.write(Events.tagged(value)));
        }
        return new GenericInternalRow(members);
    }

    private static InternalRow cell(Events.Cell cell) {
        return new GenericInternalRow(new Object[] {
            text(cell.name()), value(cell.value()), text(cell.type()), cell.version(), text(cell.kind())});
    }

    /** An array of CELL rows, or null for an absent image. */
    private static GenericArrayData cells(List<Events.Cell> cells) {
        if (cells == null) {
            return null;
        }
        Object[] rows = new Object[cells.size()];
        for (int i = 0; i < rows.length; i++) {
            rows[i] = cell(cells.get(i));
        }
        return new GenericArrayData(rows);
    }

    private static GenericArrayData entries(List<Events.Entry> entries) {
        Object[] rows = new Object[entries.size()];
        for (int i = 0; i < rows.length; i++) {
            rows[i] = new GenericInternalRow(new Object[] {text(entries.get(i).name()), value(entries.get(i).value())});
        }
        return new GenericArrayData(rows);
    }

    public static InternalRow event(Events.Event event) {
        Events.Table table = event.table();
        InternalRow tableRow = table == null ? null
            : new GenericInternalRow(new Object[] {text(table.catalog()), text(table.schema()), text(table.name())});
        Events.Source source = event.source();
        InternalRow sourceRow = new GenericInternalRow(new Object[] {
            text(source.system()), entries(source.position()), source.commitTimeUs(), source.captureTimeUs()});
        return new GenericInternalRow(new Object[] {
            text(event.op()), tableRow, cells(event.key()), cells(event.before()), cells(event.after()), sourceRow,
            event.keyOnly(), entries(event.attributes()), null});
    }

    /** A dead-letter row: every event field null but {@code error}. */
    public static InternalRow error(String format, String reason, String field, String message, byte[] raw) {
        InternalRow error = new GenericInternalRow(new Object[] {
            text(format), text(reason), text(field), text(message), raw});
        return new GenericInternalRow(new Object[] {null, null, null, null, null, null, null, null, error});
    }
}
