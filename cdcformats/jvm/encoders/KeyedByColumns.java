package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.Events;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code _kit/keys.KeyedByColumns} for the JVM encoders: the normal form of a format whose messages do not mark the
 * key, which the option {@code key_columns} names and which is read out of the row image (without the option, no
 * key: the feature {@code key} is not carried). A format that sets {@code keyInRow} writes the key cells an event
 * keeps outside its row into the row, in front ({@link #keyedByRow}), before the other stages.
 */
public class KeyedByColumns extends NormalForm {
    protected final KeyColumns keyColumns;
    private final boolean keyInRow;

    protected KeyedByColumns(String format, Set<String> carries, Set<String> ownAttributes, List<Shape> shapes,
                             Map<String, String> settings, boolean keyInRow) {
        this(format, carries, ownAttributes, shapes, new KeyColumns(settings), keyInRow);
    }

    private KeyedByColumns(String format, Set<String> carries, Set<String> ownAttributes, List<Shape> shapes,
                           KeyColumns keyColumns, boolean keyInRow) {
        super(format, keyColumns.any() ? carries : changed(carries, List.of(), List.of("key")), ownAttributes,
            shapes);
        this.keyColumns = keyColumns;
        this.keyInRow = keyInRow;
    }

    /** {@code KeyedByColumns.normal_form}: {@link #keyedByRow} first where the format puts the key in the row. */
    @Override
    public Events.Event carriedForm(Events.Event event) throws EncodeException {
        return super.carriedForm(keyInRow ? keyedByRow(event) : event);
    }

    /**
     * {@code KeyedByColumns.row_image_name}: whether the key is read out of the before image (a DELETE's, or that of
     * a change without an after image), else out of the after image. A format whose mutation writes one image
     * (lindorm) says which.
     */
    protected boolean rowIsBefore(Events.Event event) {
        return event.op().equals("DELETE") || event.after() == null;
    }

    protected final List<Events.Cell> rowImage(Events.Event event) {
        return rowIsBefore(event) ? event.before() : event.after();
    }

    /** {@code KeyedByColumns.read_key}: the key that decoding reads out of {@code image}. */
    protected List<Events.Cell> readKey(Events.Table table, List<Events.Cell> image) {
        return keyColumns.keyOf(table, image);
    }

    /** {@code KeyedByColumns.keyed_by_row}: the key cells missing from the row put in front of it, the key read. */
    protected Events.Event keyedByRow(Events.Event event) {
        boolean before = rowIsBefore(event);
        List<Events.Cell> row = before ? event.before() : event.after();
        List<Events.Cell> missing = KeyColumns.outside(event.key(), row);
        if (!missing.isEmpty()) {
            List<Events.Cell> joined = new ArrayList<>(missing);
            if (row != null) {
                joined.addAll(row);
            }
            row = joined;
        }
        List<Events.Cell> key = keyColumns.any() ? readKey(event.table(), row) : event.key();
        return new Events.Event(event.op(), event.table(), key, before ? row : event.before(),
            before ? event.after() : row, event.source(), event.keyOnly(), event.attributes());
    }

    /** {@code KeyedByColumns.with_key_as_read}: the key that reading it back out of {@code image} gives. */
    protected Events.Event withKeyAsRead(Events.Event event, List<Events.Cell> image) {
        if (!keyColumns.any()) {
            return event;
        }
        return new Events.Event(event.op(), event.table(), readKey(event.table(), image), event.before(),
            event.after(), event.source(), event.keyOnly(), event.attributes());
    }
}
