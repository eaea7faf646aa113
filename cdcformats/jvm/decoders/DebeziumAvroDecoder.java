package cdcformats.jvm.decoders;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.avro.Schema;

/**
 * Debezium's change event envelope as Confluent's AvroConverter writes it ({@code debezium_avro.py}, whose docstring
 * is the format's description, and {@code _kit/avro_records.py}), decoded inside Spark's JVM rule for rule as
 * {@code DebeziumAvroCodec.decode_messages(KafkaRecord(key, value))}: each part in Confluent's wire format, read with
 * its writer schema, fetched by id ({@link WriterSchemas}); the cells typed as {@code debezium-json} names them
 * ({@link ConnectCells}); a record without a value (a tombstone) holds no change. Settings: those of
 * {@link WriterSchemas}.
 */
public final class DebeziumAvroDecoder implements RecordDecoder {
    private static final String NAME = "debezium-avro";
    private static final String COLUMN_PROPERTY = "cdcformats.column";
    private static final String SOURCE_TYPE = "__debezium.source.column.type";
    // The column types of Connect names and Avro logical types (avro_records._TYPE_OF_NAME): none is a float.
    private static final Set<String> NAMED_TYPES = Set.of("io.debezium.time.Date", "io.debezium.time.Time",
        "io.debezium.time.MicroTime", "io.debezium.time.NanoTime", "io.debezium.time.Timestamp",
        "io.debezium.time.MicroTimestamp", "io.debezium.time.NanoTimestamp", "io.debezium.data.Json",
        "org.apache.kafka.connect.data.Date", "date", "org.apache.kafka.connect.data.Time", "time-millis",
        "time-micros", "org.apache.kafka.connect.data.Timestamp", "timestamp-millis", "timestamp-micros",
        "local-timestamp-millis", "local-timestamp-micros");
    private static final Set<String> NOT_PRIMITIVE = Set.of("record", "array", "map", "enum", "fixed");

    private final WriterSchemas writerSchemas;
    // The schemas read so far, by id, for values and for keys: a registry gives one id to one schema text, which a
    // key and a value may share.
    private final Map<Integer, Registered> values = new ConcurrentHashMap<>();
    private final Map<Integer, Registered> keys = new ConcurrentHashMap<>();

    public DebeziumAvroDecoder(Map<String, String> settings) {
        writerSchemas = WriterSchemas.of(settings);
        if (writerSchemas == null) {
            throw new IllegalArgumentException(NAME + " reads its writer schemas from schema_registry or "
                + "writer_schemas, and the settings give neither");
        }
    }

    @Override
    public Events.Event decode(byte[] key, byte[] value) throws DecodeException {
        if (value == null) {
            return null; // a tombstone: Debezium's marker for log compaction, after the delete that said it
        }
        Registered reader = registered(value, "value");
        Map<?, ?> envelope = reader.read(value, "value");
        Object code = envelope.get("op");
        String op = code instanceof String ? DebeziumEnvelope.OP_OF_CODE.get(code) : null;
        if (op == null) {
            throw new DecodeException("op " + Python.repr(code) + " is not a row change; expected one of c, u, d, r, t",
                "op");
        }
        List<Events.Cell> before = reader.image(envelope.get("before"), "before");
        List<Events.Cell> after = reader.image(envelope.get("after"), "after");
        Object sourceRecord = envelope.get("source");
        if (!(sourceRecord instanceof Map)) {
            throw new DecodeException("expected the source record", "source");
        }
        Map<?, ?> source = (Map<?, ?>) sourceRecord;
        Events.Table table = table(source);
        List<Map.Entry<String, Object>> position = new ArrayList<>();
        for (Field field : reader.position) {
            Object entry = source.get(field.avroName);
            if (entry instanceof Map || entry instanceof List || entry instanceof AvroDatums.Uuid) {
                entry = valueIn(entry, "source." + field.avroName, false);
            }
            if (entry != null) {
                position.add(Messages.pair(field.column, entry));
            }
        }
        Object connector = source.get("connector");
        Long commitTimeUs = DebeziumEnvelope.readTime(source, "source.");
        Long captureTimeUs = DebeziumEnvelope.readTime(envelope, "");
        List<Map.Entry<String, Object>> attributes = new ArrayList<>();
        if (envelope.get("transaction") instanceof Map) {
            for (Map.Entry<?, ?> member : ((Map<?, ?>) envelope.get("transaction")).entrySet()) {
                attributes.add(Messages.pair(DebeziumEnvelope.TRANSACTION_PREFIX + member.getKey(),
                    valueIn(member.getValue(), "transaction." + member.getKey(), false)));
            }
        }
        List<Events.Cell> keyCells = new ArrayList<>();
        if (key != null) {
            Registered keyReader = registered(key, "key");
            Map<?, ?> keyRecord = keyReader.read(key, "key");
            for (Field field : keyReader.keyFields) {
                keyCells.add(field.cell(keyRecord, "key"));
            }
        }
        return Events.event(op, table, keyCells, before, after, connector instanceof String ? (String) connector : null,
            position, commitTimeUs, captureTimeUs, false, attributes);
    }

    /** The file form's line: {@code json.dumps({"key": base64, "value": base64})}, null for a missing part. */
    @Override
    public byte[] line(byte[] key, byte[] value) {
        return ("{\"key\": " + base64(key) + ", \"value\": " + base64(value) + "}").getBytes(StandardCharsets.UTF_8);
    }

    private static String base64(byte[] part) {
        return part == null ? "null" : "\"" + Base64.getEncoder().encodeToString(part) + "\"";
    }

    /** The table a source record names: none where it names none, its db the catalog where it has a schema. */
    private static Events.Table table(Map<?, ?> source) throws DecodeException {
        Object name = source.get("table");
        Object db = source.get("db");
        Object schema = source.get("schema");
        if (!(name instanceof String) && (name != null || db != null || schema != null)) {
            throw new DecodeException("expected the table's name with its db and schema", "source.table");
        }
        if (name == null) {
            return null;
        }
        return schema != null ? Events.table(text(db), text(schema), (String) name)
            : Events.table(null, text(db), (String) name);
    }

    private static String text(Object part) {
        return part == null ? null : part instanceof String ? (String) part : Python.repr(part);
    }

    /** The reader of a framed part's writer schema, by the id its frame names. */
    private Registered registered(byte[] framed, String part) throws DecodeException {
        if (framed.length < 5 || framed[0] != 0) {
            throw new DecodeException("not in Confluent's wire format (magic byte 0x00 and a 4-byte schema id)", part);
        }
        int id = ((framed[1] & 0xff) << 24) | ((framed[2] & 0xff) << 16) | ((framed[3] & 0xff) << 8)
            | (framed[4] & 0xff);
        Map<Integer, Registered> known = part.equals("key") ? keys : values;
        Registered reader = known.get(id);
        if (reader == null) {
            WriterSchemas.Schema schema;
            try {
                schema = writerSchemas.byId(id);
            } catch (DecodeException error) { // the registry's own words, on the part that names the id
                throw new DecodeException(error.reason, part);
            }
            reader = new Registered(schema.text(), id, part);
            known.put(id, reader);
        }
        return reader;
    }

    // -- what a registered schema says of the records written with it (avro_records.Reader) ---------------------

    /** One field of a row, key or source record: its Avro name, its column's name, the cell type it reads as. */
    private static final class Field {
        final String avroName;
        final String column;
        final String cellType;
        final boolean floatColumn; // of column type float: Connect's single, read as Java prints it

        Field(String avroName, String column, String cellType, boolean floatColumn) {
            this.avroName = avroName;
            this.column = column;
            this.cellType = cellType;
            this.floatColumn = floatColumn;
        }

        /** {@code _Field.cell}: the cell of this field in a row or key record. */
        Events.Cell cell(Map<?, ?> record, String path) throws DecodeException {
            Object value = record.get(avroName);
            boolean asRead = !(value instanceof Map || value instanceof List || value instanceof AvroDatums.Uuid);
            if (cellType == null && asRead) { // most cells: read as they are, without a type
                return Events.cell(column, value, null, null, Events.PUT);
            }
            if (!asRead) {
                value = valueIn(value, path + "." + avroName, ConnectCells.connectStruct(cellType));
            }
            if (value instanceof Double && floatColumn && ConnectCells.isConnectFloat(cellType)) {
                value = ConnectSchema.float32((Double) value);
            }
            return Events.cell(column, value, ConnectCells.typeRead(cellType, value), null, Events.PUT);
        }
    }

    private static final class Registered {
        final int id;
        final Schema parsed;
        final List<Field> row = new ArrayList<>();
        final List<Field> keyFields = new ArrayList<>();
        final List<Field> position = new ArrayList<>();

        /** {@code Reader.of}: the schema registered as {@code id}, read for a key's or a value's records. */
        Registered(String text, int id, String part) throws DecodeException {
            this.id = id;
            Object schema;
            try {
                schema = Json.parse(text.getBytes(StandardCharsets.UTF_8));
                parsed = new Schema.Parser().setValidateDefaults(false).parse(text);
            } catch (DecodeException | RuntimeException error) { // a registry may hold anything under an id
                throw new DecodeException("schema " + Integer.toUnsignedString(id) + " is not an Avro schema ("
                    + error.getClass().getSimpleName() + ": " + (error instanceof DecodeException
                    ? ((DecodeException) error).reason : error.getMessage()) + ")", part);
            }
            if (!(schema instanceof Map) || !"record".equals(((Map<?, ?>) schema).get("type"))) {
                throw new DecodeException("schema " + Integer.toUnsignedString(id) + " is not a record schema", part);
            }
            Map<?, ?> record = (Map<?, ?>) schema;
            if (part.equals("key")) { // a record of the key columns, which may have any names ("op" too)
                keyFields.addAll(fields(record.get("fields")));
                return;
            }
            Map<Object, Map<?, ?>> envelope = new LinkedHashMap<>();
            if (record.get("fields") instanceof List) {
                for (Object field : (List<?>) record.get("fields")) {
                    if (field instanceof Map) {
                        envelope.put(((Map<?, ?>) field).get("name"), (Map<?, ?>) field);
                    }
                }
            }
            Map<?, ?> image = envelope.containsKey("after") ? envelope.get("after")
                : envelope.getOrDefault("before", Map.of());
            Object rowType = nonNull(image.get("type"));
            if (rowType instanceof Map && "record".equals(((Map<?, ?>) rowType).get("type"))) {
                row.addAll(fields(((Map<?, ?>) rowType).get("fields")));
            } else if (rowType instanceof String) { // after refers to the record before defined
                Object before = nonNull(envelope.getOrDefault("before", Map.of()).get("type"));
                if (before instanceof Map) {
                    row.addAll(fields(((Map<?, ?>) before).get("fields")));
                }
            }
            Object source = envelope.getOrDefault("source", Map.of()).get("type");
            if (source instanceof Map && "record".equals(((Map<?, ?>) source).get("type"))) {
                for (Field field : fields(((Map<?, ?>) source).get("fields"))) {
                    if (!DebeziumEnvelope.SOURCE_FIELDS.contains(field.column)) {
                        position.add(field);
                    }
                }
            }
        }

        /** A framed part's record, read with this schema ({@code DebeziumAvroCodec._read}). */
        Map<?, ?> read(byte[] framed, String part) throws DecodeException {
            int[] end = new int[1];
            Object record;
            try {
                record = AvroDatums.read(parsed, framed, 5, end);
            } catch (AvroDatums.Unreadable error) {
                throw new DecodeException("cannot be read with schema " + Integer.toUnsignedString(id) + " ("
                    + error.getMessage() + ")", part);
            }
            if (end[0] != framed.length) {
                throw new DecodeException((framed.length - end[0]) + " bytes left over", part);
            }
            return (Map<?, ?>) record; // a record: its schema is one (the constructor checks)
        }

        /** An image's cells, one per field of the row, or null for an absent image. */
        List<Events.Cell> image(Object record, String path) throws DecodeException {
            if (record == null) {
                return null;
            }
            List<Events.Cell> cells = new ArrayList<>(row.size());
            for (Field field : row) {
                cells.add(field.cell((Map<?, ?>) record, path));
            }
            return cells;
        }
    }

    /** {@code _non_null}: a union's first branch other than "null" ("null" where it has none); any other type. */
    private static Object nonNull(Object avroType) {
        if (avroType instanceof List) {
            for (Object branch : (List<?>) avroType) {
                if (!"null".equals(branch)) {
                    return branch;
                }
            }
            return "null";
        }
        return avroType;
    }

    /** {@code _read_fields}: each field's Avro name, column name and cell type, as its schema gives them. */
    private static List<Field> fields(Object entries) {
        List<Field> read = new ArrayList<>();
        for (Object item : entries instanceof List ? (List<?>) entries : List.of()) {
            Map<?, ?> entry = (Map<?, ?>) item;
            Object avroType = nonNull(entry.get("type"));
            Object parameters = avroType instanceof Map ? ((Map<?, ?>) avroType).get("connect.parameters") : null;
            if (!Python.isTruthy(parameters)) {
                parameters = entry.get("connect.parameters");
            }
            Object sourceType = parameters instanceof Map ? ((Map<?, ?>) parameters).get(SOURCE_TYPE) : null;
            String cellType = sourceType instanceof String ? (String) sourceType : impliedOfField(avroType);
            String avroName = (String) entry.get("name");
            Object column = entry.containsKey(COLUMN_PROPERTY) ? entry.get(COLUMN_PROPERTY) : avroName;
            read.add(new Field(avroName, (String) column, cellType, isFloat(avroType)));
        }
        return read;
    }

    /**
     * {@code implied_of_field}: the cell type a field of this Avro type reads as without a source type parameter,
     * as {@code debezium-json} names Connect types: the Connect name where it is not the default of its value's kind.
     */
    private static String impliedOfField(Object avroType) {
        if (!(avroType instanceof Map)) {
            return "int".equals(avroType) ? "int32" : "float".equals(avroType) ? "float" : null;
        }
        Map<?, ?> schema = (Map<?, ?>) avroType;
        if (schema.containsKey("connect.type")) {
            return pythonStr(schema.get("connect.type"));
        }
        Object name = schema.get("connect.name");
        if (name == null || ConnectSchema.DECIMAL.equals(name) || ConnectCells.VARIABLE_DECIMAL.equals(name)
                || "record".equals(schema.get("type"))) {
            return schema.get("type") instanceof String && name == null ? impliedOfField(schema.get("type")) : null;
        }
        return pythonStr(name);
    }

    /** Whether {@code _column_type_of} gives a field of this Avro type the column type {@code float}. */
    private static boolean isFloat(Object avroType) {
        if (!(avroType instanceof Map)) {
            return "float".equals(avroType);
        }
        Map<?, ?> schema = (Map<?, ?>) avroType;
        Object named = Python.isTruthy(schema.get("connect.name")) ? schema.get("connect.name")
            : schema.get("logicalType");
        if (named != null && NAMED_TYPES.contains(named) || ConnectCells.VARIABLE_DECIMAL.equals(named)
                || "decimal".equals(schema.get("logicalType"))
                || "int8".equals(schema.get("connect.type")) || "int16".equals(schema.get("connect.type"))) {
            return false;
        }
        Object type = schema.get("type");
        return type instanceof String && !NOT_PRIMITIVE.contains(type) && isFloat(type);
    }

    /** Python's {@code str} of a JSON value. */
    private static String pythonStr(Object value) {
        return value instanceof String ? (String) value : Python.repr(value);
    }

    /**
     * {@code value_in}: a value as read, as a change-event value: Debezium's variable-scale decimal (a record of
     * {@code scale} and the unscaled {@code value}'s bytes) as its decimal, or as that struct where
     * {@code variableDecimalStruct}; records and maps as structs, arrays as arrays; a UUID has no form.
     */
    private static Object valueIn(Object value, String where, boolean variableDecimalStruct) throws DecodeException {
        if (value instanceof Map) {
            Map<?, ?> members = (Map<?, ?>) value;
            if (members.size() == 2 && members.containsKey("scale") && members.get("value") instanceof byte[]) {
                if (variableDecimalStruct) {
                    Map<String, Object> struct = new LinkedHashMap<>();
                    struct.put("scale", members.get("scale"));
                    struct.put("value", members.get("value"));
                    return struct;
                }
                byte[] unscaled = (byte[]) members.get("value");
                // connect_cells.decimal_of, exact at any scale (a BigDecimal's exponent stops at 32 bits)
                return new TypedText.DecimalText(PythonDecimal.str((unscaled.length == 0 ? BigInteger.ZERO
                    : new BigInteger(unscaled)) + "E" + (-(Long) members.get("scale"))));
            }
            Map<String, Object> struct = new LinkedHashMap<>();
            for (Map.Entry<?, ?> member : members.entrySet()) {
                struct.put((String) member.getKey(), valueIn(member.getValue(), where + "." + member.getKey(), false));
            }
            return struct;
        }
        if (value instanceof List) {
            List<?> items = (List<?>) value;
            List<Object> read = new ArrayList<>(items.size());
            for (int index = 0; index < items.size(); index++) {
                read.add(valueIn(items.get(index), where + "[" + index + "]", false));
            }
            return read;
        }
        if (value instanceof AvroDatums.Uuid) {
            throw new DecodeException("a UUID value has no change-event form", where);
        }
        return value;
    }
}
