package cdcformats.jvm.encoders;

import static cdcformats.jvm.decoders.ArcionDecoder.CURSOR_JSON;
import static cdcformats.jvm.decoders.ArcionDecoder.ENVELOPE_FIELDS;
import static cdcformats.jvm.decoders.ArcionDecoder.FIELD_PREFIX;
import static cdcformats.jvm.decoders.ArcionDecoder.NAMESPACE_HASH;
import static cdcformats.jvm.decoders.ArcionDecoder.TABLE_HASH;
import static cdcformats.jvm.decoders.ArcionDecoder.TIMESTAMP;

import cdcformats.jvm.decoders.ArcionDecoder;
import cdcformats.jvm.decoders.DecodeException;
import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.decoders.Json;
import cdcformats.jvm.decoders.Messages;
import cdcformats.jvm.decoders.PerTable;
import cdcformats.jvm.decoders.TypedText;
import cdcformats.jvm.encoders.KeptFields.Kept;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code codecs/arcion.py}'s encoder in Java: each event as {@code encode_exact(written(event))} writes it, one
 * realtime message or snapshot row. The normal form is the event as far as arcion carries it ({@link KeyedByColumns}:
 * key cells the row lacks written in front of it), reshaped to the changes Arcion writes ({@link #reshaped}), then a
 * realtime message's table (the option {@code table} where the event names none), a snapshot row of the option's table
 * without cursor, values as the JSON values that read back typed by the option {@code column_types}, the key read
 * back out of the row, the cursor as a JSON object whose timestamp is the commit time, and the attributes as decoding
 * gives them. The message is written by {@link JsonOut#msgspec}.
 *
 * <p>Settings: {@code mode} (auto, realtime or snapshot), {@code table} (a JSON array [catalog, schema, name]),
 * {@code key_columns}/{@code key_columns_per_table} and {@code column_types}/{@code column_types_per_table}, as
 * {@code ArcionCodec.jvm_encoder()} gives them (the decoder's).
 */
public final class ArcionEncoder extends KeyedByColumns implements MessageEncoder {
    private static final String NAME = "arcion";
    private static final long MILLISECOND = 1000L;
    private static final Map<String, String> TYPE_OF_OP = Map.of("INSERT", "I", "UPDATE", "U", "DELETE", "D");
    private static final Set<String> CARRIES = Set.of(
        "op.INSERT", "op.UPDATE", "op.DELETE", "op.READ", "table", "table.schema", "table.catalog",
        "key", "before", "after", "image.columns", "cell.type",
        "value.null", "value.bool", "value.int", "value.float", "value.str", "value.decimal", "value.off_type",
        "value.nested", "source.position", "source.commit_time");
    private static final List<Shape> REALTIME_SHAPES = List.of(new Shape("INSERT", OPTIONAL, OPTIONAL),
        new Shape("UPDATE", OPTIONAL, OPTIONAL), new Shape("DELETE", OPTIONAL, OPTIONAL));
    private static final List<Shape> SNAPSHOT_SHAPES = List.of(new Shape("READ", ABSENT, PRESENT));
    private static final List<Shape> SHAPES = List.of(REALTIME_SHAPES.get(0), REALTIME_SHAPES.get(1),
        REALTIME_SHAPES.get(2), SNAPSHOT_SHAPES.get(0));

    private final String mode;
    private final Events.Table optionTable; // null without the option table
    private final PerTable columnTypes;

    public ArcionEncoder(Map<String, String> settings) {
        super(NAME, carried(settings), Set.of(NAMESPACE_HASH, TABLE_HASH, CURSOR_JSON, FIELD_PREFIX),
            shapes(settings.get("mode")), settings, true);
        mode = settings.get("mode");
        try {
            String[] table = ArcionDecoder.optionTable(settings);
            optionTable = table == null ? null : new Events.Table(table[0], table[1], table[2]);
            columnTypes = columnTypes(settings);
        } catch (DecodeException error) {
            throw new IllegalArgumentException("arcion: " + error.reason, error);
        }
    }

    private static PerTable columnTypes(Map<String, String> settings) throws DecodeException {
        return new PerTable(settings, "column_types", Map.of());
    }

    /**
     * {@code ArcionCodec.carries} as its options make it: NaN and infinities carried where {@code column_types} types
     * text (their text reads back in a FLOAT column); without it, no cell types and no decimals.
     */
    private static Set<String> carried(Map<String, String> settings) {
        Set<String> carries = new HashSet<>(CARRIES);
        PerTable columnTypes;
        try {
            columnTypes = columnTypes(settings);
        } catch (DecodeException error) {
            throw new IllegalArgumentException("arcion: column_types: " + error.reason, error);
        }
        if (!((Map<?, ?>) columnTypes.forTable(null)).isEmpty() || columnTypes.givesPerTable()) {
            carries.add("value.float_nonfinite");
        } else {
            carries.remove("cell.type");
            carries.remove("value.decimal");
        }
        return carries;
    }

    /** {@code ArcionCodec.shapes} in a mode: in mode snapshot a snapshot row alone, in mode realtime messages alone. */
    private static List<Shape> shapes(String mode) {
        return mode.equals("auto") ? SHAPES : mode.equals("snapshot") ? SNAPSHOT_SHAPES : REALTIME_SHAPES;
    }

    @Override
    public byte[] encode(Events.Event event) throws EncodeException {
        return JsonOut.msgspec(message(normalForm(event))).getBytes(StandardCharsets.UTF_8);
    }

    /** {@code ArcionCodec.encode_event}: the snapshot row or realtime message of an event of the normal form. */
    private static Object message(Events.Event event) throws EncodeException {
        if (event.op().equals("READ")) {
            return row(event.after() == null ? List.of() : event.after());
        }
        Events.Table table = event.table();
        String opType = TYPE_OF_OP.get(event.op());
        if (table == null || opType == null) {
            throw new EncodeException("a realtime message has an opType I, U or D and names its table", "op");
        }
        Map<String, Object> namespace = new LinkedHashMap<>();
        namespace.put("catalog", table.catalog());
        namespace.put("schema", table.schema());
        Map<String, Object> tableName = new LinkedHashMap<>();
        tableName.put("namespace", namespace);
        tableName.put("name", table.name());
        boolean attributes = !event.attributes().isEmpty();
        Set<Object> cursorJson = new HashSet<>();
        if (attributes) { // the hashes, nested cursor entries, kept fields
            putHash(namespace, attribute(event, NAMESPACE_HASH));
            putHash(tableName, attribute(event, TABLE_HASH));
            for (Events.Entry attribute : event.attributes()) {
                if (attribute.name().equals(CURSOR_JSON)) {
                    cursorJson.add(attribute.value());
                }
            }
        }
        Map<String, Object> cursor = new LinkedHashMap<>();
        for (Events.Entry entry : event.source().position()) {
            cursor.put(entry.name(), cursorJson.contains(entry.name())
                ? KeptFields.raw(entry.value(), "source.position." + entry.name()) : entry.value());
        }
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("tableName", tableName);
        document.put("opType", opType);
        document.put("cursor", cursor);
        document.put("before", event.before() == null ? null : row(event.before()));
        document.put("after", event.after() == null ? null : row(event.after()));
        if (attributes) {
            document.putAll(KeptFields.write(event.attributes(), FIELD_PREFIX, ENVELOPE_FIELDS));
        }
        return document;
    }

    private static void putHash(Map<String, Object> fields, Object hash) {
        if (!Json.isNull(hash)) {
            fields.put("hash", hash);
        }
    }

    /** {@code arcion._row}: a row's JSON object, each column's JSON value (the last of a name). */
    private static Map<String, Object> row(List<Events.Cell> cells) {
        Map<String, Object> row = new LinkedHashMap<>();
        for (Events.Cell cell : cells) {
            row.put(cell.name(), jsonValue(cell.value(), cell.type()));
        }
        return row;
    }

    /**
     * {@code arcion._json_value}: the JSON value of a cell: typed values, and values JSON has no number for (a
     * decimal, NaN, an infinity), as their text; a nested value as nested JSON, whatever its column's type.
     */
    private static Object jsonValue(Object value, String type) {
        if (Values.isNested(value)) {
            return Values.jsonForm(value);
        }
        if (!Json.isNull(value) && (type != null || !isScalar(value) || Values.isNonFinite(value))) {
            return Values.render(value);
        }
        return value;
    }

    /** Of {@code json_message.SCALAR_TYPES}: text, an integer, a double, a boolean or null. */
    private static boolean isScalar(Object value) {
        return Json.isNull(value) || value instanceof String || value instanceof Long || value instanceof Double
            || value instanceof Boolean;
    }

    // -- the normal form ----------------------------------------------------------------------------------------------

    /**
     * {@code ArcionCodec.reshaped}: an UPSERT is an I message with its images; a snapshot row is the after image
     * alone (of an INSERT, UPSERT or UPDATE in mode snapshot), and in mode realtime a READ is an I message. A
     * TRUNCATE, and a DELETE in mode snapshot, have no form.
     */
    @Override
    protected Events.Event reshaped(Events.Event event) throws EncodeException {
        String op = event.op();
        if (op.equals("TRUNCATE") || mode.equals("snapshot") && op.equals("DELETE")) {
            return super.reshaped(event);
        }
        if (mode.equals("snapshot") || op.equals("READ") && mode.equals("auto")) {
            return new Events.Event("READ", event.table(), event.key(), null,
                event.after() == null ? List.of() : event.after(), event.source(), event.keyOnly(),
                event.attributes());
        }
        return new Events.Event("INSERT", event.table(), event.key(), event.before(), event.after(), event.source(),
            event.keyOnly(), event.attributes());
    }

    /**
     * {@code ArcionCodec.normal_form}: a realtime message names its table (the option table names it when the event
     * does not); a snapshot row is a bare row of the table of the option table; values as the JSON values that read
     * back typed by the option column_types; the cursor as a JSON object; the attributes as decoding gives them.
     */
    @Override
    public Events.Event normalForm(Events.Event event) throws EncodeException {
        Events.Event written = super.normalForm(event);
        boolean snapshot = written.op().equals("READ");
        Events.Table table = written.table();
        Events.Source source = written.source();
        List<Events.Cell> after = written.after();
        if (snapshot) {
            table = optionTable;
            source = new Events.Source(source.system(), List.of(), null, source.captureTimeUs());
            if (mode.equals("auto")) { // an opType column would read back as a realtime message
                after = withoutOpType(after);
            }
        } else if (table == null) {
            if (optionTable == null) {
                throw EncodeException.refused("requires table", "table",
                    "an Arcion realtime message names its table: give the option table");
            }
            table = optionTable;
        }
        Map<?, ?> types = (Map<?, ?>) columnTypes.forTable(
            table == null ? null : new String[] {table.catalog(), table.schema(), table.name()});
        List<Events.Cell> before = readBack(written.before(), types);
        after = readBack(after, types);
        List<Events.Cell> key = written.key();
        if (keyColumns.any()) {
            List<Events.Cell> image = written.op().equals("DELETE") || after == null ? before : after;
            if (snapshot) { // a snapshot row's opType column is none of its key, in any mode
                image = withoutOpType(image);
            }
            key = keyColumns.keyOf(table, image);
        }
        return new Events.Event(written.op(), table, key, before, after,
            snapshot ? source : cursorAsWritten(source), written.keyOnly(),
            snapshot ? List.of() : attributesAsDecoded(written));
    }

    private static List<Events.Cell> withoutOpType(List<Events.Cell> image) {
        List<Events.Cell> cells = new ArrayList<>(image.size());
        for (Events.Cell cell : image) {
            if (!cell.name().equals("opType")) {
                cells.add(cell);
            }
        }
        return cells;
    }

    /** Each cell of an image (null: none) as {@link #readBack(Events.Cell, String)} reads it back. */
    private static List<Events.Cell> readBack(List<Events.Cell> image, Map<?, ?> types) {
        if (image == null) {
            return null;
        }
        List<Events.Cell> cells = new ArrayList<>(image.size());
        for (Events.Cell cell : image) {
            cells.add(readBack(cell, (String) types.get(cell.name())));
        }
        return cells;
    }

    /**
     * {@code arcion._read_back}: the cell that decoding its JSON value gives, in a column of {@code typeName} by the
     * option column_types (which it is written with).
     */
    private static Events.Cell readBack(Events.Cell cell, String typeName) {
        Object value = cell.value();
        boolean asIs = Json.isNull(value) || value instanceof String || value instanceof Long
            || value instanceof Boolean;
        if (typeName == null && cell.type() == null && asIs && cell.version() == null
                && cell.kind().equals(Events.PUT)) {
            return cell; // a JSON value of its own, read back as it is
        }
        value = jsonValue(value, typeName);
        if (typeName != null && value instanceof String) {
            value = TypedText.parse((String) value, typeName);
        }
        return new Events.Cell(cell.name(), value, typeName, null, Events.PUT);
    }

    /**
     * {@code arcion._cursor_as_written}: the cursor is a JSON object of JSON values, whose timestamp is the commit
     * time: a source position's repeated names are left out and its other values written as text, and the commit
     * time is the cursor's timestamp (added where it has none).
     */
    private static Events.Source cursorAsWritten(Events.Source source) {
        List<Events.Entry> cursor = new ArrayList<>(source.position().size() + 1);
        Set<String> seen = new HashSet<>();
        for (Events.Entry entry : source.position()) {
            if (!seen.add(entry.name())) {
                continue;
            }
            Object value = entry.value();
            cursor.add(isScalar(value) && !Values.isNonFinite(value) ? entry
                : new Events.Entry(entry.name(), Values.render(value)));
        }
        if (!seen.contains(TIMESTAMP) && source.commitTimeUs() != null) {
            cursor.add(new Events.Entry(TIMESTAMP, Math.floorDiv(source.commitTimeUs(), MILLISECOND)));
        }
        return new Events.Source(source.system(), cursor, commitTime(cursor), source.captureTimeUs());
    }

    /** {@code arcion._commit_time}: the cursor's first timestamp, an integer of milliseconds, if it fits 64 bits. */
    private static Long commitTime(List<Events.Entry> cursor) {
        for (Events.Entry entry : cursor) {
            if (entry.name().equals(TIMESTAMP)) {
                return entry.value() instanceof Long ? Messages.toMicroseconds((Long) entry.value(), MILLISECOND)
                    : null;
            }
        }
        return null;
    }

    /**
     * {@code arcion._attributes_as_decoded}: the hashes and the kept fields as the kit keeps them, and between them
     * an {@code arcion.cursor.json} for each cursor entry that holds JSON text of an object or array, in cursor order.
     */
    private static List<Events.Entry> attributesAsDecoded(Events.Event event) {
        List<Events.Entry> kept = KeptFields.asDecoded(event.attributes(), ArcionEncoder::attributeGroup);
        int hashes = 0;
        while (hashes < kept.size() && (kept.get(hashes).name().equals(NAMESPACE_HASH)
                || kept.get(hashes).name().equals(TABLE_HASH))) {
            hashes++;
        }
        Set<Object> nested = new HashSet<>();
        for (Events.Entry attribute : event.attributes()) {
            if (attribute.name().equals(CURSOR_JSON)) {
                nested.add(attribute.value());
            }
        }
        List<Events.Entry> decoded = new ArrayList<>(kept.subList(0, hashes));
        for (Events.Entry entry : event.source().position()) {
            if (nested.contains(entry.name()) && KeptFields.isCanonical(entry.value(), true)) {
                decoded.add(new Events.Entry(CURSOR_JSON, entry.name()));
            }
        }
        decoded.addAll(kept.subList(hashes, kept.size()));
        return decoded;
    }

    /** {@code arcion._attribute_group}: the namespace hash, the table hash (64-bit integers), then the kept fields. */
    private static Kept attributeGroup(String name, Object value) {
        if (name.equals(NAMESPACE_HASH) || name.equals(TABLE_HASH)) {
            return value instanceof Long ? new Kept(name.equals(NAMESPACE_HASH) ? 0 : 1, value) : null;
        }
        return KeptFields.isKeptField(name, value, FIELD_PREFIX, ENVELOPE_FIELDS) ? new Kept(2, value) : null;
    }
}
