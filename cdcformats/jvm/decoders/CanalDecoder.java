package cdcformats.jvm.decoders;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Alibaba Canal's flat message ({@code canal.py}, whose docstring is the format's description) decoded inside
 * Spark's JVM, rule for rule as {@code CanalJsonCodec.decode_messages}, for a message that gives exactly one event.
 * A Canal message holds N rows, or none (a DDL message skipped with {@code skip_ddl}); Spark's Arrow path reads a
 * message with {@code ChangeEventDeserializer}, which refuses any message that is not exactly one event, and so
 * does this. Settings: {@code skip_ddl} ("true" or "false") and {@code max_message_bytes}.
 */
public final class CanalDecoder extends JsonDecoder {
    private static final String SQL_ATTRIBUTE = "canal.sql";
    private static final String SQL_TYPE_ATTRIBUTE = "canal.sqlType";
    private static final String FIELD_PREFIX = "canal.field.";
    private static final Set<String> FIELDS = Set.of("data", "database", "es", "gtid", "id", "isDdl", "mysqlType",
        "old", "pkNames", "sql", "sqlType", "table", "ts", "type");
    private static final List<String> POSITION_FIELDS = List.of("id", "gtid");
    // In the order an error message lists them.
    private static final Map<String, String> OP_OF_TYPE =
        Messages.inOrder("INSERT", "INSERT", "UPDATE", "UPDATE", "DELETE", "DELETE", "TRUNCATE", "TRUNCATE",
            "INIT", "READ"); // INIT: a row of an initial snapshot (Flink CDC), its row the after image
    // Canal's other event types: schema changes, statements and markers, none of which changes a row.
    private static final Set<String> NO_ROW_TYPES = Set.of("CREATE", "ALTER", "ERASE", "QUERY", "RENAME", "CINDEX",
        "DINDEX", "GTID", "XACOMMIT", "XAROLLBACK", "MHEARTBEAT");
    private static final long MILLISECOND = 1_000;

    private final boolean skipDdl;

    public CanalDecoder(Map<String, String> settings) throws DecodeException {
        super(settings);
        this.skipDdl = Boolean.parseBoolean(settings.get("skip_ddl"));
    }

    @Override
    protected Events.Event decode(Map<String, Object> document) throws DecodeException {
        Object typeName = document.get("type");
        String op = typeName instanceof String ? OP_OF_TYPE.get(typeName) : null;
        if (op == null) {
            if (typeName instanceof String && NO_ROW_TYPES.contains(typeName) && skipDdl) {
                throw Messages.notOneEvent(0); // skipped: no event
            }
            String found = typeName instanceof String ? Python.repr(typeName) : Json.typeName(typeName);
            throw new DecodeException("type " + found + " is not a row change; expected one of "
                + String.join(", ", OP_OF_TYPE.keySet()) + " (option skip_ddl skips DDL messages)", "type");
        }
        Object isDdl = document.get("isDdl");
        if ((!Json.isNull(isDdl) && !(isDdl instanceof Boolean)) || (Boolean.TRUE.equals(isDdl)
                && !op.equals("TRUNCATE"))) {
            throw new DecodeException("isDdl " + Python.repr(isDdl) + " does not fit type " + typeName, "isDdl");
        }
        String[] tableName = Messages.databaseTable(document.get("database"), document.get("table"));
        Events.Table table = tableName == null ? null : Events.table(null, tableName[0], tableName[1]);
        List<Map.Entry<String, Object>> position = position(document);
        Long commitTimeUs = time(document, "es");
        Long captureTimeUs = time(document, "ts");
        List<Map.Entry<String, Object>> attributes = attributes(document);
        List<Map<?, ?>> rows = objects(document.get("data"), "data");
        List<Map<?, ?>> olds = objects(document.get("old"), "old");
        if (op.equals("TRUNCATE")) {
            if (!rows.isEmpty() || !olds.isEmpty()) {
                throw new DecodeException("a TRUNCATE lists no rows", rows.isEmpty() ? "old" : "data");
            }
            return Events.event(op, table, List.of(), null, null, null, position, commitTimeUs, captureTimeUs, false,
                attributes);
        }
        if (op.equals("UPDATE") && olds.size() != rows.size()) {
            throw new DecodeException("an UPDATE needs one old entry per row: " + rows.size() + " rows, "
                + olds.size() + " entries", "old");
        }
        if (!op.equals("UPDATE") && !olds.isEmpty()) {
            throw new DecodeException("only an UPDATE has old values, not an " + typeName, "old");
        }
        Map<String, String> types = columnTypes(document.get("mysqlType"));
        Set<String> keyNames = keyNames(document.get("pkNames"));
        // Every row is read, as Python reads them all before the deserializer counts the events: a bad row is
        // refused for what is wrong with it, whichever row it is.
        Map<String, Events.Cell> cells = null;
        Map<String, Events.Cell> before = null;
        for (int index = 0; index < rows.size(); index++) {
            cells = cells(rows.get(index), types, "data[" + index + "]");
            before = op.equals("UPDATE") ? before(cells, cells(olds.get(index), types, "old[" + index + "]")) : cells;
        }
        if (rows.size() != 1) {
            throw Messages.notOneEvent(rows.size());
        }
        List<Events.Cell> row = new ArrayList<>(cells.values());
        List<Events.Cell> key = new ArrayList<>();
        for (String name : keyNames) {
            if (cells.containsKey(name)) {
                key.add(cells.get(name));
            }
        }
        return Events.event(op, table, key, op.equals("INSERT") || op.equals("READ") ? null
            : new ArrayList<>(before.values()),
            op.equals("DELETE") ? null : row, null, position, commitTimeUs, captureTimeUs, false, attributes);
    }

    /** {@code _position}: {@code id}, then {@code gtid}, where the message has them, each a JSON scalar. */
    private static List<Map.Entry<String, Object>> position(Map<String, Object> document) throws DecodeException {
        return Messages.scalarFields(document, POSITION_FIELDS, "a JSON scalar", Json::typeName);
    }

    /** {@code _time}: microseconds of a millisecond field; null or absent is none. */
    private static Long time(Map<String, Object> document, String field) throws DecodeException {
        Object value = document.get(field);
        if (Json.isNull(value)) {
            return null;
        }
        Long microseconds = value instanceof Long ? Messages.toMicroseconds((Long) value, MILLISECOND) : null;
        if (microseconds == null) {
            throw new DecodeException("expected a 64-bit millisecond timestamp, got " + Python.repr(value), field);
        }
        return microseconds;
    }

    /** {@code _attributes}: a non-empty {@code sql}, {@code sqlType} as JSON text, then every other field's. */
    private static List<Map.Entry<String, Object>> attributes(Map<String, Object> document) throws DecodeException {
        List<Map.Entry<String, Object>> attributes = new ArrayList<>();
        Object sql = document.get("sql");
        if (!Json.isNull(sql) && !(sql instanceof String)) {
            throw new DecodeException("expected the SQL text, got " + Json.typeName(sql), "sql");
        }
        if (sql instanceof String && !((String) sql).isEmpty()) {
            attributes.add(Messages.pair(SQL_ATTRIBUTE, sql));
        }
        Object sqlType = document.get("sqlType");
        if (!Json.isNull(sqlType)) {
            attributes.add(Messages.pair(SQL_TYPE_ATTRIBUTE, Json.write(sqlType)));
        }
        attributes.addAll(Messages.keptFields(FIELD_PREFIX, document, FIELDS));
        return attributes;
    }

    /** {@code _objects}: the objects of a {@code data} or {@code old} array; null is no objects. */
    private static List<Map<?, ?>> objects(Object items, String field) throws DecodeException {
        List<Map<?, ?>> objects = new ArrayList<>();
        if (Json.isNull(items)) {
            return objects;
        }
        if (!(items instanceof List)) {
            throw new DecodeException("expected an array or null, got " + Json.typeName(items), field);
        }
        List<?> list = (List<?>) items;
        for (int index = 0; index < list.size(); index++) {
            if (!(list.get(index) instanceof Map)) {
                throw new DecodeException("expected an object, got " + Json.typeName(list.get(index)),
                    field + "[" + index + "]");
            }
            objects.add((Map<?, ?>) list.get(index));
        }
        return objects;
    }

    /** {@code _column_types}: each column's {@code mysqlType} name; a null entry types nothing. */
    private static Map<String, String> columnTypes(Object mysqlTypes) throws DecodeException {
        Map<String, String> types = new LinkedHashMap<>();
        if (Json.isNull(mysqlTypes)) {
            return types;
        }
        if (!(mysqlTypes instanceof Map)) {
            throw new DecodeException("expected an object or null, got " + Json.typeName(mysqlTypes), "mysqlType");
        }
        for (Map.Entry<?, ?> entry : ((Map<?, ?>) mysqlTypes).entrySet()) {
            Object typeName = entry.getValue();
            if (typeName != Json.NULL && !(typeName instanceof String)) {
                throw new DecodeException("expected a type name, got " + Json.typeName(typeName),
                    "mysqlType." + entry.getKey());
            }
            if (typeName instanceof String) {
                types.put((String) entry.getKey(), (String) typeName);
            }
        }
        return types;
    }

    /** {@code _key_names}: the {@code pkNames}, a column named twice once. */
    private static Set<String> keyNames(Object names) throws DecodeException {
        Set<String> keyNames = new LinkedHashSet<>();
        if (Json.isNull(names)) {
            return keyNames;
        }
        boolean valid = names instanceof List;
        if (valid) {
            for (Object name : (List<?>) names) {
                valid &= name instanceof String;
                if (valid) {
                    keyNames.add((String) name);
                }
            }
        }
        if (!valid) {
            throw new DecodeException("expected an array of column names or null, got " + Python.repr(names),
                "pkNames");
        }
        return keyNames;
    }

    /** {@code _cells}: a row's cells by name, in its order; a value is text, typed by its column's type. */
    private static Map<String, Events.Cell> cells(Map<?, ?> row, Map<String, String> types, String path)
            throws DecodeException {
        Map<String, Events.Cell> cells = new LinkedHashMap<>();
        for (Map.Entry<?, ?> column : row.entrySet()) {
            String name = (String) column.getKey();
            String typeName = types.get(name);
            Object value = column.getValue();
            String text;
            if (value == Json.NULL) {
                text = null;
            } else if (value instanceof String) {
                text = (String) value;
            } else if (value instanceof Double) {
                text = Numbers.pythonRepr((Double) value);
            } else if (value instanceof Boolean || value instanceof Long || value instanceof BigInteger) {
                text = value.toString(); // Python's repr of an integer, "true"/"false" of a boolean
            } else {
                throw new DecodeException("expected text or null, got " + Json.typeName(value), path + "." + name);
            }
            cells.put(name, Events.cell(name, text == null ? null : TypedText.parseAsJava(text, typeName), typeName,
                null, Events.PUT));
        }
        return cells;
    }

    /** {@code _before}: the row with its {@code old} columns replaced, then the {@code old} columns it lacks. */
    private static Map<String, Events.Cell> before(Map<String, Events.Cell> row, Map<String, Events.Cell> old) {
        Map<String, Events.Cell> before = new LinkedHashMap<>();
        for (Map.Entry<String, Events.Cell> cell : row.entrySet()) {
            before.put(cell.getKey(), old.getOrDefault(cell.getKey(), cell.getValue()));
        }
        for (Map.Entry<String, Events.Cell> cell : old.entrySet()) {
            before.putIfAbsent(cell.getKey(), cell.getValue());
        }
        return before;
    }
}
