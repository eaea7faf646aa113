package cdcformats.codecs.jvm;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.spark.sql.catalyst.InternalRow;

/**
 * Debezium's envelope as Kafka Connect JSON, with or without the schema wrapper ({@code debezium.py}, whose
 * docstring is the format's description, and {@code _kit/debezium_envelope.py}: {@link DebeziumEnvelope}), decoded
 * inside Spark's JVM, rule for rule as {@code DebeziumJsonCodec.decode_message}. Settings: {@code max_message_bytes}
 * and {@code key_columns}/{@code key_columns_per_table} (see {@link PerTable}).
 */
public final class DebeziumJsonDecoder implements MessageDecoder {
    private static final String FIELD_PREFIX = "debezium.field.";
    private static final String TRANSACTION_PREFIX = "debezium.transaction.";
    private static final String SCHEMA_PREFIX = "debezium-json.schema.";
    private static final Set<String> ENVELOPE_FIELDS =
        Set.of("before", "after", "source", "op", "ts_ms", "ts_us", "transaction");
    private static final Map<String, String> OP_OF_CODE =
        Map.of("c", "INSERT", "u", "UPDATE", "d", "DELETE", "r", "READ", "t", "TRUNCATE");

    private final long maxMessageBytes;
    private final PerTable keyColumns;

    public DebeziumJsonDecoder(Map<String, String> settings) throws DecodeException {
        this.maxMessageBytes = Long.parseLong(settings.get("max_message_bytes"));
        this.keyColumns = new PerTable(settings.get("key_columns"), settings.get("key_columns_per_table"), List.of());
    }

    @Override
    @SuppressWarnings("unchecked")
    public InternalRow decode(byte[] message) throws DecodeException {
        Map<String, Object> document = Messages.loadObject(message, maxMessageBytes);
        Map<String, Map<String, Map<?, ?>>> columns = Map.of();
        Object schema = null;
        if (document.containsKey("payload") && document.containsKey("schema") && !document.containsKey("op")) {
            schema = document.get("schema");
            columns = ConnectSchema.columnSchemas(schema);
            Object payload = document.get("payload");
            if (!(payload instanceof Map)) {
                throw new DecodeException("expected an object, got " + Json.typeName(payload), "payload");
            }
            document = (Map<String, Object>) payload;
        }
        Object code = document.get("op");
        String op = code instanceof String ? OP_OF_CODE.get(code) : null;
        if (op == null) {
            throw new DecodeException("op " + Python.repr(code) + " is not a row change; expected one of c, u, d, r, t",
                "op");
        }
        List<String> beforeNames = new ArrayList<>();
        List<String> afterNames = new ArrayList<>();
        List<InternalRow> before = DebeziumEnvelope.imageCells(document.get("before"), "before",
            columns.get("before"), beforeNames);
        List<InternalRow> after = DebeziumEnvelope.imageCells(document.get("after"), "after", columns.get("after"),
            afterNames);
        DebeziumEnvelope.Source source = new DebeziumEnvelope.Source(document.get("source"));
        Long captureTimeUs = DebeziumEnvelope.readTime(document, "");
        List<Map.Entry<String, Object>> attributes = transaction(document.get("transaction"));
        attributes.addAll(Messages.keptFields(FIELD_PREFIX, document, ENVELOPE_FIELDS));
        boolean keyFromBefore = op.equals("DELETE") || after == null;
        List<?> keys = source.table == null ? (List<?>) keyColumns.forTable(null, null, null)
            : (List<?>) keyColumns.forTable(source.table[0], source.table[1], source.table[2]);
        List<InternalRow> key = Messages.keyOf(keys, keyFromBefore ? beforeNames : afterNames,
            keyFromBefore ? before : after);
        if (!Json.isNull(schema)) { // a null schema: the bare payload
            keptHeaders((Map<?, ?>) schema, source, attributes);
        }
        InternalRow table = source.table == null ? null
            : Events.table(source.table[0], source.table[1], source.table[2]);
        return Events.event(op, table, key, before, after, source.system, source.position, source.commitTimeUs,
            captureTimeUs, false, attributes);
    }

    /** The server name of the position (its last "name" entry, if text), as the envelope schema's names use. */
    private static String server(List<Map.Entry<String, Object>> position) {
        Object server = null;
        for (Map.Entry<String, Object> entry : position) {
            if (entry.getKey().equals("name")) {
                server = entry.getValue();
            }
        }
        return server instanceof String ? (String) server : null;
    }

    private static List<Map.Entry<String, Object>> transaction(Object transaction) throws DecodeException {
        List<Map.Entry<String, Object>> attributes = new ArrayList<>();
        if (Json.isNull(transaction)) {
            return attributes;
        }
        if (!(transaction instanceof Map)) {
            throw new DecodeException("expected an object or null, got " + Json.typeName(transaction),
                "transaction");
        }
        for (Map.Entry<?, ?> field : ((Map<?, ?>) transaction).entrySet()) {
            Object value = field.getValue();
            String path = "transaction." + field.getKey();
            if (value instanceof Map || value instanceof List) {
                throw new DecodeException("expected a scalar value, got " + Json.typeName(value), path);
            }
            if (value instanceof BigInteger) {
                throw new DecodeException(value + " is outside the signed 64-bit range", path);
            }
            attributes.add(Messages.pair(TRANSACTION_PREFIX + field.getKey(), value));
        }
        return attributes;
    }

    /**
     * The {@code debezium-json.schema.*} attributes: the envelope's and the row structs' own schemas (their fields
     * left out) where they are not the ones writing this event generates: {@code <prefix>Envelope}, a required
     * struct, and {@code <prefix>Value}, optional structs, the prefix being the server, schema and table names.
     */
    private static void keptHeaders(Map<?, ?> schema, DebeziumEnvelope.Source source,
                                    List<Map.Entry<String, Object>> attributes) {
        Map<String, Map<Object, Object>> headers = new LinkedHashMap<>();
        headers.put("envelope", withoutFields(schema));
        Object fields = schema.get("fields");
        if (Python.isTruthy(fields)) {
            for (Object field : (List<?>) fields) {
                if (field instanceof Map && "struct".equals(((Map<?, ?>) field).get("type"))) {
                    Object part = ((Map<?, ?>) field).get("field");
                    if ("before".equals(part) || "after".equals(part)) {
                        headers.put((String) part, withoutFields((Map<?, ?>) field));
                    }
                }
            }
        }
        StringBuilder prefix = new StringBuilder();
        String server = server(source.position);
        if (server != null) {
            prefix.append(server).append('.');
        }
        if (source.table != null) {
            if (source.table[1] != null) {
                prefix.append(source.table[1]).append('.');
            }
            prefix.append(source.table[2]).append('.');
        }
        for (Map.Entry<String, Map<Object, Object>> header : headers.entrySet()) {
            Map<Object, Object> generated = new LinkedHashMap<>();
            generated.put("type", "struct");
            generated.put("fields", List.of());
            boolean envelope = header.getKey().equals("envelope");
            generated.put("optional", !envelope);
            generated.put("name", prefix + (envelope ? "Envelope" : "Value"));
            if (!envelope) {
                generated.put("field", header.getKey());
            }
            if (!Python.equal(header.getValue(), generated)) {
                attributes.add(Messages.pair(SCHEMA_PREFIX + header.getKey(), Json.write(header.getValue())));
            }
        }
    }

    private static Map<Object, Object> withoutFields(Map<?, ?> schema) {
        Map<Object, Object> header = new LinkedHashMap<>(schema);
        header.put("fields", List.of());
        return header;
    }
}
