package cdcformats.jvm.decoders;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Maxwell's daemon JSON ({@code maxwell.py}, whose docstring is the format's description) decoded inside Spark's JVM,
 * rule for rule as {@code MaxwellJsonCodec.decode_messages}, for a message that gives exactly one event: a message
 * that changes no row, skipped with {@code skip_ddl}, gives none, which Spark's Arrow path refuses, and so does this.
 * Settings: {@code max_message_bytes}, {@code skip_ddl} ("true" or "false"), and {@code key_columns} and
 * {@code key_columns_per_table} (see {@link JsonDecoder}).
 */
public final class MaxwellDecoder extends JsonDecoder {
    private static final String FIELD_PREFIX = "maxwell.field.";
    private static final String JSON_TYPE = "JSON";
    private static final List<String> POSITION_FIELDS =
        List.of("xid", "xoffset", "commit", "position", "gtid", "server_id", "thread_id");
    private static final Set<String> ROW_FIELDS = Set.of("database", "table", "type", "ts", "xid", "xoffset",
        "commit", "position", "gtid", "server_id", "thread_id", "primary_key_columns", "data", "old");
    private static final Set<String> ROW_AND_KEY_FIELDS = withPrimaryKey();
    // In the order an error message lists them.
    private static final Map<String, String> OP_OF_TYPE =
        Messages.inOrder("insert", "INSERT", "update", "UPDATE", "delete", "DELETE", "bootstrap-insert", "READ");
    private static final Set<String> BOOTSTRAP_MARKERS = Set.of("bootstrap-start", "bootstrap-complete");
    private static final Pattern DDL_TYPE = Pattern.compile("(database|table)-(create|alter|drop)");
    private static final long SECOND = 1_000_000;

    private final boolean skipDdl;

    public MaxwellDecoder(Map<String, String> settings) throws DecodeException {
        super(settings);
        this.skipDdl = Boolean.parseBoolean(settings.get("skip_ddl"));
    }

    private static Set<String> withPrimaryKey() {
        Set<String> fields = new HashSet<>(ROW_FIELDS);
        fields.add("primary_key");
        return Set.copyOf(fields);
    }

    @Override
    protected Events.Event decode(Map<String, Object> document) throws DecodeException {
        Object rowType = document.get("type");
        if (skipDdl && changesNoRow(rowType)) {
            throw Messages.notOneEvent(0); // skipped: no event
        }
        String op = op(rowType);
        String[] table = Messages.databaseTable(document.get("database"), document.get("table"));
        List<String> dataNames = new ArrayList<>();
        List<Events.Cell> data = image(document.get("data"), "data", dataNames);
        List<Events.Cell> before = op.equals("DELETE") ? data : null;
        List<Events.Cell> after = op.equals("DELETE") ? null : data;
        if (document.containsKey("old")) {
            if (!op.equals("UPDATE")) {
                throw new DecodeException("only an update has old values, not a " + rowType, "old");
            }
            List<String> oldNames = new ArrayList<>();
            List<Events.Cell> old = image(document.get("old"), "old", oldNames);
            before = merged(data, dataNames, old, oldNames);
        } else if (op.equals("UPDATE")) {
            before = data;
        }
        boolean readsPrimaryKey = false;
        List<Events.Cell> key;
        List<String> names = keyNames(document.containsKey("primary_key_columns")
            ? document.get("primary_key_columns") : List.of());
        String[] schemaTable = table == null ? null : new String[] {null, table[0], table[1]};
        List<?> columns = keyColumns(schemaTable);
        // A message that names no key columns takes them from key_columns; primary_key holds their values where
        // there are key columns to pair them with, and is otherwise just another kept field.
        if (names.isEmpty() && !document.containsKey("primary_key")) {
            key = keyOf(schemaTable, data);
        } else {
            List<?> keyColumnNames = names.isEmpty() ? columns : names;
            if (document.containsKey("primary_key") && !keyColumnNames.isEmpty()) {
                key = keyFromValues(keyColumnNames, document.get("primary_key"));
                readsPrimaryKey = true;
            } else {
                key = keyFromData(keyColumnNames, dataNames, data);
            }
        }
        List<Map.Entry<String, Object>> attributes = Messages.keptFields(FIELD_PREFIX, document,
            readsPrimaryKey ? ROW_AND_KEY_FIELDS : ROW_FIELDS);
        Long commitTimeUs = commitTime(document.get("ts"));
        List<Map.Entry<String, Object>> position = position(document);
        return Events.event(op, table == null ? null : Events.table(null, table[0], table[1]), key, before, after,
            null, position, commitTimeUs, null, false, attributes);
    }

    /** {@code _changes_no_row}: a bootstrap marker or a schema change, which {@code skip_ddl} skips. */
    private static boolean changesNoRow(Object rowType) {
        return rowType instanceof String && (BOOTSTRAP_MARKERS.contains(rowType)
            || DDL_TYPE.matcher((String) rowType).matches());
    }

    /** {@code _op}: the op of a row change's type; a bootstrap marker, a schema change or anything else is refused. */
    private static String op(Object rowType) throws DecodeException {
        String op = rowType instanceof String ? OP_OF_TYPE.get(rowType) : null;
        if (op != null) {
            return op;
        }
        String reason;
        if (rowType instanceof String && BOOTSTRAP_MARKERS.contains(rowType)) {
            reason = rowType
                + " marks a bootstrap (Maxwell's snapshot) and is no row change (option skip_ddl skips it)";
        } else if (rowType instanceof String && DDL_TYPE.matcher((String) rowType).matches()) {
            reason = rowType + " is a schema change (output_ddl) and no row change (option skip_ddl skips it)";
        } else {
            reason = "expected a row change, one of " + String.join(", ", OP_OF_TYPE.keySet()) + "; got "
                + excerpt(rowType);
        }
        throw new DecodeException(reason, "type");
    }

    /** {@code _json_excerpt}: a scalar as JSON (cut to 40 characters), else what kind of value it is. */
    private static String excerpt(Object value) {
        if (value instanceof Map || value instanceof List) {
            return Json.typeName(value);
        }
        String text = Json.write(value);
        int length = text.codePointCount(0, text.length());
        return length <= 40 ? text : text.substring(0, text.offsetByCodePoints(0, 37)) + "...";
    }

    /** {@code _cell}: a scalar as it is, an array or object as its JSON text in a cell of type JSON. */
    private static Events.Cell cell(String name, Object value, String path) throws DecodeException {
        if (value instanceof Map || value instanceof List) {
            return Events.cell(name, Json.write(value), JSON_TYPE, null, Events.PUT);
        }
        if (value instanceof BigInteger) {
            throw new DecodeException("cell " + Python.repr(name) + " value: integer " + value
                + " is outside the signed 64-bit range", path);
        }
        return Events.cell(name, value, null, null, Events.PUT);
    }

    /** {@code _image}: the cells of a row object, in its order; their names are added to {@code names}. */
    private static List<Events.Cell> image(Object row, String field, List<String> names) throws DecodeException {
        if (!(row instanceof Map)) {
            throw new DecodeException("expected an object, got " + Json.typeName(row), field);
        }
        List<Events.Cell> cells = new ArrayList<>();
        for (Map.Entry<?, ?> column : ((Map<?, ?>) row).entrySet()) {
            String name = (String) column.getKey();
            cells.add(cell(name, column.getValue(), field + "." + name));
            names.add(name);
        }
        return cells;
    }

    /** {@code _merged}: {@code data} with the values of {@code old} put back, then the columns only old has. */
    private static List<Events.Cell> merged(List<Events.Cell> data, List<String> dataNames, List<Events.Cell> old,
                                            List<String> oldNames) {
        List<Events.Cell> cells = new ArrayList<>(data.size() + old.size());
        for (int i = 0; i < data.size(); i++) {
            int inOld = oldNames.indexOf(dataNames.get(i));
            cells.add(inOld >= 0 ? old.get(inOld) : data.get(i));
        }
        for (int i = 0; i < old.size(); i++) {
            if (!dataNames.contains(oldNames.get(i))) {
                cells.add(old.get(i));
            }
        }
        return cells;
    }

    /** {@code _key_names}: the key column names a message gives. */
    private static List<String> keyNames(Object names) throws DecodeException {
        boolean valid = names instanceof List;
        if (valid) {
            for (Object name : (List<?>) names) {
                valid &= name instanceof String;
            }
        }
        if (!valid) {
            throw new DecodeException("expected an array of column names, got " + excerpt(names),
                "primary_key_columns");
        }
        @SuppressWarnings("unchecked")
        List<String> columnNames = (List<String>) names;
        return columnNames;
    }

    /** The key of {@code primary_key}'s values, one per key column; a column named twice keeps its first value. */
    private static List<Events.Cell> keyFromValues(List<?> names, Object values) throws DecodeException {
        if (!(values instanceof List) || ((List<?>) values).size() != names.size()) {
            List<String> texts = new ArrayList<>();
            for (Object name : names) {
                texts.add((String) name);
            }
            throw new DecodeException("expected an array of " + names.size() + " key values, one per key column "
                + String.join(", ", texts) + "; got " + excerpt(values), "primary_key");
        }
        Map<Object, Events.Cell> key = new LinkedHashMap<>();
        for (int index = 0; index < names.size(); index++) {
            String name = (String) names.get(index);
            Events.Cell cell = cell(name, ((List<?>) values).get(index), "primary_key[" + index + "]");
            key.putIfAbsent(name, cell);
        }
        return new ArrayList<>(key.values());
    }

    /** The key read out of {@code data} by column name (a null cell for a column it lacks), each column once. */
    private static List<Events.Cell> keyFromData(List<?> names, List<String> dataNames, List<Events.Cell> data) {
        Map<Object, Events.Cell> key = new LinkedHashMap<>();
        for (Object name : names) {
            int index = dataNames.indexOf(name);
            key.putIfAbsent(name, index >= 0 ? data.get(index) : Events.cell((String) name, null, null, null,
                Events.PUT));
        }
        return new ArrayList<>(key.values());
    }

    /** {@code ts}: whole seconds, as microseconds; null or absent is none. */
    private static Long commitTime(Object seconds) throws DecodeException {
        if (Json.isNull(seconds)) {
            return null;
        }
        Long commitTime = seconds instanceof Long ? Messages.toMicroseconds((Long) seconds, SECOND) : null;
        if (commitTime == null) {
            throw new DecodeException("expected a 64-bit timestamp in seconds, got " + excerpt(seconds), "ts");
        }
        return commitTime;
    }

    /** The position fields the message has, in Maxwell's order, each a scalar kept verbatim. */
    private static List<Map.Entry<String, Object>> position(Map<String, Object> document) throws DecodeException {
        return Messages.scalarFields(document, POSITION_FIELDS, "a scalar", MaxwellDecoder::excerpt);
    }
}
