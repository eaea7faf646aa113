package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.Events;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * {@code codecs/maxwell.py}'s encoder in Java: each event as {@code encode_exact(written(event))} writes it, one row
 * message. The normal form is the event as far as maxwell-json carries it ({@link NormalForm}; a cell of type JSON
 * holding JSON text keeps its type), reshaped to the changes Maxwell writes ({@link #reshaped}), then its commit time
 * in whole seconds, Maxwell's position fields once each in Maxwell's order, the key cells the row lacks put into it
 * (or {@code key_columns} reading the key out of the row), an update's before image as {@code data} with {@code old}'s
 * values put back, and the kept fields as decoding gives them. The message is written by {@link JsonOut#msgspec}.
 *
 * <p>Settings: {@code key_columns} and {@code key_columns_per_table} ({@code KeyColumns.settings()}).
 */
public final class MaxwellJsonEncoder extends NormalForm implements MessageEncoder {
    private static final String NAME = "maxwell-json";
    private static final String FIELD_ATTRIBUTE = "maxwell.field.";
    // The cell type of a SET or JSON column, whose value is kept as JSON text.
    private static final String JSON_TYPE = "JSON";
    private static final List<String> POSITION_FIELDS =
        List.of("xid", "xoffset", "commit", "position", "gtid", "server_id", "thread_id");
    // The fields decoding reads (with primary_key where it reads the key values): a kept field of these names is not.
    private static final Set<String> ROW_FIELDS = Set.of("database", "table", "type", "ts", "xid", "xoffset", "commit",
        "position", "gtid", "server_id", "thread_id", "primary_key_columns", "data", "old");
    private static final Set<String> ROW_FIELDS_WITH_KEY = withKey();
    private static final Map<String, String> TYPE_OF_OP = Map.of("INSERT", "insert", "UPDATE", "update",
        "DELETE", "delete", "READ", "bootstrap-insert");
    private static final long SECOND = 1_000_000L;
    // time_units.earliest(SECOND): the earliest whole second within 64 bits, in microseconds.
    private static final long EARLIEST_SECOND = Long.MIN_VALUE / SECOND * SECOND;
    private static final Set<String> CARRIES = Set.of(
        "op.INSERT", "op.UPDATE", "op.DELETE", "op.READ", "table", "table.schema", "key", "before", "after",
        "image.columns", "value.null", "value.bool", "value.int", "value.float", "value.str", "value.off_type",
        "source.position", "source.commit_time");
    private static final List<Shape> SHAPES = List.of(new Shape("INSERT", ABSENT, PRESENT),
        new Shape("UPDATE", PRESENT, PRESENT), new Shape("DELETE", PRESENT, ABSENT),
        new Shape("READ", ABSENT, PRESENT));

    private final KeyColumns keyColumns;

    public MaxwellJsonEncoder(Map<String, String> settings) {
        super(NAME, CARRIES, Set.of(FIELD_ATTRIBUTE), SHAPES);
        keyColumns = new KeyColumns(settings);
    }

    private static Set<String> withKey() {
        Set<String> fields = new HashSet<>(ROW_FIELDS);
        fields.add("primary_key");
        return Set.copyOf(fields);
    }

    @Override
    public byte[] encode(Events.Event event) throws EncodeException {
        return JsonOut.msgspec(message(normalForm(event))).getBytes(StandardCharsets.UTF_8);
    }

    /** {@code MaxwellJsonCodec.encode_event}: the row message of an event of the normal form. */
    private Map<String, Object> message(Events.Event event) throws EncodeException {
        Map<String, Object> document = new LinkedHashMap<>();
        Events.Table table = event.table();
        if (table != null) {
            if (table.schema() != null) {
                document.put("database", table.schema());
            }
            document.put("table", table.name());
        }
        document.put("type", TYPE_OF_OP.get(event.op()));
        Events.Source source = event.source();
        if (source.commitTimeUs() != null) {
            document.put("ts", Math.floorDiv(source.commitTimeUs(), SECOND));
        }
        for (Events.Entry entry : source.position()) {
            document.put(entry.name(), entry.value());
        }
        if (!event.attributes().isEmpty()) {
            document.putAll(KeptFields.write(event.attributes(), FIELD_ATTRIBUTE, reserved(event)));
        }
        List<Events.Cell> key = event.key();
        List<Object> keyNames = new ArrayList<>(key.size());
        if (!key.isEmpty()) {
            List<Object> keyValues = new ArrayList<>(key.size());
            for (Events.Cell cell : key) {
                keyValues.add(cellJson(cell));
            }
            document.put("primary_key", keyValues);
        }
        for (Events.Cell cell : key) {
            keyNames.add(cell.name());
        }
        document.put("primary_key_columns", keyNames);
        document.put("data", fields(event.op().equals("DELETE") ? event.before() : event.after()));
        if (event.op().equals("UPDATE")) {
            Map<String, Events.Cell> afterByName = byName(event.after());
            List<Events.Cell> changed = new ArrayList<>();
            for (Events.Cell cell : event.before()) {
                if (!Values.sameCell(afterByName.get(cell.name()), cell)) {
                    changed.add(cell);
                }
            }
            if (!changed.isEmpty()) {
                document.put("old", fields(changed));
            }
        }
        return document;
    }

    /** {@code MaxwellJsonCodec._reserved}: the message fields that decoding reads as other than a kept field. */
    private Set<String> reserved(Events.Event event) {
        return !event.key().isEmpty() || !keyColumns.forTable(event.table()).isEmpty() ? ROW_FIELDS_WITH_KEY
            : ROW_FIELDS;
    }

    /** {@code maxwell._fields}: a row as Maxwell writes it, each column's JSON (the last of a name). */
    private static Map<String, Object> fields(List<Events.Cell> cells) throws EncodeException {
        Map<String, Object> fields = new LinkedHashMap<>();
        for (Events.Cell cell : cells) {
            fields.put(cell.name(), cellJson(cell));
        }
        return fields;
    }

    /** {@code maxwell._cell_json}: a JSON cell's text written as it is, any other value as its JSON form. */
    private static Object cellJson(Events.Cell cell) throws EncodeException {
        return isJsonCell(cell) ? KeptFields.raw(cell.value(), cell.name()) : Values.jsonForm(cell.value());
    }

    /** {@code maxwell._is_json_cell}: a cell of type JSON holding an array or object as msgspec writes it. */
    private static boolean isJsonCell(Events.Cell cell) {
        return JSON_TYPE.equals(cell.type()) && KeptFields.isCanonical(cell.value(), true);
    }

    // -- the normal form ----------------------------------------------------------------------------------------------

    /** {@code MaxwellJsonCodec.carried_cell}: as the base, but a cell of type JSON holding JSON text keeps its type. */
    @Override
    public Events.Cell carriedCell(Events.Cell cell) {
        Events.Cell written = super.carriedCell(cell);
        if (isJsonCell(cell) && cell.kind().equals(Events.PUT) && !Objects.equals(written.type(), cell.type())) {
            return new Events.Cell(written.name(), written.value(), cell.type(), written.version(), written.kind());
        }
        return written;
    }

    /**
     * {@code MaxwellJsonCodec.reshaped}: an UPSERT is an insert; a row the type needs and the event lacks is its key
     * cells; an update without its before image changed nothing; an update without its after image and a TRUNCATE
     * have no form.
     */
    @Override
    protected Events.Event reshaped(Events.Event event) throws EncodeException {
        if (event.op().equals("TRUNCATE")) {
            throw EncodeException.refused("op.TRUNCATE", "op", "Maxwell writes no row change for a TRUNCATE");
        }
        if (event.op().equals("UPDATE")) {
            if (event.after() == null) {
                throw EncodeException.refused("op.UPDATE", "after",
                    "Maxwell writes an update's new row as its data, and this update has none");
            }
            return new Events.Event(event.op(), event.table(), event.key(), event.after(), event.after(),
                event.source(), event.keyOnly(), event.attributes());
        }
        return withOneRow(event, event.op().equals("UPSERT") ? "INSERT" : event.op());
    }

    /**
     * {@code MaxwellJsonCodec.normal_form}: ts in whole seconds, the position fields once each in Maxwell's order,
     * the key cells the row lacks put into it (or key_columns reading the key out of the row), an update's before
     * image as data with old's values put back, and the kept fields as decoding gives them.
     */
    @Override
    public Events.Event normalForm(Events.Event event) throws EncodeException {
        Events.Event written = super.normalForm(event);
        Events.Source source = written.source();
        Long commitTime = source.commitTimeUs();
        if (commitTime != null && Math.floorMod(commitTime, SECOND) != 0) {
            // time_units.floored: a time before the earliest whole second is floored to it
            commitTime = commitTime < EARLIEST_SECOND ? EARLIEST_SECOND
                : commitTime - Math.floorMod(commitTime, SECOND);
        }
        source = new Events.Source(source.system(), positionAsWritten(source.position()), commitTime,
            source.captureTimeUs());
        boolean rowIsBefore = written.op().equals("DELETE");
        List<Events.Cell> row = rowIsBefore ? written.before() : written.after();
        List<Events.Cell> key = written.key();
        if (!key.isEmpty()) {
            List<Events.Cell> missing = KeyColumns.outside(key, row);
            if (!missing.isEmpty()) {
                List<Events.Cell> whole = new ArrayList<>(missing);
                whole.addAll(row);
                row = whole;
            }
        } else {
            key = keyColumns.keyOf(written.table(), row);
        }
        List<Events.Cell> before = rowIsBefore ? row : written.before();
        if (written.op().equals("UPDATE")) {
            Map<String, Events.Cell> afterByName = byName(row);
            List<Events.Cell> old = new ArrayList<>();
            for (Events.Cell cell : written.before()) {
                if (!Values.sameCell(afterByName.get(cell.name()), cell)) {
                    old.add(cell);
                }
            }
            before = merged(row, old);
        }
        Set<String> reserved = reserved(written);
        List<Events.Entry> attributes = KeptFields.asDecoded(written.attributes(),
            (name, value) -> name.startsWith(FIELD_ATTRIBUTE)
                && !reserved.contains(name.substring(FIELD_ATTRIBUTE.length()))
                && KeptFields.isCanonical(value, false) ? new KeptFields.Kept(0, value) : null);
        return new Events.Event(written.op(), written.table(), key, before, rowIsBefore ? written.after() : row,
            source, written.keyOnly(), attributes);
    }

    /** {@code maxwell._position_as_written}: Maxwell's position fields, the first of each, in Maxwell's order. */
    private static List<Events.Entry> positionAsWritten(List<Events.Entry> position) {
        Map<String, Events.Entry> first = new HashMap<>();
        for (Events.Entry entry : position) {
            if (POSITION_FIELDS.contains(entry.name())) {
                first.putIfAbsent(entry.name(), entry);
            }
        }
        List<Events.Entry> written = new ArrayList<>(first.size());
        for (String name : POSITION_FIELDS) {
            if (first.containsKey(name)) {
                written.add(first.get(name));
            }
        }
        return written;
    }

    /** {@code maxwell._merged}: {@code data} with the values of {@code old} put back, then the columns only old has. */
    private static List<Events.Cell> merged(List<Events.Cell> data, List<Events.Cell> old) {
        Map<String, Events.Cell> oldByName = byName(old);
        Set<String> dataNames = new HashSet<>();
        List<Events.Cell> merged = new ArrayList<>(data.size() + old.size());
        for (Events.Cell cell : data) {
            dataNames.add(cell.name());
            merged.add(oldByName.getOrDefault(cell.name(), cell));
        }
        for (Events.Cell cell : old) {
            if (!dataNames.contains(cell.name())) {
                merged.add(cell);
            }
        }
        return merged;
    }

    /** The cells of an image by name, the last of a name (a dict comprehension's). */
    private static Map<String, Events.Cell> byName(List<Events.Cell> cells) {
        Map<String, Events.Cell> byName = new HashMap<>();
        for (Events.Cell cell : cells) {
            byName.put(cell.name(), cell);
        }
        return byName;
    }
}
