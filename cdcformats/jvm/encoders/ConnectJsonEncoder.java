package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.ConnectSchema;
import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.decoders.Python;
import cdcformats.jvm.encoders.KeptFields.Kept;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code codecs/connect.py}'s encoder in Java: each event as the one Kafka record {@code encode_exact(written(event))}
 * writes, the row put (an UPSERT's {@code after}) as the value and the key cells as the key, each as Kafka Connect's
 * JsonConverter writes a struct: with {@code schemas}, {@code {"schema", "payload"}}, the struct schema the event
 * keeps ({@code connect-json.schema.key} / {@code .value}) or an unnamed required one, named by the settings
 * {@code key_schema_name} / {@code value_schema_name} where given, its fields as {@link ConnectSchemas} writes them;
 * without, the payload map alone. A DELETE is a tombstone of its key.
 *
 * <p>The normal form is the event as far as a record carries it ({@link NormalForm}; with {@code schemas}, each cell
 * as its Connect schema gives it back), reshaped as {@code ConnectJsonCodec.reshaped} says (a change that leaves a
 * row is that row put, a TRUNCATE and a change whose row is not known are refused), its key read out of the row by
 * {@code key_columns} where it has none, and the struct schemas it keeps as a record gives them back.
 *
 * <p>Settings: {@code schemas} ("true" or "false"), {@code key_columns} and {@code key_columns_per_table}
 * ({@code KeyColumns.settings()}), and {@code key_schema_name} / {@code value_schema_name} where the options give them.
 */
public final class ConnectJsonEncoder extends NormalForm implements RecordEncoder {
    private static final String NAME = "connect-json";
    private static final String SCHEMA_ATTRIBUTE = "connect-json.schema.";
    private static final List<String> PARTS = List.of("key", "value"); // in the order their schemas are kept
    private static final Set<String> CARRIES = Set.of(
        "op.UPSERT", "op.DELETE", "key", "after", "image.columns", "cell.type", "value.null", "value.bool",
        "value.int", "value.float", "value.str", "value.bytes", "value.decimal", "value.float_nonfinite",
        "value.off_type", "value.nested", "value.nested_non_json");
    private static final List<Shape> SHAPES = List.of(new Shape("UPSERT", ABSENT, PRESENT),
        new Shape("DELETE", ABSENT, ABSENT));

    private final boolean schemas;
    private final KeyColumns keyColumns;
    private final Map<String, String> schemaNames = new LinkedHashMap<>(); // by part: the option's name, or null

    public ConnectJsonEncoder(Map<String, String> settings) {
        this(settings, Boolean.parseBoolean(settings.get("schemas")));
    }

    private ConnectJsonEncoder(Map<String, String> settings, boolean schemas) {
        super(NAME, schemas ? CARRIES : changed(CARRIES, List.of(), ConnectSchemas.TYPED_FEATURES),
            schemas ? Set.of(SCHEMA_ATTRIBUTE) : Set.of(), SHAPES);
        this.schemas = schemas;
        this.keyColumns = new KeyColumns(settings);
        for (String part : PARTS) {
            schemaNames.put(part, settings.get(part + "_schema_name"));
        }
    }

    /** {@code ConnectJsonCodec.carried_cell}: with {@code schemas}, as its Connect schema gives it back. */
    @Override
    public Events.Cell carriedCell(Events.Cell cell) {
        Events.Cell carried = super.carriedCell(cell);
        return schemas ? ConnectSchemas.asReadBack(carried) : carried;
    }

    /**
     * {@code ConnectJsonCodec.reshaped}: a change that leaves a row is that row put (an UPSERT); a DELETE is a
     * tombstone of its key. A change whose row is not known, and a TRUNCATE, have no record.
     */
    @Override
    protected Events.Event reshaped(Events.Event event) throws EncodeException {
        if (event.op().equals("DELETE")) {
            return new Events.Event("DELETE", event.table(), event.key(), event.before(), null, event.source(),
                event.keyOnly(), event.attributes());
        }
        if (event.op().equals("TRUNCATE") || event.after() == null) {
            throw EncodeException.refused("op." + event.op(), "op",
                NAME + " writes a row or a tombstone, and this " + event.op() + " has no row");
        }
        return new Events.Event("UPSERT", event.table(), event.key(), event.before(), event.after(), event.source(),
            event.keyOnly(), event.attributes());
    }

    /**
     * {@code ConnectJsonCodec.normal_form}: a record without a key takes it out of the value by key_columns; with
     * schemas, the key's and the value's struct schemas that the record writes come back where they are not what
     * writing gives without them.
     */
    @Override
    public Events.Event normalForm(Events.Event event) throws EncodeException {
        Events.Event written = super.normalForm(event);
        if (written.key().isEmpty() && keyColumns.any()) {
            List<Events.Cell> key = keyColumns.keyOf(null, written.after());
            if (!key.isEmpty()) {
                written = new Events.Event(written.op(), written.table(), key, written.before(), written.after(),
                    written.source(), written.keyOnly(), written.attributes());
            }
        }
        if (!schemas) { // no struct schemas: the base rules keep no attribute
            return written;
        }
        boolean keyWritten = !written.key().isEmpty();
        boolean valueWritten = !written.op().equals("DELETE");
        List<Events.Entry> attributes = KeptFields.asDecoded(written.attributes(), (name, value) -> {
            String part = name.startsWith(SCHEMA_ATTRIBUTE) ? name.substring(SCHEMA_ATTRIBUTE.length()) : null;
            if (part == null || !PARTS.contains(part) || !(part.equals("key") ? keyWritten : valueWritten)) {
                return null;
            }
            Map<Object, Object> struct = struct(value, part);
            return Python.equal(struct, struct(null, part)) ? null
                : new Kept(PARTS.indexOf(part), JsonOut.msgspec(struct));
        });
        return new Events.Event(written.op(), written.table(), written.key(), written.before(), written.after(),
            written.source(), written.keyOnly(), attributes);
    }

    @Override
    public KafkaRecord encode(Events.Event event) throws EncodeException {
        Events.Event written = normalForm(event);
        byte[] key = written.key().isEmpty() ? null : write(written.key(), "key", keptSchema(written, "key"));
        if (written.op().equals("DELETE")) {
            return new KafkaRecord(key, null);
        }
        return new KafkaRecord(key, write(written.after(), "value", keptSchema(written, "value")));
    }

    /** The first {@code connect-json.schema.<part>} attribute's value, or null. */
    private static Object keptSchema(Events.Event event, String part) {
        return attribute(event, SCHEMA_ATTRIBUTE + part);
    }

    /**
     * {@code ConnectJsonCodec._write}: the key or the value of {@code cells}, with the struct schema the event keeps
     * for it ({@code kept}), if any; without schemas, the JSON values, as the schemaless formats write them.
     */
    private byte[] write(List<Events.Cell> cells, String part, Object kept) {
        Map<String, Object> payload = new LinkedHashMap<>();
        for (Events.Cell cell : cells) {
            payload.put(cell.name(), schemas ? ConnectSchema.jsonValue(cell.value()) : Values.jsonForm(cell.value()));
        }
        if (!schemas) {
            return JsonOut.jackson(payload);
        }
        Map<Object, Object> schema = struct(kept, part);
        List<Object> fields = new ArrayList<>();
        for (Events.Cell cell : cells) {
            fields.add(ConnectSchemas.fieldSchema(cell));
        }
        schema.put("fields", fields);
        Map<String, Object> record = new LinkedHashMap<>();
        // The schema as msgspec writes it, then spelt as Jackson (encode_as_jackson): only the payload's floats are
        // Java's.
        record.put("schema", new JsonOut.Raw(JsonOut.msgspec(schema)));
        record.put("payload", payload);
        return JsonOut.jackson(record);
    }

    /**
     * {@code ConnectJsonCodec._struct}: the struct schema of the key or the value, with {@code "fields": []}: the one
     * the event keeps, when it is one, else an unnamed required struct; named by the setting
     * {@code <part>_schema_name} where it is given.
     */
    private Map<Object, Object> struct(Object kept, String part) {
        Map<Object, Object> struct = keptStruct(kept);
        if (struct == null) {
            struct = new LinkedHashMap<>();
            struct.put("type", "struct");
            struct.put("fields", List.of());
            struct.put("optional", false);
        }
        String name = schemaNames.get(part);
        if (name != null) {
            struct.put("name", name);
        }
        return struct;
    }

    /**
     * {@code connect._kept_struct}: the struct schema a {@code connect-json.schema.*} attribute keeps, when it is one:
     * JSON text of a struct schema whose fields are left out ({@code "fields": []}).
     */
    private static Map<Object, Object> keptStruct(Object text) {
        Map<Object, Object> struct = ConnectSchemas.structText(text);
        return struct == null || !((List<?>) struct.get("fields")).isEmpty() ? null : struct;
    }
}
