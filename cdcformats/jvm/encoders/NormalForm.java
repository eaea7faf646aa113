package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.decoders.TypedText;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The normal form every format's encoder starts from, {@code Codec._carried_form} of {@code contract.py}: an event
 * as far as the format carries it (its {@code carries}), each cell as {@link #carriedCell} writes it, one cell per
 * column where cells are not {@code cell.repeated} (the first kept), fields not carried taken away, times to the
 * millisecond where {@code source.time.sub_ms} is not carried, and attributes kept only as far as they are carried
 * or the format's own. A change that would name no row ({@code _unnamed_row}) is refused. A format's encoder
 * applies its own rules to what {@link #carriedForm} gives.
 *
 * <p>{@link #normalForm} is {@code Codec.normal_form}: the carried form, {@link #reshaped} where the format has
 * {@link Shape}s and none admits it.
 */
public class NormalForm {
    private static final long MILLISECOND = 1000L;
    // time_units.earliest(MILLISECOND): the earliest whole millisecond within 64 bits, in microseconds.
    private static final long EARLIEST_MILLISECOND = Long.MIN_VALUE / MILLISECOND * MILLISECOND;

    protected final String format;
    private final Set<String> carries;
    private final Set<String> ownAttributes;
    private final List<Shape> shapes; // the format's shapes, or null where it admits any change (the default)
    // contract._Carriage: the kinds of value carriedCell passes as they are, and the cell kinds carried.
    private final Set<String> plainValues = new HashSet<>();
    private final Set<String> cellKinds = new HashSet<>();

    protected NormalForm(String format, Set<String> carries, Set<String> ownAttributes) {
        this(format, carries, ownAttributes, null);
    }

    /** {@code shapes}: the format's {@code shapes}, the changes it writes, or null where it admits any change. */
    protected NormalForm(String format, Set<String> carries, Set<String> ownAttributes, List<Shape> shapes) {
        this.format = format;
        this.carries = Set.copyOf(carries);
        this.ownAttributes = Set.copyOf(ownAttributes);
        this.shapes = shapes;
        for (String feature : List.of("value.null", "value.bool", "value.int", "value.float", "value.str",
                "value.bytes", "value.decimal")) {
            if (carries.contains(feature)
                    && (!feature.equals("value.float") || carries.contains("value.float_nonfinite"))) {
                plainValues.add(feature);
            }
        }
        cellKinds.add(Events.PUT);
        for (String kind : List.of(Events.DELETE_VERSION, Events.DELETE_ALL_VERSIONS)) {
            if (carries.contains("cell.kind." + kind)) {
                cellKinds.add(kind);
            }
        }
    }

    /** A set of features (or attributes): {@code features} with {@code added} and without {@code removed}. */
    protected static Set<String> changed(Set<String> features, Collection<String> added, Collection<String> removed) {
        Set<String> changed = new HashSet<>(features);
        changed.addAll(added);
        changed.removeAll(removed);
        return changed;
    }

    public final boolean carries(String feature) {
        return carries.contains(feature);
    }

    /**
     * {@code contract.Shape}: one form of change a format can express, its op, whether each image is absent, present
     * or either ({@link #ABSENT}, {@link #PRESENT}, {@link #NONEMPTY}, {@link #OPTIONAL}), and the cell kinds the
     * images may hold.
     */
    public record Shape(String op, String before, String after, Set<String> kinds) {
        public Shape(String op, String before, String after) {
            this(op, before, after, Set.of(Events.PUT));
        }

        /** {@code Shape.admits}. */
        public boolean admits(Events.Event event) {
            if (!event.op().equals(op)) {
                return false;
            }
            Set<String> keyNames = new HashSet<>();
            for (Events.Cell cell : event.key()) {
                keyNames.add(cell.name());
            }
            return fits(event.before(), before, keyNames) && fits(event.after(), after, keyNames);
        }

        /** {@code contract._image_fits}: key columns in an image identify the row, so they may always be PUT cells. */
        private boolean fits(List<Events.Cell> image, String rule, Set<String> keyNames) {
            if (image == null) {
                return rule.equals(ABSENT) || rule.equals(OPTIONAL);
            }
            if (rule.equals(ABSENT) || rule.equals(NONEMPTY) && image.isEmpty()) {
                return false;
            }
            for (Events.Cell cell : image) {
                if (!kinds.contains(cell.kind())
                        && !(cell.kind().equals(Events.PUT) && keyNames.contains(cell.name()))) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public String toString() {
            List<String> images = new ArrayList<>();
            if (!before.equals(ABSENT)) {
                images.add("before " + before);
            }
            if (!after.equals(ABSENT)) {
                images.add("after " + after);
            }
            return op + "(" + (images.isEmpty() ? "no images" : String.join(", ", images)) + "; cells "
                + String.join("/", new TreeSet<>(kinds)) + ")";
        }
    }

    public static final String ABSENT = "absent";
    public static final String PRESENT = "present";
    public static final String OPTIONAL = "optional";
    public static final String NONEMPTY = "nonempty";

    /**
     * {@code Codec.normal_form} by default: the event as far as the format carries it, of a kind of change some
     * shape admits ({@link #reshaped} where none does).
     */
    public Events.Event normalForm(Events.Event event) throws EncodeException {
        Events.Event written = carriedForm(event);
        if (shapes == null) {
            return written;
        }
        for (Shape shape : shapes) {
            if (shape.admits(written)) {
                return written;
            }
        }
        return reshaped(written);
    }

    /**
     * {@code Codec.reshaped}: an event of a kind of change the format has no shape for as one it has; by default
     * refused.
     */
    protected Events.Event reshaped(Events.Event event) throws EncodeException {
        List<String> written = new ArrayList<>();
        for (Shape shape : shapes) {
            written.add(shape.toString());
        }
        throw EncodeException.refused("op." + event.op(), "op", format + " has no form for " + shapeOf(event)
            + "; it writes only " + String.join("; ", written));
    }

    /** {@code contract._shape_of}: an event's kind of change, as a refusal names it. */
    private static String shapeOf(Events.Event event) {
        List<String> images = new ArrayList<>();
        Set<String> kinds = new TreeSet<>();
        for (String name : List.of("before", "after")) {
            List<Events.Cell> image = name.equals("before") ? event.before() : event.after();
            if (image != null) {
                images.add(name + " " + (image.isEmpty() ? "empty" : "cells"));
                for (Events.Cell cell : image) {
                    kinds.add(cell.kind());
                }
            }
        }
        return event.op() + "(" + (images.isEmpty() ? "no images" : String.join(", ", images))
            + (kinds.isEmpty() ? "" : "; cells " + String.join("/", kinds)) + ")";
    }

    /** {@code ChangeEvent.attribute}: the value of the first attribute called {@code name}, or null. */
    protected static Object attribute(Events.Event event, String name) {
        for (Events.Entry attribute : event.attributes()) {
            if (attribute.name().equals(name)) {
                return attribute.value();
            }
        }
        return null;
    }

    /**
     * {@code contract.with_one_row}: an INSERT or a DELETE ({@code op}) as a format writes it that writes such a
     * change as the one row its op reads: a missing row is the event's key cells, and the other image is not written.
     */
    public static Events.Event withOneRow(Events.Event event, String op) {
        boolean rowIsBefore = op.equals("DELETE");
        List<Events.Cell> row = rowIsBefore ? event.before() : event.after();
        if (row == null) {
            row = event.key();
        }
        return new Events.Event(op, event.table(), event.key(), rowIsBefore ? row : null, rowIsBefore ? null : row,
            event.source(), event.keyOnly(), event.attributes());
    }

    /** {@code Codec._carried_form}. */
    public Events.Event carriedForm(Events.Event event) throws EncodeException {
        refuseUnnamedRow(event);
        List<Events.Cell> key = event.key();
        if (!key.isEmpty()) {
            key = carries("key") ? carriedImage(key) : List.of();
        }
        List<Events.Cell> before = event.before();
        if (before != null) {
            before = carries("before") ? carriedImage(before) : null;
        }
        List<Events.Cell> after = event.after();
        if (after != null) {
            after = carries("after") ? carriedImage(after) : null;
        }
        Events.Table table = event.table();
        if (table != null) {
            if (!carries("table")) {
                table = null;
            } else if (table.schema() != null && !carries("table.schema")
                    || table.catalog() != null && !carries("table.catalog")) {
                table = new Events.Table(carries("table.catalog") ? table.catalog() : null,
                    carries("table.schema") ? table.schema() : null, table.name());
            }
        }
        boolean keyOnly = event.keyOnly() && carries("key_only");
        List<Events.Entry> attributes = event.attributes().isEmpty() ? event.attributes()
            : carriedEntries(event.attributes(), carries("attributes"));
        return new Events.Event(event.op(), table, key, before, after, carriedSource(event.source()), keyOnly,
            attributes);
    }

    /**
     * {@code Codec.carried_image}: each cell as {@link #carriedCell} writes it, and, where cells are not
     * {@code cell.repeated}, one per column (the first).
     */
    public List<Events.Cell> carriedImage(List<Events.Cell> image) {
        List<Events.Cell> cells = new ArrayList<>(image.size());
        Set<String> seen = new HashSet<>();
        boolean repeated = carries("cell.repeated");
        boolean same = true;
        for (Events.Cell cell : image) {
            if (repeated || seen.add(cell.name())) {
                Events.Cell carried = carriedCell(cell);
                cells.add(carried);
                same &= carried == cell;
            } else {
                same = false;
            }
        }
        return same ? image : cells;
    }

    /**
     * {@code Codec.carried_cell}: a deleted column the format has no form for as the column set to null, a value of a
     * kind it has no form for as its text (bytes as base64), nested values as {@link #carriedValue} writes them, NaN
     * and infinities as text where it has no form for them, and a type it does not carry, or that would retype the
     * value ({@link TypedText#carries}, unless it carries off-type values), and a version it does not carry, taken
     * away.
     */
    public Events.Cell carriedCell(Events.Cell cell) {
        Object value = cell.value();
        String kind = cell.kind();
        if (!cellKinds.contains(kind)) {
            kind = Events.PUT;
            value = null;
        }
        if (plainValues.contains(Values.feature(value))) {
            // as it is
        } else if (!carries(Values.feature(value))) {
            value = Values.asText(value);
        } else if (Values.isNested(value)) {
            value = carriedValue(value);
        } else if (Values.isNonFinite(value) && !carries("value.float_nonfinite")) {
            value = Values.render(value);
        }
        String type = cell.type();
        if (type != null && (!carries("cell.type")
                || !carries("value.off_type") && !TypedText.carries(value, type))) {
            type = null;
        }
        Long version = carries("cell.version") ? cell.version() : null;
        if (value == cell.value() && kind.equals(cell.kind()) && type == cell.type() && version == cell.version()) {
            return cell; // carried as it is (most cells): not built again
        }
        return new Events.Cell(cell.name(), value, type, version, kind);
    }

    /**
     * {@code Codec._carried_value}: a nested value as a format that writes nested values as JSON writes it: bytes,
     * decimals, NaN and infinities in it as text, unless it carries them ({@code value.nested_non_json}).
     */
    protected Object carriedValue(Object value) {
        return carries("value.nested_non_json") || Values.isJson(value) ? value : Values.jsonForm(value);
    }

    /** {@code Codec._carried_source}. */
    private Events.Source carriedSource(Events.Source source) {
        String system = carries("source.system") ? source.system() : null;
        List<Events.Entry> position = source.position();
        if (!position.isEmpty()) {
            position = carries("source.position") ? carriedEntries(position, true) : List.of();
        }
        return new Events.Source(system, position, carriedTime(source.commitTimeUs(), "source.commit_time"),
            carriedTime(source.captureTimeUs(), "source.capture_time"));
    }

    private Long carriedTime(Long microseconds, String feature) {
        if (microseconds == null) {
            return null;
        }
        if (!carries(feature)) {
            return null;
        }
        if (Math.floorMod(microseconds, MILLISECOND) != 0 && !carries("source.time.sub_ms")) {
            return flooredToMillisecond(microseconds);
        }
        return microseconds;
    }

    /**
     * {@code time_units.floored} to the millisecond: a time before the earliest whole millisecond is floored to it
     * (flooring it would run below 64 bits).
     */
    static long flooredToMillisecond(long microseconds) {
        return microseconds < EARLIEST_MILLISECOND ? EARLIEST_MILLISECOND
            : microseconds - Math.floorMod(microseconds, MILLISECOND);
    }

    /**
     * {@code Codec._carried_entries}: named values (a source position, attributes) that are {@code carried}, each
     * kept where its kind of value is carried, nested values as {@link #carriedValue} writes them; of attributes that
     * are not, the format's own kept.
     */
    private List<Events.Entry> carriedEntries(List<Events.Entry> entries, boolean carried) {
        List<Events.Entry> kept = new ArrayList<>(entries.size());
        for (Events.Entry entry : entries) {
            Object value = entry.value();
            String feature = Values.feature(value);
            if (!carried) {
                if (owns(entry.name())) {
                    kept.add(entry);
                }
            } else if (plainValues.contains(feature)) {
                kept.add(entry);
            } else if (carries(feature) && !Values.isNonFinite(value)) {
                kept.add(new Events.Entry(entry.name(), carriedValue(value)));
            }
        }
        return kept;
    }

    /** {@code Codec._owns}: whether an attribute is one the format writes back without carrying attributes. */
    private boolean owns(String name) {
        if (ownAttributes.contains(name)) {
            return true;
        }
        for (String own : ownAttributes) {
            if (own.endsWith(".") && name.startsWith(own)) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@code Codec._unnamed_row}: a change that has no key and only deletes columns, which a format that has no form
     * for deleted columns writes as nulls, so that it would name no row.
     */
    private void refuseUnnamedRow(Events.Event event) throws EncodeException {
        List<Events.Cell> after = event.after();
        if (!event.key().isEmpty() || after == null || after.isEmpty()) {
            return;
        }
        for (Events.Cell cell : after) {
            if (cell.kind().equals(Events.PUT)) {
                return;
            }
        }
        for (Events.Cell cell : after) {
            if (!cellKinds.contains(cell.kind())) {
                throw EncodeException.refused("cell.kind." + cell.kind(), "key", "this " + event.op()
                    + " has no key and only deletes columns, which " + format + " writes as nulls, so it would name "
                    + "no row: give the source format its key columns (the option key_columns)");
            }
        }
    }
}
