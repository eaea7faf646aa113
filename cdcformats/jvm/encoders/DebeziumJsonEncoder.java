package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.ConnectSchema;
import cdcformats.jvm.decoders.DecodeException;
import cdcformats.jvm.decoders.Json;
import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.encoders.KeptFields.Kept;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * {@code codecs/debezium.py}'s encoder in Java: each event as {@code encode_exact(written(event))} writes it. The
 * normal form is {@code envelope_form(with_op_code(_carried_form(keyed_by_row(event))))}: the key cells the event
 * keeps outside its row put in front of the row, the event as far as debezium-json carries it ({@link NormalForm}),
 * an UPSERT as a create, then the source position and the kept attributes as a message gives them back. The envelope
 * is written in the order the event keeps ({@code debezium-json.fields.envelope} / {@code .source}) where it fits,
 * else in the default one, spelt as JsonConverter's Jackson writes JSON ({@link JsonOut#jackson}).
 *
 * <p>With {@code schemas}, the envelope goes inside JsonConverter's wrapper {@code {"schema", "payload"}}: each cell
 * as its Connect schema gives it back ({@link ConnectSchemas#asReadBack}), row values as Connect types them (bytes and
 * decimals in base64), and the envelope schema the event keeps ({@code debezium-json.schema.envelope}), merged with
 * what the payload holds, or else the one generated for it ({@link #envelopeSchema}). An event that came in a wrapper
 * whose schema is null is written as without {@code schemas}, in that wrapper.
 *
 * <p>Settings: {@code schemas} ("true" or "false"), {@code key_columns} and {@code key_columns_per_table}
 * ({@code KeyColumns.settings()}).
 */
public final class DebeziumJsonEncoder extends KeyedByColumns implements MessageEncoder {
    private static final String NAME = "debezium-json";
    private static final String FIELD_ATTRIBUTE = "debezium.field.";
    private static final String TRANSACTION_ATTRIBUTE = "debezium.transaction.";
    private static final String FIELDS_ATTRIBUTE = "debezium-json.fields.";
    private static final String ENVELOPE_FIELDS = FIELDS_ATTRIBUTE + "envelope";
    private static final String SOURCE_FIELD_NAMES = FIELDS_ATTRIBUTE + "source";
    private static final String SCHEMA_ATTRIBUTE = "debezium-json.schema.";
    private static final String ENVELOPE_SCHEMA = SCHEMA_ATTRIBUTE + "envelope";
    private static final String SCHEMALESS_WRAPPER = "debezium-json.schemaless_wrapper";
    // debezium._OWN: the attributes that say how a message was written.
    private static final List<String> OWN = List.of(FIELDS_ATTRIBUTE, SCHEMA_ATTRIBUTE, SCHEMALESS_WRAPPER);
    private static final List<String> ENVELOPE_FIELD_NAMES =
        List.of("before", "after", "source", "op", "ts_ms", "ts_us", "transaction");
    private static final Set<String> ROWS = Set.of("before", "after");
    private static final Set<String> TIMES = Set.of("ts_ms", "ts_us");
    // The source fields decoding reads as something other than the position, with a table and without one.
    private static final Set<String> RESERVED = Set.of("connector", "ts_ms", "ts_us", "db", "schema", "table");
    private static final Set<String> RESERVED_WITHOUT_TABLE = Set.of("connector", "ts_ms", "ts_us", "table");
    private static final Map<String, String> CODE_OF_OP = Map.of("INSERT", "c", "UPDATE", "u", "DELETE", "d",
        "READ", "r", "TRUNCATE", "t", "UPSERT", "c");
    static final Set<String> CARRIES = Set.of(
        "op.INSERT", "op.UPDATE", "op.DELETE", "op.READ", "op.TRUNCATE", "table", "table.schema", "table.catalog",
        "key", "before", "after", "image.columns",
        "value.null", "value.bool", "value.int", "value.float", "value.str", "value.off_type",
        "value.nested", "source.system", "source.position", "source.commit_time", "source.capture_time",
        "source.time.sub_ms");
    static final Set<String> OWN_ATTRIBUTES =
        Set.of(TRANSACTION_ATTRIBUTE, FIELD_ATTRIBUTE, FIELDS_ATTRIBUTE, SCHEMALESS_WRAPPER);
    // The fields of Debezium's transaction block (event.block): the schema of a null transaction.
    private static final List<Object> TRANSACTION_BLOCK = List.of(
        blockField("string", "id"), blockField("int64", "total_order"), blockField("int64", "data_collection_order"));

    private final boolean schemas;
    // What writes an event that came in a wrapper whose schema is null: it goes back in one, as without schemas.
    private final DebeziumJsonEncoder schemaless;

    // The names of the debezium-json.fields.* texts seen (a cache, kept small: a stream has a few orders, not many).
    private static final int NAMES_KEPT = 256;
    private final Map<String, Optional<List<String>>> namesOfText = new HashMap<>();
    private final Map<List<String>, String> textOfNames = new IdentityHashMap<>();
    // The layouts of the envelope and source shapes seen, by shape and what the kept names change of them (a cache,
    // kept as small: each event asks for its layouts several times, and a stream's events have a few shapes).
    private final Map<LayoutKey, Layout> layouts = new HashMap<>();
    // The shape of the last source asked for.
    private Shaped lastShaped = new Shaped(null, null, null);

    private record Shaped(Events.Source source, Events.Table table, SourceShape shape) {
    }

    public DebeziumJsonEncoder(Map<String, String> settings) {
        this(settings, Boolean.parseBoolean(settings.get("schemas")));
    }

    private DebeziumJsonEncoder(Map<String, String> settings, boolean schemas) {
        super(NAME, schemas ? changed(CARRIES, ConnectSchemas.TYPED_FEATURES, List.of()) : CARRIES,
            schemas ? changed(OWN_ATTRIBUTES, List.of(SCHEMA_ATTRIBUTE), List.of()) : OWN_ATTRIBUTES, null, settings,
            true);
        this.schemas = schemas;
        this.schemaless = schemas ? new DebeziumJsonEncoder(settings, false) : this;
    }

    @Override
    public byte[] encode(Events.Event event) throws EncodeException {
        return write(normalForm(event));
    }

    /** {@code DebeziumJsonCodec.encode_event}: the message of an event that is its own normal form. */
    byte[] write(Events.Event written) throws EncodeException {
        if (Boolean.TRUE.equals(attribute(written, SCHEMALESS_WRAPPER))) {
            Map<String, Object> wrapper = new LinkedHashMap<>();
            wrapper.put("schema", null);
            wrapper.put("payload", payload(written, false));
            return JsonOut.jackson(wrapper);
        }
        Map<String, Object> payload = payload(written, schemas);
        if (!schemas) {
            return JsonOut.jackson(payload);
        }
        Map<String, Object> wrapper = new LinkedHashMap<>();
        // Written as msgspec writes it, then spelt as Jackson (encode_as_jackson): only the payload's floats are
        // Java's.
        wrapper.put("schema", new JsonOut.Raw(JsonOut.msgspec(envelopeSchema(written, payload, keptSchema(written),
            true))));
        wrapper.put("payload", payload);
        return JsonOut.jackson(wrapper);
    }

    // -- the normal form ----------------------------------------------------------------------------------------------

    /**
     * {@code DebeziumJsonCodec.normal_form}; with {@code schemas}, an event that came in a wrapper whose schema is
     * null is written as without them, in that wrapper.
     */
    @Override
    public Events.Event normalForm(Events.Event event) throws EncodeException {
        if (schemas && Boolean.TRUE.equals(attribute(event, SCHEMALESS_WRAPPER))) {
            return schemaless.normalForm(event);
        }
        Events.Event written = super.normalForm(event);
        if (written.op().equals("UPSERT")) { // with_op_code: the row as it now is, read back as an INSERT
            written = withOp(written, "INSERT");
        }
        return envelopeForm(written);
    }

    /** {@code DebeziumJsonCodec.carried_cell}: with {@code schemas}, as its Connect schema gives it back. */
    @Override
    public Events.Cell carriedCell(Events.Cell cell) {
        Events.Cell carried = super.carriedCell(cell);
        return schemas ? ConnectSchemas.asReadBack(carried) : carried;
    }

    /**
     * {@code DebeziumJsonCodec.envelope_form}: the key read out of the row, the source position and the kept
     * attributes as a message gives them back.
     */
    Events.Event envelopeForm(Events.Event event) throws EncodeException {
        Events.Event keyed = withKeyAsRead(event, rowImage(event));
        Events.Source source = event.source();
        Events.Event written = new Events.Event(keyed.op(), keyed.table(), keyed.key(), keyed.before(), keyed.after(),
            new Events.Source(source.system(), positionAsWritten(source.position(), event.table() != null, schemas),
                source.commitTimeUs(), source.captureTimeUs()),
            keyed.keyOnly(), keyed.attributes());
        Map<String, Kept> own = new HashMap<>();
        for (Events.Entry attribute : event.attributes()) {
            if (isOwn(attribute.name())) {
                own = ownAttributesWritten(written);
                break;
            }
        }
        Map<String, Kept> ownWritten = own;
        List<Events.Entry> attributes = KeptFields.asDecoded(event.attributes(),
            (name, value) -> isOwn(name) ? ownWritten.get(name) : attributeGroup(name, value));
        return new Events.Event(written.op(), written.table(), written.key(), written.before(), written.after(),
            written.source(), written.keyOnly(), attributes);
    }

    private static boolean isOwn(String name) {
        for (String own : OWN) {
            if (name.startsWith(own)) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@code debezium_envelope.position_as_written}: a name that repeats keeps its first entry, one that decoding
     * reads as another source field is left out; with {@code schemas}, a value that only a column schema types
     * ({@code source} is plain JSON) is written as its JSON form, and a nested value no Connect schema holds as its
     * JSON text.
     */
    private static List<Events.Entry> positionAsWritten(List<Events.Entry> position, boolean hasTable,
                                                        boolean schemas) {
        Set<String> reserved = hasTable ? RESERVED : RESERVED_WITHOUT_TABLE;
        Set<String> seen = new HashSet<>();
        List<Events.Entry> written = new ArrayList<>(position.size());
        for (Events.Entry entry : position) {
            if (!reserved.contains(entry.name()) && seen.add(entry.name())) {
                if (schemas) {
                    Object value = entry.value();
                    value = ConnectSchemas.nestedAsReadBack(ConnectSchemas.schemaOnly(value) ? Values.jsonForm(value)
                        : value);
                    entry = value == entry.value() ? entry : new Events.Entry(entry.name(), value);
                }
                written.add(entry);
            }
        }
        return written;
    }

    /**
     * {@code debezium._attribute_group}: transaction fields are written first, as JSON scalars; kept envelope fields
     * then, as canonical JSON text.
     */
    private static Kept attributeGroup(String name, Object value) {
        if (name.startsWith(TRANSACTION_ATTRIBUTE)) {
            return new Kept(0, transactionValue(value));
        }
        if (name.startsWith(FIELD_ATTRIBUTE)
                && !ENVELOPE_FIELD_NAMES.contains(name.substring(FIELD_ATTRIBUTE.length()))) {
            return new Kept(1, KeptFields.canonicalJson(value));
        }
        return null;
    }

    /** {@code debezium._transaction_value}: a JSON scalar (a nested value as its JSON text). */
    private static Object transactionValue(Object value) {
        return Values.isNested(value) ? Values.render(value) : Values.jsonForm(value);
    }

    /**
     * {@code DebeziumJsonCodec._own_attributes_written}: the {@code debezium-json.fields.*} attributes that a message
     * of the event gives back (those that fit what the event writes, and say something writing would not generate),
     * and the schemaless wrapper's mark.
     */
    private Map<String, Kept> ownAttributesWritten(Events.Event event) throws EncodeException {
        List<Events.Entry> attributes = KeptFields.asDecoded(event.attributes(), DebeziumJsonEncoder::attributeGroup);
        Map<String, Kept> own = new LinkedHashMap<>();
        List<String> envelopeNames = names(attribute(event, ENVELOPE_FIELDS));
        Layout envelope = envelopeLayout(envelopeShape(event, attributes), envelopeNames);
        // An envelope's default order is the same whatever names the event keeps (not so its source's).
        if (envelopeNames != null && envelope.fits(envelopeNames) && !envelopeNames.equals(envelope.defaults)) {
            own.put(ENVELOPE_FIELDS, new Kept(2, namesText(envelopeNames)));
        }
        SourceShape sourceShape = sourceShape(event);
        List<String> sourceNames = names(attribute(event, SOURCE_FIELD_NAMES));
        if (sourceNames != null && sourceLayout(sourceShape, sourceNames).fits(sourceNames)
                && !sourceNames.equals(sourceLayout(sourceShape, null).defaults)) {
            own.put(SOURCE_FIELD_NAMES, new Kept(3, namesText(sourceNames)));
        }
        if (!envelope.order(envelopeNames).contains("source")) {
            own.remove(SOURCE_FIELD_NAMES); // an empty source that is not written: nor is the order of its fields
        }
        Map<?, ?> kept = keptSchema(event);
        if (Boolean.TRUE.equals(attribute(event, SCHEMALESS_WRAPPER))) {
            own.put(SCHEMALESS_WRAPPER, new Kept(4, Boolean.TRUE));
        } else if (schemas && kept != null) {
            // The kept schema as the message gives it back: merged with what the payload written holds, kept where
            // that is not the schema generated.
            List<Events.Entry> writtenAttributes = new ArrayList<>(attributes);
            own.forEach((name, text) -> writtenAttributes.add(new Events.Entry(name, text.value())));
            Events.Event written = new Events.Event(event.op(), event.table(), event.key(), event.before(),
                event.after(), event.source(), event.keyOnly(), writtenAttributes);
            Map<String, Object> payload = payload(written, true);
            String generated = JsonOut.msgspec(envelopeSchema(written, payload, null, false));
            String merged = JsonOut.msgspec(envelopeSchema(written, payload, kept, false));
            if (!merged.equals(generated)) {
                own.put(ENVELOPE_SCHEMA, new Kept(4, merged));
            }
        }
        return own;
    }

    // -- the fields of the envelope and of its source -------------------------------------------------------------

    /**
     * {@code debezium._Layout}: the fields an object can be written with, those it must have for the event to read
     * back, and their order when no kept order says another.
     */
    private static final class Layout {
        final Set<String> available;
        final List<String> required;
        final List<String> defaults;
        // Whether each list of kept names fits: lists that names() gives, one for each text, so known by identity.
        private final Map<List<String>, Boolean> fitting = new IdentityHashMap<>();

        Layout(Set<String> available, List<String> required, List<String> defaults) {
            this.available = available;
            this.required = required;
            this.defaults = defaults;
        }

        boolean fits(List<String> names) {
            return names != null && fitting.computeIfAbsent(names,
                kept -> kept.containsAll(required) && available.containsAll(kept));
        }

        List<String> order(List<String> names) {
            return fits(names) ? names : defaults;
        }
    }

    /** {@code debezium._EnvelopeShape}. */
    private record EnvelopeShape(boolean before, boolean after, boolean source, int timeKind, boolean transaction,
                                 List<String> kept) {
    }

    private static EnvelopeShape envelopeShape(Events.Event event, List<Events.Entry> attributes) {
        Events.Source source = event.source();
        boolean transaction = false;
        Set<String> kept = new LinkedHashSet<>();
        for (Events.Entry attribute : attributes) {
            String name = attribute.name();
            transaction |= name.startsWith(TRANSACTION_ATTRIBUTE);
            if (name.startsWith(FIELD_ATTRIBUTE)) {
                String field = name.substring(FIELD_ATTRIBUTE.length());
                if (!ENVELOPE_FIELD_NAMES.contains(field)) {
                    kept.add(field);
                }
            }
        }
        boolean saysSomething = source.system() != null || source.commitTimeUs() != null || event.table() != null
            || !source.position().isEmpty();
        return new EnvelopeShape(event.before() != null, event.after() != null, saysSomething,
            timeKind(source.captureTimeUs()), transaction, new ArrayList<>(kept));
    }

    /** {@code debezium._time_kind}: 0 no time, 1 whole milliseconds, 2 with microseconds. */
    private static int timeKind(Long instant) {
        return instant == null ? 0 : Math.floorMod(instant, 1000L) != 0 ? 2 : 1;
    }

    /**
     * {@code debezium._times}: which of ts_ms and ts_us must be written for a time of {@code kind} (ts_us where it
     * has microseconds, else ts_ms unless the kept order has ts_us), and their default order.
     */
    private static List<String> requiredTimes(int kind, boolean tsUsNamed) {
        return kind == 0 ? List.of() : kind == 2 ? List.of("ts_us") : tsUsNamed ? List.of() : List.of("ts_ms");
    }

    private static List<String> defaultTimes(int kind) {
        return kind == 0 ? List.of() : kind == 2 ? List.of("ts_ms", "ts_us") : List.of("ts_ms");
    }

    /** A shape, and whether the names kept name {@code ts_us} and {@code schema}, which change its layout. */
    private record LayoutKey(Record shape, boolean tsUsNamed, boolean schemaNamed) {
    }

    /** The layout of {@code key}, built by {@code build} where the cache of layouts has none. */
    private Layout layout(LayoutKey key, Function<LayoutKey, Layout> build) {
        if (layouts.size() > NAMES_KEPT) {
            layouts.clear();
        }
        return layouts.computeIfAbsent(key, build);
    }

    private static boolean named(List<String> names, String name) {
        return names != null && names.contains(name);
    }

    /** {@code debezium._envelope_layout}. */
    private Layout envelopeLayout(EnvelopeShape shape, List<String> names) {
        return layout(new LayoutKey(shape, named(names, "ts_us"), false), DebeziumJsonEncoder::envelopeLayoutOf);
    }

    private static Layout envelopeLayoutOf(LayoutKey key) {
        EnvelopeShape shape = (EnvelopeShape) key.shape();
        List<String> required = new ArrayList<>(List.of("op"));
        required.addAll(requiredTimes(shape.timeKind(), key.tsUsNamed()));
        required.addAll(shape.kept());
        List<String> defaults = new ArrayList<>(List.of("before", "after"));
        if (shape.before()) {
            required.add("before");
        }
        if (shape.after()) {
            required.add("after");
        }
        if (shape.source()) {
            required.add("source");
            defaults.add("source");
        }
        defaults.add("op");
        defaults.addAll(defaultTimes(shape.timeKind()));
        if (shape.transaction()) {
            required.add("transaction");
            defaults.add("transaction");
        }
        defaults.addAll(shape.kept());
        Set<String> available = new HashSet<>(ENVELOPE_FIELD_NAMES);
        available.addAll(shape.kept());
        return new Layout(available, required, defaults);
    }

    /** {@code debezium._SourceShape}: system, commit time's kind, table (catalog, schema), the position's names. */
    private record SourceShape(boolean system, int timeKind, Events.Table table, List<String> position) {
    }

    private SourceShape sourceShape(Events.Event event) {
        // Writing an event asks twice, for its normal form's own attributes and for its source, of one Source.
        if (event.source() == lastShaped.source() && event.table() == lastShaped.table()) {
            return lastShaped.shape();
        }
        Set<String> position = new LinkedHashSet<>();
        for (Events.Entry entry : event.source().position()) {
            position.add(entry.name());
        }
        SourceShape shape = new SourceShape(event.source().system() != null,
            timeKind(event.source().commitTimeUs()), event.table(), new ArrayList<>(position));
        lastShaped = new Shaped(event.source(), event.table(), shape);
        return shape;
    }

    /**
     * {@code debezium._source_layout}: connector, the commit time, the table ({@code db}, with {@code schema} where
     * the table has a catalog or the names have it, {@code table}), then the position.
     */
    private Layout sourceLayout(SourceShape shape, List<String> names) {
        return layout(new LayoutKey(shape, named(names, "ts_us"), named(names, "schema")),
            DebeziumJsonEncoder::sourceLayoutOf);
    }

    private static Layout sourceLayoutOf(LayoutKey key) {
        SourceShape shape = (SourceShape) key.shape();
        List<String> required = new ArrayList<>(requiredTimes(shape.timeKind(), key.tsUsNamed()));
        if (shape.system()) {
            required.add("connector");
        }
        Set<String> available = new HashSet<>(List.of("connector", "ts_ms", "ts_us"));
        List<String> defaults = new ArrayList<>();
        if (shape.system()) {
            defaults.add("connector");
        }
        defaults.addAll(defaultTimes(shape.timeKind()));
        Events.Table table = shape.table();
        if (table != null) {
            available.addAll(List.of("db", "table"));
            required.add("table");
            if (table.catalog() != null || key.schemaNamed()) {
                available.add("schema");
                required.add("schema");
                if (table.catalog() != null) {
                    required.add("db");
                }
                defaults.addAll(List.of("db", "schema", "table"));
            } else {
                if (table.schema() != null) {
                    required.add("db");
                }
                defaults.addAll(List.of("db", "table"));
            }
        }
        available.addAll(shape.position());
        required.addAll(shape.position());
        defaults.addAll(shape.position());
        return new Layout(available, required, defaults);
    }

    /**
     * {@code debezium._names}: the field names a {@code debezium-json.fields.*} attribute keeps, or null. Each text
     * is parsed once: a stream's messages keep the same few orders, and each event asks for its names four times.
     */
    private List<String> names(Object value) {
        if (!(value instanceof String)) {
            return null;
        }
        if (namesOfText.size() > NAMES_KEPT) {
            namesOfText.clear();
            textOfNames.clear();
            layouts.clear(); // which hold whether each list of names fits them
        }
        return namesOfText.computeIfAbsent((String) value, DebeziumJsonEncoder::parsedNames).orElse(null);
    }

    /** The names as msgspec writes them, written once for each list {@link #names} gives. */
    private String namesText(List<String> names) {
        return textOfNames.computeIfAbsent(names, JsonOut::msgspec);
    }

    private static Optional<List<String>> parsedNames(String text) {
        Object names = KeptFields.parsed(text);
        if (!(names instanceof List)) {
            return Optional.empty();
        }
        List<String> found = new ArrayList<>();
        for (Object name : (List<?>) names) {
            if (!(name instanceof String) || found.contains(name)) {
                return Optional.empty();
            }
            found.add((String) name);
        }
        return Optional.of(List.copyOf(found));
    }

    // -- writing ------------------------------------------------------------------------------------------------------

    /**
     * {@code debezium._payload}: the envelope, in the order the event keeps where it fits; with {@code schemas}, row
     * values as their Connect schemas type them.
     */
    private Map<String, Object> payload(Events.Event event, boolean schemas) throws EncodeException {
        List<String> names = names(attribute(event, ENVELOPE_FIELDS));
        List<String> order = envelopeLayout(envelopeShape(event, event.attributes()), names).order(names);
        Map<String, Object> document = new LinkedHashMap<>();
        Map<String, Object> kept = null;
        Long capture = event.source().captureTimeUs();
        for (String name : order) {
            switch (name) {
                case "before": document.put(name, imageFields(event.before(), schemas)); break;
                case "after": document.put(name, imageFields(event.after(), schemas)); break;
                case "source": document.put(name, sourceFields(event)); break;
                case "op": document.put(name, CODE_OF_OP.get(event.op())); break;
                case "ts_ms": document.put(name, capture == null ? null : Math.floorDiv(capture, 1000L)); break;
                case "ts_us": document.put(name, capture); break;
                case "transaction": document.put(name, transaction(event.attributes())); break;
                default:
                    if (kept == null) {
                        kept = KeptFields.write(event.attributes(), FIELD_ATTRIBUTE, ENVELOPE_FIELD_NAMES);
                    }
                    document.put(name, kept.get(name));
            }
        }
        return document;
    }

    private static Map<String, Object> transaction(List<Events.Entry> attributes) {
        Map<String, Object> transaction = new LinkedHashMap<>();
        for (Events.Entry attribute : attributes) {
            if (attribute.name().startsWith(TRANSACTION_ATTRIBUTE)) {
                transaction.put(attribute.name().substring(TRANSACTION_ATTRIBUTE.length()),
                    transactionValue(attribute.value()));
            }
        }
        return transaction.isEmpty() ? null : transaction;
    }

    /**
     * {@code debezium_envelope.image_fields}: an image as its JSON object; with {@code schemas}, values as its Connect
     * schema types them.
     */
    private static Map<String, Object> imageFields(List<Events.Cell> cells, boolean schemas) {
        if (cells == null) {
            return null;
        }
        Map<String, Object> fields = new LinkedHashMap<>();
        for (Events.Cell cell : cells) {
            fields.put(cell.name(), schemas ? ConnectSchema.jsonValue(cell.value()) : Values.jsonForm(cell.value()));
        }
        return fields;
    }

    /** {@code debezium._source_fields}: {@code source}, in the order the event keeps where it fits. */
    private Map<String, Object> sourceFields(Events.Event event) {
        List<String> names = names(attribute(event, SOURCE_FIELD_NAMES));
        List<String> order = sourceLayout(sourceShape(event), names).order(names);
        Events.Source source = event.source();
        Events.Table table = event.table();
        boolean schema = order.contains("schema");
        Map<String, Object> fields = new LinkedHashMap<>();
        for (String name : order) {
            fields.put(name, sourceField(name, source, table, schema));
        }
        return fields;
    }

    /**
     * The value of one field of {@code source}: the system, the commit time, the table's (with a table: {@code db}
     * is its catalog where {@code schema} is written, else its schema), else the first position entry of the name
     * (the position holds none of the names before, {@code position_as_written}).
     */
    private static Object sourceField(String name, Events.Source source, Events.Table table, boolean schema) {
        Long commit = source.commitTimeUs();
        switch (name) {
            case "connector": return source.system();
            case "ts_ms": return commit == null ? null : Math.floorDiv(commit, 1000L);
            case "ts_us": return commit;
            default:
        }
        if (table != null) {
            switch (name) {
                case "db": return schema ? table.catalog() : table.schema();
                case "schema": return table.schema();
                case "table": return table.name();
                default:
            }
        }
        for (Events.Entry entry : source.position()) {
            if (entry.name().equals(name)) {
                return Values.jsonForm(entry.value());
            }
        }
        throw new IllegalStateException("no source field " + name); // the layout names only fields the event has
    }

    // -- the envelope's schema ----------------------------------------------------------------------------------------

    /**
     * {@code debezium._kept_schema}: the envelope schema the event's {@code debezium-json.schema.envelope} keeps, when
     * it is one: a struct whose fields each have a name of their own.
     */
    private static Map<?, ?> keptSchema(Events.Event event) {
        Map<Object, Object> schema = ConnectSchemas.structText(attribute(event, ENVELOPE_SCHEMA));
        if (schema == null) {
            return null;
        }
        Set<Object> names = new HashSet<>();
        for (Object field : (List<?>) schema.get("fields")) {
            Object name = field instanceof Map ? ((Map<?, ?>) field).get("field") : null;
            if (!(name instanceof String) || !names.add(name)) {
                return null;
            }
        }
        return schema;
    }

    /**
     * {@code debezium._envelope_schema}: Debezium's envelope schema for {@code document}, the payload written for
     * {@code event}: the one {@code kept}, its rows given the columns of the cells, and each of its other fields
     * that does not hold the payload's value (null where the payload lacks it) replaced by the one generated, or
     * left out, then the generated struct of a row it does not describe whose cells need one; else the generated
     * one, which describes every field of the payload but the kept ones ({@code debezium.field.*}). Without
     * {@code columns}, the rows' structs have {@code "fields": []}.
     */
    private static Map<Object, Object> envelopeSchema(Events.Event event, Map<String, Object> document,
                                                      Map<?, ?> kept, boolean columns) {
        String prefix = schemaPrefix(event);
        List<Object> fields = new ArrayList<>();
        if (kept == null) {
            for (String name : document.keySet()) {
                Map<?, ?> field = generatedField(event, document, name, prefix, columns);
                if (field != null) {
                    fields.add(field);
                }
            }
            return ConnectSchema.structSchema(fields, false, prefix + "Envelope");
        }
        Set<Object> described = new HashSet<>();
        for (Object item : (List<?>) kept.get("fields")) {
            Map<?, ?> keptField = (Map<?, ?>) item;
            String name = (String) keptField.get("field");
            Object value = document.containsKey(name) ? parsed(document.get(name)) : null; // a field it lacks: null
            Map<?, ?> field;
            if (!ROWS.contains(name)) {
                field = ConnectSchema.holds(keptField, value) ? keptField
                    : generatedField(event, document, name, prefix, columns);
            } else if ("struct".equals(keptField.get("type")) && keptField.get("fields") instanceof List
                    && ((List<?>) keptField.get("fields")).isEmpty()) {
                field = !Json.isNull(value) || Boolean.TRUE.equals(keptField.get("optional"))
                    ? row(event, keptField, name, columns) : generatedField(event, document, name, prefix, columns);
            } else if (event.before() == null && event.after() == null) {
                // A change without rows (TRUNCATE) keeps its table's row struct whole: no cell holds its columns.
                field = ConnectSchema.holds(keptField, value) ? keptField
                    : generatedField(event, document, name, prefix, columns);
            } else {
                field = generatedField(event, document, name, prefix, columns);
            }
            if (field != null) {
                fields.add(field);
                described.add(field.get("field"));
            }
        }
        for (String name : List.of("before", "after")) {
            if (document.containsKey(name) && !described.contains(name)
                    && !readWithoutSchema(name.equals("before") ? event.before() : event.after())) {
                fields.add(row(event, rowHeader(prefix, name), name, columns));
            }
        }
        Map<Object, Object> schema = new LinkedHashMap<>(kept);
        schema.put("fields", fields);
        return schema;
    }

    /** The names of the envelope's structs start with the server (the position's {@code name}), schema and table. */
    private static String schemaPrefix(Events.Event event) {
        Object server = null;
        for (Events.Entry entry : event.source().position()) {
            if (entry.name().equals("name")) {
                server = entry.value(); // dict(position): the last of the name
            }
        }
        StringBuilder prefix = new StringBuilder();
        if (server instanceof String) {
            prefix.append(server).append('.');
        }
        Events.Table table = event.table();
        if (table != null) {
            if (table.schema() != null) {
                prefix.append(table.schema()).append('.');
            }
            prefix.append(table.name()).append('.');
        }
        return prefix.toString();
    }

    /** The field of the envelope schema generated for {@code document}'s field {@code name}; null for a kept one. */
    private static Map<Object, Object> generatedField(Events.Event event, Map<String, Object> document, String name,
                                                      String prefix, boolean columns) {
        if (!document.containsKey(name)) {
            return null;
        }
        Object value = document.get(name);
        Map<Object, Object> field;
        switch (name) {
            case "before":
            case "after":
                return row(event, rowHeader(prefix, name), name, columns);
            case "source": {
                Map<?, ?> fields = value instanceof Map ? (Map<?, ?>) value : Map.of();
                Object connector = fields.get("connector");
                field = jsonStructSchema(fields, false,
                    connector instanceof String ? "io.debezium.connector." + connector + ".Source" : null);
                break;
            }
            case "transaction":
                field = value instanceof Map && !((Map<?, ?>) value).isEmpty()
                    ? jsonStructSchema((Map<?, ?>) value, true, "event.block")
                    : ConnectSchema.structSchema(TRANSACTION_BLOCK, true, "event.block");
                field.put("version", 1L);
                break;
            case "op":
                field = primitiveSchema("string", false);
                break;
            case "ts_ms":
            case "ts_us":
                field = primitiveSchema("int64", true);
                break;
            default:
                return null; // a kept field (debezium.field.*): JSON of any shape
        }
        field.put("field", name);
        return field;
    }

    private static Map<Object, Object> blockField(String type, String name) {
        Map<Object, Object> field = primitiveSchema(type, false);
        field.put("field", name);
        return field;
    }

    private static Map<Object, Object> primitiveSchema(String type, boolean optional) {
        Map<Object, Object> schema = new LinkedHashMap<>();
        schema.put("type", type);
        schema.put("optional", optional);
        return schema;
    }

    /** {@code debezium_envelope.json_struct_schema}: the struct schema of an object of JSON values. */
    private static Map<Object, Object> jsonStructSchema(Map<?, ?> values, boolean optional, String name) {
        List<Object> fields = new ArrayList<>();
        for (Map.Entry<?, ?> value : values.entrySet()) {
            fields.add(ConnectSchema.jsonFieldSchema((String) value.getKey(), value.getValue()));
        }
        return ConnectSchema.structSchema(fields, optional, name);
    }

    /** The header of a row's struct as generated: an optional struct named {@code <prefix>Value}. */
    private static Map<Object, Object> rowHeader(String prefix, String name) {
        Map<Object, Object> header = ConnectSchema.structSchema(List.of(), true, prefix + "Value");
        header.put("field", name);
        return header;
    }

    /** A row's struct, {@code header} with the columns of the cells ({@code image_struct_schema}), or none. */
    private static Map<Object, Object> row(Events.Event event, Map<?, ?> header, String name, boolean columns) {
        Map<Object, Object> row = new LinkedHashMap<>(header);
        row.put("fields", columns ? ConnectSchemas.imageStructSchema(event, name, null).get("fields") : List.of());
        return row;
    }

    /**
     * {@code debezium._read_without_schema}: whether an image reads back as it is without a schema: no cell has a
     * type or a value only a schema types.
     */
    private static boolean readWithoutSchema(List<Events.Cell> image) {
        if (image != null) {
            for (Events.Cell cell : image) {
                if (cell.type() != null || ConnectSchemas.schemaOnly(cell.value())) {
                    return false;
                }
            }
        }
        return true;
    }

    /** {@code debezium._parsed}: a payload value as JSON: a kept field's raw text parsed. */
    private static Object parsed(Object value) {
        if (!(value instanceof JsonOut.Raw)) {
            return value;
        }
        try {
            return Json.parse(((JsonOut.Raw) value).text().getBytes(StandardCharsets.UTF_8));
        } catch (DecodeException notJson) {
            throw new IllegalStateException("a kept field is checked JSON text", notJson);
        }
    }

    // -- events -------------------------------------------------------------------------------------------------------

    private static Events.Event withOp(Events.Event event, String op) {
        return new Events.Event(op, event.table(), event.key(), event.before(), event.after(), event.source(),
            event.keyOnly(), event.attributes());
    }
}
