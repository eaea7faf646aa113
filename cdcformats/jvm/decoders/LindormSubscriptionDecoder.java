package cdcformats.jvm.decoders;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * LindormTable data subscription's Debezium-style change records ({@code lindorm_subscription.py}, whose docstring is
 * the format's description), with or without Kafka Connect's schema wrapper, decoded inside Spark's JVM, rule for
 * rule as {@code LindormSubscriptionCodec.decode_message}; the envelope is read as debezium-json reads it
 * ({@link DebeziumEnvelope}) where Lindorm does not differ. Settings: {@code max_message_bytes} and
 * {@code key_columns}/{@code key_columns_per_table} (see {@link JsonDecoder}).
 */
public final class LindormSubscriptionDecoder extends JsonDecoder {
    private static final String FIELD_PREFIX = "debezium.field.";
    private static final Set<String> ENVELOPE_FIELDS = Set.of("op", "ts_ms", "ts_us", "before", "after", "source");
    private static final List<String> TABLE_FIELDS = List.of("db", "namespace", "table");
    private static final Map<String, String> OP_OF_CODE = Map.of("c", "INSERT", "u", "UPDATE", "d", "DELETE",
        "r", "READ");

    public LindormSubscriptionDecoder(Map<String, String> settings) throws DecodeException {
        super(settings);
    }

    @Override
    protected Events.Event decode(Map<String, Object> document) throws DecodeException {
        if (document.containsKey("payload") && document.containsKey("schema") && !document.containsKey("op")) {
            Map<String, Map<String, Map<?, ?>>> columns = ConnectSchema.columnSchemas(document.get("schema"));
            return event(document.get("payload"), columns, "payload.");
        }
        return event(document, Map.of(), "");
    }

    /** The event of one envelope; {@code path} is where the envelope is in the message, for error fields. */
    private Events.Event event(Object envelope, Map<String, Map<String, Map<?, ?>>> columns, String path)
            throws DecodeException {
        try {
            return event(envelope, columns);
        } catch (DecodeException error) {
            boolean hasField = error.field != null && !error.field.isEmpty();
            throw new DecodeException(error.reason, hasField ? path + error.field
                : path.isEmpty() ? null : path.substring(0, path.length() - 1));
        }
    }

    private Events.Event event(Object value, Map<String, Map<String, Map<?, ?>>> columns) throws DecodeException {
        if (!(value instanceof Map)) {
            throw new DecodeException("expected an object, got " + Json.typeName(value), null);
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> envelope = (Map<String, Object>) value;
        Object code = envelope.get("op");
        String op = code instanceof String ? OP_OF_CODE.get(code) : null;
        if (op == null) {
            throw new DecodeException("op " + Python.repr(code) + " is not a Lindorm row change; expected one of "
                + "c, u, d, r", "op");
        }
        List<Events.Cell> before = DebeziumEnvelope.imageCells(envelope.get("before"), "before", columns.get("before"));
        List<Events.Cell> after = DebeziumEnvelope.imageCells(envelope.get("after"), "after", columns.get("after"));
        Object sourceField = envelope.get("source");
        String[] table = table(sourceField);
        DebeziumEnvelope.Source source =
            new DebeziumEnvelope.Source(table == null ? sourceField : withoutTableFields(sourceField));
        Long captureTimeUs = DebeziumEnvelope.readTime(envelope, "");
        List<Map.Entry<String, Object>> attributes = Messages.keptFields(FIELD_PREFIX, envelope, ENVELOPE_FIELDS);
        List<Events.Cell> key = keyRead(table, op, before, after);
        return Events.event(op, table == null ? null : Events.table(table[0], table[1], table[2]), key, before,
            after, source.system, source.position, source.commitTimeUs, captureTimeUs, false, attributes);
    }

    /**
     * {@code _table_and_source}'s table: catalog {@code db} (the instance), schema {@code namespace}, name
     * {@code table}; null where {@code source} is no object with a {@code table}.
     */
    private static String[] table(Object field) throws DecodeException {
        if (!(field instanceof Map) || !((Map<?, ?>) field).containsKey("table")) {
            return null;
        }
        Map<?, ?> source = (Map<?, ?>) field;
        String[] parts = new String[3];
        for (int i = 0; i < 3; i++) {
            parts[i] = DebeziumEnvelope.Source.text(source.get(TABLE_FIELDS.get(i)), "source." + TABLE_FIELDS.get(i));
        }
        if (parts[2] == null) {
            throw new DecodeException("expected the table name, got null", "source.table");
        }
        return parts;
    }

    /** The rest of a {@code source} with a table, read as debezium-json reads a source without one. */
    private static Map<?, ?> withoutTableFields(Object source) {
        Map<Object, Object> rest = new LinkedHashMap<>((Map<?, ?>) source);
        rest.keySet().removeAll(TABLE_FIELDS);
        return rest;
    }
}
