package cdcformats.jvm.decoders;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Arcion Replicant's NATIVE JSON ({@code arcion.py}, whose docstring is the format's description) decoded inside
 * Spark's JVM, rule for rule as {@code ArcionCodec.decode_message}. Settings: {@code max_message_bytes}, {@code mode}
 * (auto, realtime or snapshot), {@code table} (a JSON array [catalog, schema, name], for snapshot rows),
 * {@code key_columns}/{@code key_columns_per_table} and {@code column_types}/{@code column_types_per_table} (see
 * {@link PerTable}).
 */
public final class ArcionDecoder extends JsonDecoder {
    // The attributes and fields of the format, which its encoder writes back too.
    public static final String NAMESPACE_HASH = "arcion.namespace_hash";
    public static final String TABLE_HASH = "arcion.table_hash";
    public static final String CURSOR_JSON = "arcion.cursor.json";
    public static final String FIELD_PREFIX = "arcion.field.";
    public static final Set<String> ENVELOPE_FIELDS = Set.of("tableName", "opType", "cursor", "before", "after");
    public static final String TIMESTAMP = "timestamp"; // the cursor's entry that holds the commit time
    private static final long MILLISECOND = 1_000;

    private final String mode;
    private final String[] snapshotTable; // catalog, schema, name; null without the option
    private final PerTable columnTypes;

    public ArcionDecoder(Map<String, String> settings) throws DecodeException {
        super(settings);
        this.mode = settings.get("mode");
        this.snapshotTable = optionTable(settings);
        this.columnTypes = new PerTable(settings, "column_types", Map.of());
    }

    /**
     * The option {@code table} of the settings (a JSON array [catalog, schema, name]) as catalog, schema and name,
     * each null where it has none; null without the option. The encoder reads it too.
     */
    public static String[] optionTable(Map<String, String> settings) throws DecodeException {
        String table = settings.get("table");
        if (table == null) {
            return null;
        }
        List<?> parts = (List<?>) Json.parse(table.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        String[] names = new String[3];
        for (int i = 0; i < 3; i++) {
            names[i] = parts.get(i) instanceof String ? (String) parts.get(i) : null;
        }
        return names;
    }

    @Override
    protected Events.Event decode(Map<String, Object> document) throws DecodeException {
        if (mode.equals("snapshot") || (mode.equals("auto") && !document.containsKey("opType"))) {
            String[] table = snapshotTable == null ? new String[3] : snapshotTable;
            List<Events.Cell> after = cells(document, table, "");
            return Events.event("READ", snapshotTable == null ? null : Events.table(table[0], table[1], table[2]),
                keyOf(table, after), null, after, null, List.of(), null, null, false, List.of());
        }
        return realtime(document);
    }

    private Events.Event realtime(Map<String, Object> document) throws DecodeException {
        Object opType = document.get("opType");
        String op = "I".equals(opType) ? "INSERT" : "U".equals(opType) ? "UPDATE" : "D".equals(opType) ? "DELETE"
            : null;
        if (op == null) {
            throw new DecodeException("expected one of I, U, D, got " + Python.repr(opType), "opType");
        }
        List<Map.Entry<String, Object>> attributes = new ArrayList<>();
        String[] table = tableName(document.get("tableName"), attributes);
        Object cursor = document.containsKey("cursor") ? document.get("cursor") : Map.of();
        if (!(cursor instanceof Map)) {
            throw new DecodeException("expected an object, got " + Json.typeName(cursor), "cursor");
        }
        List<Map.Entry<String, Object>> position = new ArrayList<>();
        Long commitTimeUs = null;
        for (Map.Entry<?, ?> entry : ((Map<?, ?>) cursor).entrySet()) {
            String name = (String) entry.getKey();
            Object value = entry.getValue();
            if (value instanceof Map || value instanceof List) { // kept as its JSON text, and named as such
                value = Json.write(value);
                attributes.add(Messages.pair(CURSOR_JSON, name));
            } else if (value instanceof BigInteger) {
                throw new DecodeException(value + " is outside the signed 64-bit range", "cursor." + name);
            }
            if (name.equals(TIMESTAMP) && value instanceof Long) { // _commit_time: milliseconds, if they fit
                commitTimeUs = Messages.toMicroseconds((Long) value, MILLISECOND);
            }
            position.add(Messages.pair(name, value));
        }
        attributes.addAll(Messages.keptFields(FIELD_PREFIX, document, ENVELOPE_FIELDS));
        List<Events.Cell> before = image(document, "before", table);
        List<Events.Cell> after = image(document, "after", table);
        List<Events.Cell> key = keyRead(table, op, before, after);
        return Events.event(op, Events.table(table[0], table[1], table[2]), key, before, after, null, position,
            commitTimeUs, null, false, attributes);
    }

    /** The table (catalog, schema, name) of {@code tableName}; its hashes are added to {@code attributes}. */
    private static String[] tableName(Object value, List<Map.Entry<String, Object>> attributes)
            throws DecodeException {
        if (!(value instanceof Map)) {
            throw new DecodeException("expected an object, got " + Json.typeName(value), "tableName");
        }
        Map<?, ?> tableName = (Map<?, ?>) value;
        Object namespaceField = tableName.containsKey("namespace") ? tableName.get("namespace") : Map.of();
        if (!(namespaceField instanceof Map)) {
            throw new DecodeException("expected an object, got " + Json.typeName(namespaceField),
                "tableName.namespace");
        }
        Map<?, ?> namespace = (Map<?, ?>) namespaceField;
        hash(namespace, NAMESPACE_HASH, "tableName.namespace.hash", attributes);
        hash(tableName, TABLE_HASH, "tableName.hash", attributes);
        String name = part(tableName, "name", "tableName.name");
        String schema = part(namespace, "schema", "tableName.namespace.schema");
        String catalog = part(namespace, "catalog", "tableName.namespace.catalog");
        if (name == null) {
            throw new DecodeException("the table name is missing", "tableName.name");
        }
        return new String[] {catalog, schema, name};
    }

    private static void hash(Map<?, ?> holder, String attribute, String path,
                             List<Map.Entry<String, Object>> attributes) throws DecodeException {
        if (holder.containsKey("hash")) {
            Object hash = holder.get("hash");
            if (!(hash instanceof Long)) {
                throw new DecodeException("expected a 64-bit integer, got " + Python.repr(hash), path);
            }
            attributes.add(Messages.pair(attribute, hash));
        }
    }

    private static String part(Map<?, ?> holder, String field, String path) throws DecodeException {
        Object part = holder.get(field);
        if (Json.isNull(part)) {
            return null;
        }
        if (!(part instanceof String)) {
            throw new DecodeException("expected a string or null, got " + Json.typeName(part), path);
        }
        return (String) part;
    }

    private List<Events.Cell> image(Map<String, Object> document, String name, String[] table)
            throws DecodeException {
        Object row = document.get(name);
        if (Json.isNull(row)) {
            return null;
        }
        if (!(row instanceof Map)) {
            throw new DecodeException("expected an object or null, got " + Json.typeName(row), name);
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> columns = (Map<String, Object>) row;
        return cells(columns, table, name + ".");
    }

    private List<Events.Cell> cells(Map<String, Object> row, String[] table, String path) throws DecodeException {
        Map<?, ?> types = (Map<?, ?>) columnTypes.forTable(table);
        List<Events.Cell> cells = new ArrayList<>(row.size());
        for (Map.Entry<String, Object> column : row.entrySet()) {
            Object value = column.getValue();
            String typeName = (String) types.get(column.getKey());
            if (typeName != null && value instanceof String) {
                value = TypedText.parse((String) value, typeName);
            }
            value = Messages.valueOf(value, path + column.getKey());
            cells.add(Events.cell(column.getKey(), value, typeName, null, Events.PUT));
        }
        return cells;
    }
}
