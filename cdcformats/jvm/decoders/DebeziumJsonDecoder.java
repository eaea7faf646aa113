package cdcformats.jvm.decoders;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Debezium's envelope as Kafka Connect JSON, with or without the schema wrapper ({@code debezium.py}, whose
 * docstring is the format's description, and {@code _kit/debezium_envelope.py}: {@link DebeziumEnvelope}), decoded
 * inside Spark's JVM, rule for rule as {@code DebeziumJsonCodec.decode_messages}, for a message that gives exactly one
 * event: a message that changes no row, skipped with {@code skip_control}, gives none, which Spark's Arrow path
 * refuses, and so does this. Settings: {@code max_message_bytes}, {@code skip_control} ("true" or "false") and
 * {@code key_columns}/{@code key_columns_per_table} (see {@link JsonDecoder}).
 */
public final class DebeziumJsonDecoder extends JsonDecoder {
    private static final String FIELD_PREFIX = "debezium.field.";
    private static final String ENVELOPE_SCHEMA = "debezium-json.schema.envelope";
    private static final String SCHEMALESS_WRAPPER = "debezium-json.schemaless_wrapper";
    private static final String ENVELOPE_FIELDS = "debezium-json.fields.envelope";
    private static final String SOURCE_FIELD_NAMES = "debezium-json.fields.source";
    private static final Set<String> ENVELOPE_FIELDS_READ =
        Set.of("before", "after", "source", "op", "ts_ms", "ts_us", "transaction");
    private static final Set<Object> ROWS = Set.of("before", "after");

    private final boolean skipControl;
    // The texts of the envelope's and the source's orders: a stream's messages repeat one order, written once.
    private final NamesText envelopeText = new NamesText();
    private final NamesText sourceText = new NamesText();

    public DebeziumJsonDecoder(Map<String, String> settings) throws DecodeException {
        super(settings);
        this.skipControl = Boolean.parseBoolean(settings.get("skip_control"));
    }

    @Override
    @SuppressWarnings("unchecked")
    protected Events.Event decode(Map<String, Object> document) throws DecodeException {
        Map<String, Map<String, Map<?, ?>>> columns = Map.of();
        Object schema = null;
        boolean wrapped = document.containsKey("payload") && document.containsKey("schema")
            && !document.containsKey("op");
        if (wrapped) {
            schema = document.get("schema");
            columns = ConnectSchema.columnSchemas(schema);
            Object payload = document.get("payload");
            if (!(payload instanceof Map)) {
                throw new DecodeException("expected an object, got " + Json.typeName(payload), "payload");
            }
            document = (Map<String, Object>) payload;
        }
        Object code = document.get("op");
        String op = code instanceof String ? DebeziumEnvelope.OP_OF_CODE.get(code) : null;
        if (op == null) {
            String control = controlMessage(document);
            if (control != null && skipControl) {
                throw Messages.notOneEvent(0); // skipped: no event
            }
            if (control != null) {
                throw new DecodeException(control + " changes no row (option skip_control skips it)", "op");
            }
            throw new DecodeException("op " + Python.repr(code) + " is not a row change; expected one of c, u, d, r, t",
                "op");
        }
        List<Events.Cell> before = DebeziumEnvelope.imageCells(document.get("before"), "before", columns.get("before"));
        List<Events.Cell> after = DebeziumEnvelope.imageCells(document.get("after"), "after", columns.get("after"));
        DebeziumEnvelope.Source source = new DebeziumEnvelope.Source(document.get("source"));
        Long captureTimeUs = DebeziumEnvelope.readTime(document, "");
        List<Map.Entry<String, Object>> attributes = transaction(document.get("transaction"));
        attributes.addAll(Messages.keptFields(FIELD_PREFIX, document, ENVELOPE_FIELDS_READ));
        List<Events.Cell> key = keyRead(source.table, op, before, after);
        boolean transactionWritten = document.get("transaction") instanceof Map
            && !((Map<?, ?>) document.get("transaction")).isEmpty();
        List<String> envelopeNames = new ArrayList<>(document.keySet());
        if (!envelopeNames.equals(envelopeOrder(document, source, captureTimeUs, transactionWritten))) {
            attributes.add(Messages.pair(ENVELOPE_FIELDS, envelopeText.of(envelopeNames)));
        }
        Object sourceField = document.get("source");
        if (sourceField instanceof Map) {
            List<Object> sourceNames = new ArrayList<>(((Map<?, ?>) sourceField).keySet());
            if (!sourceNames.equals(sourceOrder(source))) {
                attributes.add(Messages.pair(SOURCE_FIELD_NAMES, sourceText.of(sourceNames)));
            }
        }
        if (wrapped && Json.isNull(schema)) { // JsonConverter's wrapper of a record that has no schema
            attributes.add(Messages.pair(SCHEMALESS_WRAPPER, Boolean.TRUE));
        } else if (wrapped) {
            // A change without rows (TRUNCATE) keeps its table's row structs whole: no cell holds their columns.
            Map<?, ?> kept = before != null || after != null ? columnsLeftOut((Map<?, ?>) schema) : (Map<?, ?>) schema;
            String given = Json.write(kept);
            if (!given.equals(Json.write(generatedSchema(document, source)))) {
                attributes.add(Messages.pair(ENVELOPE_SCHEMA, given));
            }
        }
        Events.Table table = source.table == null ? null
            : Events.table(source.table[0], source.table[1], source.table[2]);
        return Events.event(op, table, key, before, after, source.system, source.position, source.commitTimeUs,
            captureTimeUs, false, attributes);
    }

    /** A list of names as JSON text, written again only when it differs from the last one. */
    private static final class NamesText {
        private List<?> names = List.of();
        private String text;

        String of(List<?> given) {
            if (!given.equals(names)) {
                names = given;
                text = Json.write(given);
            }
            return text;
        }
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
            attributes.add(Messages.pair(DebeziumEnvelope.TRANSACTION_PREFIX + field.getKey(), value));
        }
        return attributes;
    }

    /**
     * {@code _envelope_layout(...).default}: the envelope's fields in the order writing gives them: the rows, the
     * source unless it is empty, op, the capture time, the transaction when it has fields, then the kept fields.
     */
    private static List<String> envelopeOrder(Map<String, Object> document, DebeziumEnvelope.Source source,
                                              Long captureTimeUs, boolean transactionWritten) {
        List<String> names = new ArrayList<>(List.of("before", "after"));
        if (source.system != null || source.commitTimeUs != null || source.table != null
                || !source.position.isEmpty()) {
            names.add("source");
        }
        names.add("op");
        times(captureTimeUs, names);
        if (transactionWritten) {
            names.add("transaction");
        }
        for (String name : document.keySet()) {
            if (!ENVELOPE_FIELDS_READ.contains(name)) {
                names.add(name);
            }
        }
        return names;
    }

    /** {@code _source_layout(...).default}: connector, the commit time, the table's db (schema) and table, then the position. */
    private static List<String> sourceOrder(DebeziumEnvelope.Source source) {
        List<String> names = new ArrayList<>();
        if (source.system != null) {
            names.add("connector");
        }
        times(source.commitTimeUs, names);
        if (source.table != null) {
            names.add("db");
            if (source.table[0] != null) {
                names.add("schema");
            }
            names.add("table");
        }
        for (Map.Entry<String, Object> entry : source.position) {
            names.add(entry.getKey());
        }
        return names;
    }

    /** {@code _times}: ts_ms for a time, and ts_us too where it has microseconds. */
    private static void times(Long microseconds, List<String> names) {
        if (microseconds != null) {
            names.add("ts_ms");
            if (microseconds % 1000 != 0) {
                names.add("ts_us");
            }
        }
    }

    /** {@code _columns_left_out}: the schema with {@code "fields": []} in its before and after structs. */
    private static Map<Object, Object> columnsLeftOut(Map<?, ?> schema) {
        List<Object> fields = new ArrayList<>();
        for (Object field : (List<?>) schema.get("fields")) {
            Object name = field instanceof Map ? ((Map<?, ?>) field).get("field") : null;
            if (name != null && ROWS.contains(name)
                    && "struct".equals(((Map<?, ?>) field).get("type"))
                    && ((Map<?, ?>) field).get("fields") instanceof List) {
                Map<Object, Object> header = new LinkedHashMap<>((Map<?, ?>) field);
                header.put("fields", List.of());
                fields.add(header);
            } else {
                fields.add(field);
            }
        }
        Map<Object, Object> left = new LinkedHashMap<>(schema);
        left.put("fields", fields);
        return left;
    }

    /**
     * {@code _envelope_schema} generated for the payload as it is written back (its rows' columns left out): the
     * fields the envelope knows, in the payload's order; the source typed from the values it is written with.
     */
    private static Map<Object, Object> generatedSchema(Map<String, Object> document, DebeziumEnvelope.Source source) {
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
        List<Object> fields = new ArrayList<>();
        for (Map.Entry<String, Object> field : document.entrySet()) {
            String name = field.getKey();
            Object value = field.getValue();
            if (ROWS.contains(name)) {
                fields.add(struct(List.of(), true, prefix + "Value", name, false));
            } else if (name.equals("source")) {
                fields.add(sourceSchema(value, source));
            } else if (name.equals("transaction")) {
                List<Object> members = new ArrayList<>();
                if (value instanceof Map && !((Map<?, ?>) value).isEmpty()) {
                    for (Map.Entry<?, ?> member : ((Map<?, ?>) value).entrySet()) {
                        members.add(ConnectSchema.jsonFieldSchema((String) member.getKey(), member.getValue()));
                    }
                } else {
                    members.add(primitive("id", "string", false));
                    members.add(primitive("total_order", "int64", false));
                    members.add(primitive("data_collection_order", "int64", false));
                }
                fields.add(struct(members, true, "event.block", name, true));
            } else if (name.equals("op")) {
                fields.add(primitive(name, "string", false));
            } else if (name.equals("ts_ms") || name.equals("ts_us")) {
                fields.add(primitive(name, "int64", true));
            }
        }
        return struct(fields, false, prefix + "Envelope", null, false);
    }

    /**
     * The generated schema of {@code source}, typed from the values it is written back with: the times as the
     * commit time gives them, every other field as it is.
     */
    private static Map<Object, Object> sourceSchema(Object value, DebeziumEnvelope.Source source) {
        List<Object> members = new ArrayList<>();
        Object connector = null;
        if (value instanceof Map) {
            for (Map.Entry<?, ?> member : ((Map<?, ?>) value).entrySet()) {
                String name = (String) member.getKey();
                Object written = member.getValue();
                if (name.equals("ts_ms")) {
                    written = source.commitTimeUs == null ? null : Math.floorDiv(source.commitTimeUs, 1000L);
                } else if (name.equals("ts_us")) {
                    written = source.commitTimeUs;
                }
                if (name.equals("connector")) {
                    connector = written;
                }
                members.add(ConnectSchema.jsonFieldSchema(name, written));
            }
        }
        String structName = connector instanceof String ? "io.debezium.connector." + connector + ".Source" : null;
        return struct(members, false, structName, "source", false);
    }

    private static Map<Object, Object> primitive(String name, String kind, boolean optional) {
        Map<Object, Object> schema = new LinkedHashMap<>();
        schema.put("type", kind);
        schema.put("optional", optional);
        schema.put("field", name);
        return schema;
    }

    /** {@code struct_schema}, then the version and field name where given. */
    private static Map<Object, Object> struct(List<Object> fields, boolean optional, String name, String field,
                                              boolean versioned) {
        Map<Object, Object> schema = ConnectSchema.structSchema(fields, optional, name);
        if (versioned) {
            schema.put("version", 1L);
        }
        if (field != null) {
            schema.put("field", field);
        }
        return schema;
    }

    /** {@code _control_message}: what a message that Debezium sends beside the row changes is, or null for any other. */
    private static String controlMessage(Map<String, Object> envelope) {
        if ("m".equals(envelope.get("op"))) {
            return "a logical-decoding message (op m)";
        }
        if (envelope.containsKey("op")) {
            return null;
        }
        Object status = envelope.get("status");
        if (("BEGIN".equals(status) || "END".equals(status)) && envelope.containsKey("id")) {
            return "a transaction's " + status + " record";
        }
        return envelope.size() == 1 && envelope.containsKey("ts_ms") ? "a heartbeat" : null;
    }
}
