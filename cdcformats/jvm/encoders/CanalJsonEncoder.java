package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.decoders.Json;
import cdcformats.jvm.decoders.Numbers;
import cdcformats.jvm.decoders.PythonDecimal;
import cdcformats.jvm.decoders.TypedText;
import cdcformats.jvm.encoders.KeptFields.Kept;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * {@code codecs/canal.py}'s encoder in Java: each event as {@code encode_exact(written(event))} writes it, one flat
 * message of one row. The normal form is the event as far as canal-json carries it ({@link NormalForm}), each cell
 * written as its text and read back typed by its {@code mysqlType} only where that gives the same text
 * ({@link #carriedCell}), reshaped to the changes Canal writes ({@link #reshaped}), then the key cells the row lacks
 * put into it, an update's {@code old} entry as decoding reads it back, Canal's position and its own attributes as a
 * message gives them back. The message is written by {@link JsonOut#msgspec}, every value as Canal, a Java program,
 * spells it ({@link #text}).
 *
 * <p>Settings: {@code read_type}, {@code INSERT} (the default) or {@code INIT}: the type a snapshot READ is written as.
 */
public final class CanalJsonEncoder extends NormalForm implements MessageEncoder {
    private static final String NAME = "canal-json";
    private static final String SQL_ATTRIBUTE = "canal.sql";
    private static final String SQL_TYPE_ATTRIBUTE = "canal.sqlType";
    private static final String FIELD_ATTRIBUTE = "canal.field.";
    // The fields of Canal's FlatMessage: a kept field of one of these names would read back as Canal's own.
    private static final List<String> FIELDS = List.of("data", "database", "es", "gtid", "id", "isDdl", "mysqlType",
        "old", "pkNames", "sql", "sqlType", "table", "ts", "type");
    private static final long MILLISECOND = 1000L;
    // canal.MOST_DECIMAL_PLACES: the most digits after a decimal's point that Canal writes in plain digits.
    private static final int MOST_DECIMAL_PLACES = 38;
    private static final Set<String> CARRIES = Set.of(
        "op.INSERT", "op.UPDATE", "op.DELETE", "op.TRUNCATE", "table", "table.schema", "key", "before", "after",
        "image.columns", "cell.type", "value.null", "value.bool", "value.int", "value.float", "value.str",
        "value.decimal", "value.float_nonfinite", "source.position", "source.commit_time", "source.capture_time");
    private static final Set<String> OWN_ATTRIBUTES = Set.of(SQL_ATTRIBUTE, SQL_TYPE_ATTRIBUTE, FIELD_ATTRIBUTE);
    private static final List<Shape> SHAPES = List.of(new Shape("INSERT", ABSENT, PRESENT),
        new Shape("UPDATE", PRESENT, PRESENT), new Shape("DELETE", PRESENT, ABSENT),
        new Shape("TRUNCATE", ABSENT, ABSENT));
    private static final List<Shape> SHAPES_WITH_INIT = List.of(SHAPES.get(0), SHAPES.get(1), SHAPES.get(2),
        SHAPES.get(3), new Shape("READ", ABSENT, PRESENT));

    // read_type INIT: a READ is written as Canal's INIT (it carries op.READ); else as an INSERT.
    private final boolean readAsInit;

    public CanalJsonEncoder(Map<String, String> settings) {
        this("INIT".equals(settings.getOrDefault("read_type", "INSERT")));
    }

    private CanalJsonEncoder(boolean readAsInit) {
        super(NAME, readAsInit ? changed(CARRIES, List.of("op.READ"), List.of()) : CARRIES, OWN_ATTRIBUTES,
            readAsInit ? SHAPES_WITH_INIT : SHAPES);
        this.readAsInit = readAsInit;
    }

    @Override
    public byte[] encode(Events.Event event) throws EncodeException {
        Events.Event written = normalForm(event);
        return message(written).getBytes(StandardCharsets.UTF_8);
    }

    /** {@code CanalJsonCodec.encode_event}: the flat message of an event of the normal form. */
    private static String message(Events.Event event) throws EncodeException {
        String op = event.op();
        Object data = null;
        Object old = null;
        Object keyNames = null;
        Map<String, Object> types = new LinkedHashMap<>();
        if (!op.equals("TRUNCATE")) {
            Map<String, Object> texts = texts(op.equals("DELETE") ? event.before() : event.after(), types);
            data = List.of(texts);
            if (op.equals("UPDATE")) {
                old = List.of(texts(changed(texts, event.before()), null));
                addTypes(event.before(), types);
            }
            if (!event.key().isEmpty()) {
                List<Object> names = new ArrayList<>();
                for (Events.Cell cell : event.key()) {
                    names.add(cell.name());
                }
                keyNames = names;
            }
        }
        Events.Table table = event.table();
        Events.Source source = event.source();
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("data", data);
        document.put("database", table == null ? null : table.schema());
        document.put("es", milliseconds(source.commitTimeUs()));
        for (String name : List.of("gtid", "id")) { // Canal's field order; the normal form has each once
            for (Events.Entry entry : source.position()) {
                if (entry.name().equals(name)) {
                    document.put(name, entry.value());
                }
            }
        }
        document.put("isDdl", op.equals("TRUNCATE"));
        document.put("mysqlType", types.isEmpty() ? null : types);
        document.put("old", old);
        document.put("pkNames", keyNames);
        document.put("sql", "");
        document.put("sqlType", null);
        document.put("table", table == null ? null : table.name());
        document.put("ts", milliseconds(source.captureTimeUs()));
        document.put("type", op.equals("READ") ? "INIT" : op);
        List<Events.Entry> attributes = event.attributes();
        if (!attributes.isEmpty()) {
            for (int index = 0; index < attributes.size(); index++) {
                Events.Entry attribute = attributes.get(index);
                if (attribute.name().equals(SQL_ATTRIBUTE)) {
                    document.put("sql", attribute.value());
                } else if (attribute.name().equals(SQL_TYPE_ATTRIBUTE)) {
                    document.put("sqlType", KeptFields.raw(attribute.value(), "attributes[" + index + "]"));
                }
            }
            document.putAll(KeptFields.write(attributes, FIELD_ATTRIBUTE, FIELDS));
        }
        return JsonOut.msgspec(document);
    }

    private static Long milliseconds(Long microseconds) {
        return microseconds == null ? null : Math.floorDiv(microseconds, MILLISECOND);
    }

    // -- the normal form ----------------------------------------------------------------------------------------------

    /**
     * {@code CanalJsonCodec.carried_cell}: a row holds text, so each value is written as its text and read back typed
     * by the column's {@code mysqlType} only where that gives the same text; a deleted column is null; no versions.
     */
    @Override
    public Events.Cell carriedCell(Events.Cell cell) {
        Object value = cell.kind().equals(Events.PUT) ? cell.value() : null;
        Object readBack = readBack(value, cell.type());
        if (Values.same(readBack, value)) {
            if (cell.kind().equals(Events.PUT) && cell.version() == null) {
                return cell;
            }
            readBack = value;
        }
        return new Events.Cell(cell.name(), readBack, cell.type(), null, Events.PUT);
    }

    /**
     * {@code CanalJsonCodec.reshaped}: an UPSERT (and a READ, unless {@code read_type} is INIT) is an INSERT; a row
     * Canal's type needs and the event lacks is its key cells; an UPDATE without its before image has an empty
     * {@code old}, its before image its after image; an UPDATE without its after image has no form; a TRUNCATE lists
     * no rows.
     */
    @Override
    protected Events.Event reshaped(Events.Event event) throws EncodeException {
        String op = event.op();
        if (op.equals("UPSERT") || op.equals("READ") && !readAsInit) {
            op = "INSERT";
        }
        if (op.equals("UPDATE")) {
            if (event.after() == null) {
                throw EncodeException.refused("op.UPDATE", "after",
                    "Canal writes an UPDATE's new row as its data, and this UPDATE has none");
            }
            return event.before() != null ? event : new Events.Event(event.op(), event.table(), event.key(),
                event.after(), event.after(), event.source(), event.keyOnly(), event.attributes());
        }
        if (op.equals("TRUNCATE")) {
            return new Events.Event(op, event.table(), event.key(), null, null, event.source(), event.keyOnly(),
                event.attributes());
        }
        return withOneRow(event, op);
    }

    /**
     * {@code CanalJsonCodec.normal_form}: the key cells the row lacks go into it (a TRUNCATE has no key); an update's
     * {@code old} holds the changed columns, typed once with the row; the position is Canal's id, then its gtid; its
     * own attributes as decoding gives them.
     */
    @Override
    public Events.Event normalForm(Events.Event event) throws EncodeException {
        Events.Event written = super.normalForm(event);
        List<Events.Cell> key = List.of();
        List<Events.Cell> before = written.before();
        List<Events.Cell> after = written.after();
        if (!written.op().equals("TRUNCATE")) {
            boolean rowIsBefore = written.op().equals("DELETE");
            List<Events.Cell> image = rowIsBefore ? before : after;
            List<Events.Cell> row = new ArrayList<>(KeyColumns.outside(written.key(), image));
            row.addAll(image);
            if (written.op().equals("UPDATE")) {
                Map<String, String> types = columnTypes(row, before);
                List<Events.Cell> retyped = retyped(row, types);
                before = before(retyped, retyped(changed(texts(row, null), before), types));
                row = retyped;
            }
            if (rowIsBefore) {
                before = row;
            } else {
                after = row;
            }
            key = keyOf(written.key(), row);
        }
        Events.Source source = written.source();
        return new Events.Event(written.op(), written.table(), key, before, after,
            new Events.Source(source.system(), positionAsDecoded(source.position()), source.commitTimeUs(),
                source.captureTimeUs()),
            written.keyOnly(), KeptFields.asDecoded(written.attributes(), CanalJsonEncoder::attributeGroup));
    }

    /** {@code canal._key}: the row's cells of the key's names (the last of a name), in key order. */
    private static List<Events.Cell> keyOf(List<Events.Cell> key, List<Events.Cell> row) {
        Map<String, Events.Cell> byName = new HashMap<>();
        for (Events.Cell cell : row) {
            byName.put(cell.name(), cell);
        }
        List<Events.Cell> cells = new ArrayList<>();
        for (Events.Cell cell : key) {
            Events.Cell inRow = byName.get(cell.name());
            if (inRow != null) {
                cells.add(inRow);
            }
        }
        return cells;
    }

    /** {@code canal._column_types_of}: {@code mysqlType}, the type of each typed column, the row's first. */
    private static Map<String, String> columnTypes(List<Events.Cell> row, List<Events.Cell> old) {
        Map<String, String> types = new HashMap<>();
        for (List<Events.Cell> cells : List.of(row, old)) {
            for (Events.Cell cell : cells) {
                if (cell.type() != null) {
                    types.putIfAbsent(cell.name(), cell.type());
                }
            }
        }
        return types;
    }

    private static void addTypes(List<Events.Cell> cells, Map<String, Object> types) {
        for (Events.Cell cell : cells) {
            if (cell.type() != null) {
                types.putIfAbsent(cell.name(), cell.type());
            }
        }
    }

    /** {@code canal._retyped}: each cell read back in the column type {@code types} gives it. */
    private static List<Events.Cell> retyped(List<Events.Cell> cells, Map<String, String> types) {
        List<Events.Cell> retyped = new ArrayList<>(cells.size());
        for (Events.Cell cell : cells) {
            String type = types.get(cell.name());
            retyped.add(new Events.Cell(cell.name(), readBack(cell.value(), type), type, null, Events.PUT));
        }
        return retyped;
    }

    /**
     * {@code canal._before}: an update's before image, the row with its {@code old} columns replaced, then the
     * {@code old} columns it lacks.
     */
    private static List<Events.Cell> before(List<Events.Cell> row, List<Events.Cell> old) {
        Map<String, Events.Cell> changed = new LinkedHashMap<>();
        for (Events.Cell cell : old) {
            changed.put(cell.name(), cell);
        }
        List<Events.Cell> before = new ArrayList<>(row.size() + changed.size());
        for (Events.Cell cell : row) {
            Events.Cell replaced = changed.remove(cell.name());
            before.add(replaced == null ? cell : replaced);
        }
        before.addAll(changed.values());
        return before;
    }

    /**
     * {@code canal._changed}: the before cells an update's {@code old} entry holds, those whose text differs from the
     * after image's and those the after image lacks.
     */
    private static List<Events.Cell> changed(Map<String, Object> afterTexts, List<Events.Cell> before) {
        List<Events.Cell> changed = new ArrayList<>();
        for (Events.Cell cell : before) {
            if (!afterTexts.containsKey(cell.name())
                    || !Objects.equals(text(cell.value()), afterTexts.get(cell.name()))) {
                changed.add(cell);
            }
        }
        return changed;
    }

    /**
     * {@code canal._texts} (and, given {@code types}, {@code _texts_typed}): a row as Canal writes it, each column's
     * text, the last of a name; the type of each typed column added to {@code types}.
     */
    private static Map<String, Object> texts(List<Events.Cell> cells, Map<String, Object> types) {
        Map<String, Object> texts = new LinkedHashMap<>();
        for (Events.Cell cell : cells) {
            texts.put(cell.name(), text(cell.value()));
            if (types != null && cell.type() != null) {
                types.putIfAbsent(cell.name(), cell.type());
            }
        }
        return texts;
    }

    /** {@code canal._position_as_decoded}: the first {@code id}, then the first {@code gtid}, as JSON scalars. */
    private static List<Events.Entry> positionAsDecoded(List<Events.Entry> position) {
        List<Events.Entry> decoded = new ArrayList<>(2);
        for (String name : List.of("id", "gtid")) {
            for (Events.Entry entry : position) {
                if (entry.name().equals(name)) {
                    decoded.add(new Events.Entry(name, Values.jsonForm(entry.value())));
                    break;
                }
            }
        }
        return decoded;
    }

    /**
     * {@code canal._attribute_group}: the SQL text (not empty) first, then {@code sqlType} (canonical JSON, not
     * null), then the kept fields (canonical JSON, not naming Canal's own fields).
     */
    private static Kept attributeGroup(String name, Object value) {
        if (name.equals(SQL_ATTRIBUTE)) {
            return value instanceof String && !((String) value).isEmpty() ? new Kept(0, value) : null;
        }
        if (name.equals(SQL_TYPE_ATTRIBUTE)) {
            return KeptFields.isCanonical(value, false) && !"null".equals(value) ? new Kept(1, value) : null;
        }
        return name.startsWith(FIELD_ATTRIBUTE) && !FIELDS.contains(name.substring(FIELD_ATTRIBUTE.length()))
            && KeptFields.isCanonical(value, false) ? new Kept(2, value) : null;
    }

    // -- values -------------------------------------------------------------------------------------------------------

    /** {@code canal._read_back}: a value as decoding reads its text back in a column of {@code typeName}. */
    private static Object readBack(Object value, String typeName) {
        String text = text(value);
        return text == null ? null : TypedText.parseAsJava(text, typeName);
    }

    /** {@code canal._text}: a value as Canal writes it, text; binary columns as ISO-8859-1 text. */
    private static String text(Object value) {
        if (Json.isNull(value)) {
            return null;
        }
        if (value instanceof String) {
            return (String) value;
        }
        if (value instanceof byte[]) {
            return new String((byte[]) value, StandardCharsets.ISO_8859_1);
        }
        return spelled(value);
    }

    /**
     * {@code canal._spelled}: a double as Java's {@code Double.toString}, a decimal as {@code format(d, "f")} unless
     * its exponent is positive or it has more than 38 places, anything else as {@code typed_text.render}.
     */
    private static String spelled(Object value) {
        if (value instanceof Double && Double.isFinite((Double) value)) {
            return Numbers.javaText((Double) value);
        }
        if (value instanceof TypedText.DecimalText) {
            String plain = PythonDecimal.plainDigits(((TypedText.DecimalText) value).text, MOST_DECIMAL_PLACES);
            if (plain != null) {
                return plain;
            }
        }
        return Values.render(value);
    }
}
