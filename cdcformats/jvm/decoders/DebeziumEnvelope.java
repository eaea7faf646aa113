package cdcformats.jvm.decoders;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Debezium's change event envelope, the pieces of it that the JVM decoders of the formats reading one share
 * ({@link DebeziumJsonDecoder}, {@link LindormSubscriptionDecoder}): the counterpart of
 * {@code _kit/debezium_envelope.py}. Fields in errors are where the envelope's own fields are.
 */
public final class DebeziumEnvelope {
    private DebeziumEnvelope() {
    }

    /** The ops of the envelope's codes ({@code OP_OF_CODE}). */
    static final Map<String, String> OP_OF_CODE =
        Map.of("c", "INSERT", "u", "UPDATE", "d", "DELETE", "r", "READ", "t", "TRUNCATE");
    /** The prefix of the attributes that the envelope's {@code transaction} block holds ({@code TRANSACTION_ATTRIBUTE}). */
    static final String TRANSACTION_PREFIX = "debezium.transaction.";
    /** The source fields that are not the position, where the source names a table ({@code SOURCE_FIELDS}). */
    static final Set<String> SOURCE_FIELDS = Set.of("connector", "ts_ms", "ts_us", "db", "schema", "table");
    private static final Set<String> TIME_FIELDS = Set.of("connector", "ts_ms", "ts_us");

    /**
     * {@code image_cells}: an image's cells, typed by their column schemas where the wrapper gives them (null:
     * none); null for an absent image.
     */
    public static List<Events.Cell> imageCells(Object data, String imageName, Map<String, Map<?, ?>> columns)
            throws DecodeException {
        if (Json.isNull(data)) {
            return null;
        }
        if (!(data instanceof Map)) {
            throw new DecodeException("expected an object or null, got " + Json.typeName(data), imageName);
        }
        List<Events.Cell> cells = new ArrayList<>();
        for (Map.Entry<?, ?> column : ((Map<?, ?>) data).entrySet()) {
            String name = (String) column.getKey();
            String path = imageName + "." + name;
            Object value = column.getValue();
            String typeName = null;
            if (columns != null && columns.containsKey(name)) {
                ConnectSchema.Read read = ConnectSchema.readValue(value, columns.get(name), path);
                value = read.value;
                typeName = read.typeName;
            } else {
                value = Messages.valueOf(value, path);
            }
            cells.add(Events.cell(name, value, typeName, null, Events.PUT));
        }
        return cells;
    }

    /** {@code read_time}: microseconds from {@code ts_us} where it is there, else from {@code ts_ms}. */
    public static Long readTime(Map<?, ?> document, String path) throws DecodeException {
        for (String field : new String[] {"ts_us", "ts_ms"}) {
            Object value = document.get(field);
            if (Json.isNull(value)) {
                continue;
            }
            Long microseconds = value instanceof Long
                ? Messages.toMicroseconds((Long) value, field.equals("ts_us") ? 1 : 1000) : null;
            if (microseconds == null) {
                throw new DecodeException("expected a 64-bit timestamp, got " + Python.repr(value), path + field);
            }
            return microseconds;
        }
        return null;
    }

    /** {@code read_source}: the table, the system, the position and the commit time of {@code source}. */
    public static final class Source {
        String[] table; // catalog, schema, name; null without a table
        String system;
        final List<Map.Entry<String, Object>> position = new ArrayList<>();
        Long commitTimeUs;

        public Source(Object field) throws DecodeException {
            if (Json.isNull(field)) {
                return;
            }
            if (!(field instanceof Map)) {
                throw new DecodeException("expected an object or null, got " + Json.typeName(field), "source");
            }
            Map<?, ?> source = (Map<?, ?>) field;
            Object connector = source.get("connector");
            if (!Json.isNull(connector) && !(connector instanceof String)) {
                throw new DecodeException("expected a string, got " + Json.typeName(connector), "source.connector");
            }
            system = connector instanceof String ? (String) connector : null;
            Set<String> structural = TIME_FIELDS;
            if (source.containsKey("table")) {
                String name = text(source.get("table"), "source.table");
                String db = text(source.get("db"), "source.db");
                String schema = text(source.get("schema"), "source.schema");
                if (name == null) {
                    throw new DecodeException("expected the table name, got null", "source.table");
                }
                table = source.containsKey("schema") ? new String[] {db, schema, name} : new String[] {null, db, name};
                structural = SOURCE_FIELDS;
            }
            for (Map.Entry<?, ?> entry : source.entrySet()) {
                String name = (String) entry.getKey();
                if (structural.contains(name)) {
                    continue;
                }
                position.add(Messages.pair(name, Messages.valueOf(entry.getValue(), "source." + name)));
            }
            commitTimeUs = readTime(source, "source.");
        }

        /** A string or null, as the table's parts are. */
        static String text(Object value, String path) throws DecodeException {
            if (Json.isNull(value)) {
                return null;
            }
            if (!(value instanceof String)) {
                throw new DecodeException("expected a string, got " + Json.typeName(value), path);
            }
            return (String) value;
        }
    }
}
