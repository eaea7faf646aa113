package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.Events;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The normal form every format's encoder starts from, {@code Codec._carried_form} of {@code contract.py}: an event
 * as far as the format carries it (its {@code carries}), each cell as {@link #carriedCell} writes it, one cell per
 * column where cells are not {@code cell.repeated} (the first kept), fields not carried taken away, times to the
 * millisecond where {@code source.time.sub_ms} is not carried, and attributes kept only as far as they are carried
 * or the format's own. A change that would name no row ({@code _unnamed_row}) is refused. A format's encoder
 * applies its own rules to what {@link #carriedForm} gives.
 *
 * <p>Not ported yet: {@code shapes} and {@code reshaped} (a format whose shapes admit only some changes), and the
 * check {@code typed_text.carries} of a format that carries cell types but not off-type values: such a format cannot
 * be built on this class until they are.
 */
public class NormalForm {
    private static final long MILLISECOND = 1000L;
    // time_units.earliest(MILLISECOND): the earliest whole millisecond within 64 bits, in microseconds.
    private static final long EARLIEST_MILLISECOND = Long.MIN_VALUE / MILLISECOND * MILLISECOND;

    protected final String format;
    private final Set<String> carries;
    private final Set<String> ownAttributes;
    // contract._Carriage: the kinds of value carriedCell passes as they are, and the cell kinds carried.
    private final Set<String> plainValues = new HashSet<>();
    private final Set<String> cellKinds = new HashSet<>();

    protected NormalForm(String format, Set<String> carries, Set<String> ownAttributes) {
        this.format = format;
        this.carries = Set.copyOf(carries);
        this.ownAttributes = Set.copyOf(ownAttributes);
        if (carries.contains("cell.type") && !carries.contains("value.off_type")) {
            throw new IllegalArgumentException(format + ": typed_text.carries is not ported to the JVM");
        }
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

    protected final boolean carries(String feature) {
        return carries.contains(feature);
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
        for (Events.Cell cell : image) {
            if (repeated || seen.add(cell.name())) {
                cells.add(carriedCell(cell));
            }
        }
        return cells;
    }

    /**
     * {@code Codec.carried_cell}: a deleted column the format has no form for as the column set to null, a value of a
     * kind it has no form for as its text (bytes as base64), nested values as {@link #carriedValue} writes them, NaN
     * and infinities as text where it has no form for them, and a type or a version it does not carry taken away.
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
        String type = carries("cell.type") ? cell.type() : null;
        Long version = carries("cell.version") ? cell.version() : null;
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
            return Math.max(microseconds - Math.floorMod(microseconds, MILLISECOND), EARLIEST_MILLISECOND);
        }
        return microseconds;
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
                throw new EncodeException("this " + event.op() + " has no key and only deletes columns, which "
                    + format + " writes as nulls, so it would name no row: give the source format its key columns "
                    + "(the option key_columns)", "key");
            }
        }
    }
}
