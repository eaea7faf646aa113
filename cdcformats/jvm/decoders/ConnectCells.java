package cdcformats.jvm.decoders;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;

/**
 * {@code _kit/connect_cells.py}'s reading half: cells typed as {@code debezium-json} names them, where a type name is
 * a Connect type or a Connect field schema kept whole ({@link ConnectSchema}), for the decoders of formats that
 * name their cells' types so (debezium-avro, {@link DebeziumAvroDecoder}).
 */
final class ConnectCells {
    private ConnectCells() {
    }

    static final String VARIABLE_DECIMAL = "io.debezium.data.VariableScaleDecimal";
    // tables._CONNECT_NAMES: the type names that are a Connect type (a primitive or a logical name).
    private static final Set<String> CONNECT_NAMES = Set.of("boolean", "int8", "int16", "int32", "int64", "float",
        "double", "string", "bytes", ConnectSchema.DECIMAL, "org.apache.kafka.connect.data.Date",
        "org.apache.kafka.connect.data.Time", "org.apache.kafka.connect.data.Timestamp", "io.debezium.time.Date",
        "io.debezium.time.Time", "io.debezium.time.MicroTime", "io.debezium.time.NanoTime",
        "io.debezium.time.Timestamp", "io.debezium.time.MicroTimestamp", "io.debezium.time.NanoTimestamp",
        "io.debezium.time.ZonedTimestamp", "io.debezium.time.ZonedTime", "io.debezium.data.Json", VARIABLE_DECIMAL);

    /**
     * {@code type_read}: the type name of a cell of {@code value} in a column whose type name is {@code typeName}:
     * that name, or where it is a Connect field schema, the name {@code debezium-json} reads the value with through
     * that schema (a null in an optional field the short name, a value the whole schema).
     */
    static String typeRead(String typeName, Object value) {
        Map<?, ?> schema = ConnectSchema.keptSchema(typeName);
        if (schema == null) {
            return typeName;
        }
        String read;
        try {
            read = ConnectSchema.readValue(ConnectSchema.jsonValue(value), schema, "").typeName;
        } catch (DecodeException error) { // a value that the schema does not read: the column's type name
            return typeName;
        }
        return Python.equal(ConnectSchema.keptSchema(read), schema) ? typeName : read;
    }

    /** {@code is_connect_float}: whether a type name is Connect's {@code float} (a single). */
    static boolean isConnectFloat(String typeName) {
        return "float".equals(connectName(typeName));
    }

    /**
     * {@code connect_struct}: whether a type name is the Connect struct schema of Debezium's variable-scale decimal
     * (a decimal of any scale), whose cells hold the struct {@code {scale, value}}.
     */
    static boolean connectStruct(String typeName) {
        Map<?, ?> schema = ConnectSchema.keptSchema(typeName);
        if (schema == null || !"struct".equals(schema.get("type"))) {
            return false;
        }
        String named = connectName(typeName);
        if (!ConnectSchema.DECIMAL.equals(named) && !VARIABLE_DECIMAL.equals(named)) {
            return false;
        }
        // A scale of digits makes it a decimal of that scale, not one of any scale.
        Object parameters = schema.get("parameters");
        Object scale = parameters instanceof Map ? ((Map<?, ?>) parameters).get("scale") : null;
        String text = scale instanceof String ? (String) scale : scale instanceof Long ? scale.toString() : "";
        return !(!text.isEmpty() && text.chars().allMatch(Character::isDigit));
    }

    /**
     * The Connect type {@code tables.connect_type} takes a type name for: the name itself, or for a field schema
     * (JSON text), its {@code name}, else its {@code type}, where that is a Connect type; null for any other.
     */
    private static String connectName(String typeName) {
        if (typeName == null || typeName.isEmpty()) {
            return null;
        }
        if (CONNECT_NAMES.contains(typeName)) {
            return typeName;
        }
        if (!typeName.startsWith("{")) {
            return null;
        }
        Object schema;
        try {
            schema = Json.parse(typeName.getBytes(StandardCharsets.UTF_8));
        } catch (DecodeException error) {
            return null;
        }
        if (!(schema instanceof Map)) {
            return null;
        }
        for (String member : new String[] {"name", "type"}) {
            Object name = ((Map<?, ?>) schema).get(member);
            if (name instanceof String && CONNECT_NAMES.contains(name)) {
                return (String) name;
            }
        }
        return null;
    }
}
