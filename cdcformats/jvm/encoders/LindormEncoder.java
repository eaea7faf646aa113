package cdcformats.jvm.encoders;

import static cdcformats.jvm.decoders.LindormDecoder.BLANK_TS_ATTRIBUTE;
import static cdcformats.jvm.decoders.LindormDecoder.DOCUMENTED_FIELDS;
import static cdcformats.jvm.decoders.LindormDecoder.FIELD_PREFIX;
import static cdcformats.jvm.decoders.LindormDecoder.OP_ATTRIBUTE;

import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.decoders.Json;
import cdcformats.jvm.decoders.TypedText;
import cdcformats.jvm.encoders.KeptFields.Kept;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * {@code codecs/lindorm.py}'s encoder in Java: each event as {@code encode_exact(written(event))} writes it, one
 * mutation message. The normal form is the event as far as lindorm carries it ({@link KeyedByColumns}: key cells the
 * row lacks written in front of it, moving the entries {@code lindorm.blank_ts} names), each value written as text
 * and typed back by its entry's type ({@link #carriedCell}), reshaped to the mutations Lindorm has ({@link #reshaped}),
 * then each entry of the mutation's kind but the key columns', the key read back out of the row, and the attributes as
 * decoding gives them. The message is written by {@link JsonOut#msgspec}, every scalar as a JSON string.
 *
 * <p>Settings: {@code key_columns} and {@code key_columns_per_table} ({@code KeyColumns.settings()}).
 */
public final class LindormEncoder extends KeyedByColumns implements MessageEncoder {
    private static final String NAME = "lindorm";
    private static final long MILLISECOND = 1000L;

    /** {@code lindorm._OPS}: a Lindorm op's canonical op, whether {@code data} is the before image, its cells' kind. */
    private record Mutation(String op, boolean before, String kind) {
    }

    private static final Map<String, Mutation> OPS = Map.of(
        "Put", new Mutation("UPSERT", false, Events.PUT),
        "Delete", new Mutation("UPDATE", false, Events.DELETE_VERSION),
        "DeleteColumn", new Mutation("UPDATE", false, Events.DELETE_ALL_VERSIONS),
        "DeleteFamily", new Mutation("DELETE", true, Events.PUT),
        "DeleteFamilyVersion", new Mutation("UPDATE", false, Events.DELETE_VERSION));
    private static final Set<String> CARRIES = Set.of(
        "op.UPSERT", "op.UPDATE", "op.DELETE", "table", "key", "before", "after", "image.columns",
        "cell.type", "cell.version", "cell.repeated", "cell.kind.DELETE_VERSION", "cell.kind.DELETE_ALL_VERSIONS",
        "value.null", "value.bool", "value.int", "value.float", "value.float_nonfinite", "value.str",
        "value.decimal", "source.commit_time", "key_only");
    private static final List<Shape> SHAPES = List.of(
        new Shape("UPSERT", ABSENT, PRESENT),
        new Shape("UPDATE", ABSENT, PRESENT, Set.of(Events.DELETE_VERSION)),
        new Shape("UPDATE", ABSENT, NONEMPTY, Set.of(Events.DELETE_ALL_VERSIONS)),
        new Shape("DELETE", PRESENT, ABSENT));

    public LindormEncoder(Map<String, String> settings) {
        super(NAME, CARRIES, Set.of(OP_ATTRIBUTE, BLANK_TS_ATTRIBUTE, FIELD_PREFIX), SHAPES, settings, true);
    }

    @Override
    public byte[] encode(Events.Event event) throws EncodeException {
        return JsonOut.msgspec(message(normalForm(event))).getBytes(StandardCharsets.UTF_8);
    }

    /** {@code LindormCodec.encode_event}: the mutation message of an event of the normal form. */
    private Map<String, Object> message(Events.Event event) throws EncodeException {
        boolean attributes = !event.attributes().isEmpty();
        Object kept = attributes ? attribute(event, OP_ATTRIBUTE) : null;
        Object opName = kept instanceof String && !((String) kept).isEmpty() ? kept
            : derivedOp(event, keyColumns.forTable(event.table()));
        Mutation mutation = OPS.get(opName);
        if (mutation == null || !mutation.op().equals(event.op())) {
            throw new EncodeException("lindorm has no mutation for this " + event.op(), "op");
        }
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("op", opName);
        if (event.table() != null) {
            document.put("table", event.table().name());
        }
        Long commitTime = event.source().commitTimeUs();
        if (commitTime != null) {
            document.put("ts", Long.toString(Math.floorDiv(commitTime, MILLISECOND)));
        }
        document.put("keyOnly", event.keyOnly() ? "true" : "false");
        List<Events.Cell> image = mutation.before() ? event.before() : event.after();
        List<Integer> blankTs = attributes ? blankTs(attribute(event, BLANK_TS_ATTRIBUTE), image) : List.of();
        List<Object> data = new ArrayList<>(image.size());
        for (int index = 0; index < image.size(); index++) {
            data.add(entry(image.get(index), blankTs.contains(index)));
        }
        document.put("data", data);
        if (attributes) {
            document.putAll(KeptFields.write(event.attributes(), FIELD_PREFIX, DOCUMENTED_FIELDS));
        }
        return document;
    }

    /** {@code lindorm._entry}: an entry of {@code data}, its version and value as text ({@code ts} blank). */
    private static Map<String, Object> entry(Events.Cell cell, boolean blankTs) {
        Map<String, Object> entry = new LinkedHashMap<>();
        if (cell.type() != null) {
            entry.put("type", cell.type());
        }
        entry.put("name", cell.name());
        if (cell.version() != null) {
            entry.put("ts", Long.toString(cell.version()));
        } else if (blankTs) {
            entry.put("ts", "");
        }
        if (!Json.isNull(cell.value())) {
            entry.put("value", Values.render(cell.value()));
        }
        return entry;
    }

    // -- the normal form ----------------------------------------------------------------------------------------------

    /** {@code LindormCodec.row_image_name}: a mutation writes a DELETE's before image, any other change's after. */
    @Override
    protected boolean rowIsBefore(Events.Event event) {
        return event.op().equals("DELETE");
    }

    /** {@code LindormCodec.read_key}: key entries identify the row, so they read back as PUT cells. */
    @Override
    protected List<Events.Cell> readKey(Events.Table table, List<Events.Cell> image) {
        List<Events.Cell> key = new ArrayList<>();
        for (Events.Cell cell : super.readKey(table, image)) {
            key.add(withKind(cell, Events.PUT));
        }
        return key;
    }

    /**
     * {@code LindormCodec.keyed_by_row}: as written, the entries {@code lindorm.blank_ts} names move by as many places
     * as key entries are written in front of them; in an UPDATE that only deletes columns, the entries of the
     * event's key that key_columns does not name read back with the mutation's kind.
     */
    @Override
    protected Events.Event keyedByRow(Events.Event event) {
        Events.Event written = super.keyedByRow(event);
        int inFront = KeyColumns.outside(event.key(), rowImage(event)).size();
        if (inFront > 0 && hasBlankTs(event)) {
            List<Events.Entry> attributes = new ArrayList<>(event.attributes().size());
            for (Events.Entry attribute : event.attributes()) {
                Object value = attribute.value();
                Set<Long> listed = attribute.name().equals(BLANK_TS_ATTRIBUTE) ? listedPositions(value) : Set.of();
                if (!listed.isEmpty()) { // the key entries written in front of the row move the entries it names
                    List<Long> moved = new ArrayList<>(listed.size());
                    for (long position : new TreeSet<>(listed)) {
                        // A position beyond an int names no entry, before or after the move.
                        if (position >= 0 && position <= Integer.MAX_VALUE) {
                            moved.add(position + inFront);
                        }
                    }
                    value = positionsText(moved);
                }
                attributes.add(new Events.Entry(attribute.name(), value));
            }
            written = new Events.Event(written.op(), written.table(), written.key(), written.before(),
                written.after(), written.source(), written.keyOnly(), attributes);
        }
        List<Events.Cell> after = written.after();
        if (!event.op().equals("UPDATE") || after == null) {
            return written;
        }
        List<?> keyColumns = this.keyColumns.forTable(event.table());
        Set<String> identifying = names(event.key());
        for (Object name : keyColumns) {
            identifying.add((String) name);
        }
        String kind = onlyDeletes(after, identifying);
        if (kind == null) {
            return written;
        }
        List<Events.Cell> image = new ArrayList<>(after.size());
        for (Events.Cell cell : after) {
            image.add(identifying.contains(cell.name()) && !keyColumns.contains(cell.name()) ? withKind(cell, kind)
                : cell);
        }
        return new Events.Event(written.op(), written.table(), written.key(), written.before(), image,
            written.source(), written.keyOnly(), written.attributes());
    }

    private static boolean hasBlankTs(Events.Event event) {
        for (Events.Entry attribute : event.attributes()) {
            if (attribute.name().equals(BLANK_TS_ATTRIBUTE)) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@code LindormCodec.carried_cell}: every value is written as text and typed back by its entry's type: bytes as
     * base64 text, a nested value as its JSON text; a text that its type would retype loses the type; any other
     * value that its type does not read back is written as its text, typed back as far as the type reads it.
     */
    @Override
    public Events.Cell carriedCell(Events.Cell cell) {
        Object value = cell.value();
        if (value instanceof byte[] || Values.isNested(value)) {
            value = Values.asText(value);
        }
        if (!TypedText.carries(value, cell.type())) {
            if (value instanceof String) {
                return new Events.Cell(cell.name(), value, null, cell.version(), cell.kind());
            }
            value = TypedText.parse(Values.render(value), cell.type());
        }
        return value == cell.value() ? cell
            : new Events.Cell(cell.name(), value, cell.type(), cell.version(), cell.kind());
    }

    /**
     * {@code LindormCodec.reshaped}: a change as the Lindorm mutation closest to it: an INSERT, READ or UPDATE that
     * puts values is a Put (an UPSERT), a column it deletes written as the column set to null; an UPDATE that only
     * deletes columns is a Delete or DeleteColumn; a DELETE is a DeleteFamily of its before image, its entries the
     * row's cells. A mutation holds one image.
     */
    @Override
    protected Events.Event reshaped(Events.Event event) throws EncodeException {
        if (event.op().equals("TRUNCATE")) {
            return super.reshaped(event);
        }
        boolean before = rowIsBefore(event);
        List<Events.Cell> image = before ? event.before() : event.after();
        if (image == null) {
            String imageName = before ? "before" : "after";
            throw EncodeException.refused("op." + event.op(), imageName, "a Lindorm mutation writes the row's "
                + imageName + " image, and this " + event.op() + " has none");
        }
        if (before) {
            List<Events.Cell> row = new ArrayList<>(image.size());
            for (Events.Cell cell : image) {
                row.add(withKind(cell, Events.PUT));
            }
            return new Events.Event(event.op(), event.table(), event.key(), row, null, event.source(),
                event.keyOnly(), event.attributes());
        }
        Set<String> keyNames = names(event.key());
        if (event.op().equals("UPDATE") && onlyDeletes(image, keyNames) != null) { // a Delete or DeleteColumn
            return new Events.Event(event.op(), event.table(), event.key(), null, image, event.source(),
                event.keyOnly(), event.attributes());
        }
        List<Events.Cell> row = new ArrayList<>(image.size());
        for (Events.Cell cell : image) {
            row.add(cell.kind().equals(Events.PUT) ? cell : new Events.Cell(cell.name(),
                keyNames.contains(cell.name()) ? cell.value() : null, cell.type(), cell.version(), Events.PUT));
        }
        return new Events.Event("UPSERT", event.table(), event.key(), null, row, event.source(), event.keyOnly(),
            event.attributes());
    }

    /**
     * {@code LindormCodec.normal_form}: entries of key columns read back as PUT cells, every other entry with the
     * mutation's kind; the key read back out of the row; the attributes as decoding gives them.
     */
    @Override
    public Events.Event normalForm(Events.Event event) throws EncodeException {
        Events.Event written = super.normalForm(event);
        List<?> keyColumns = this.keyColumns.forTable(written.table());
        List<Events.Entry> attributes = attributesAsDecoded(written, keyColumns, rowImage(written));
        // attributesAsDecoded keeps lindorm.op only where it names an op that writes the event (fits)
        Object opName = !attributes.isEmpty() && attributes.get(0).name().equals(OP_ATTRIBUTE)
            ? attributes.get(0).value() : derivedOp(written, keyColumns);
        Mutation mutation = OPS.get(opName);
        List<Events.Cell> image = new ArrayList<>();
        for (Events.Cell cell : mutation.before() ? written.before() : written.after()) {
            image.add(withKind(cell, keyColumns.contains(cell.name()) ? Events.PUT : mutation.kind()));
        }
        written = withKeyAsRead(new Events.Event(written.op(), written.table(), written.key(),
            mutation.before() ? image : written.before(), mutation.before() ? written.after() : image,
            written.source(), written.keyOnly(), written.attributes()), image);
        return new Events.Event(written.op(), written.table(), written.key(), written.before(), written.after(),
            written.source(), written.keyOnly(), attributes);
    }

    /**
     * {@code lindorm._attributes_as_decoded}: {@code lindorm.op} first, where it names an op that writes the event
     * and that cannot be derived from it; then {@code lindorm.blank_ts}, as the entries of {@code image} (the one
     * written) that it makes blank; then the kept fields.
     */
    private static List<Events.Entry> attributesAsDecoded(Events.Event event, List<?> keyColumns,
                                                          List<Events.Cell> image) {
        return KeptFields.asDecoded(event.attributes(), (name, value) -> {
            if (name.equals(OP_ATTRIBUTE)) {
                return !Objects.equals(value, derivedOp(event, keyColumns)) && fits(value, event, keyColumns)
                    ? new Kept(0, value) : null;
            }
            if (name.equals(BLANK_TS_ATTRIBUTE)) {
                List<Integer> blankTs = blankTs(value, image);
                return blankTs.isEmpty() ? null : new Kept(1, positionsText(blankTs));
            }
            return KeptFields.isKeptField(name, value, FIELD_PREFIX, DOCUMENTED_FIELDS) ? new Kept(2, value) : null;
        });
    }

    /** {@code lindorm._fits}: whether the Lindorm op {@code opName} writes the event: its op, and its entries' kind. */
    private static boolean fits(Object opName, Events.Event event, List<?> keyColumns) {
        Mutation mutation = opName instanceof String ? OPS.get(opName) : null;
        if (mutation == null || !mutation.op().equals(event.op())) {
            return false;
        }
        List<Events.Cell> image = mutation.before() ? event.before() : event.after();
        if (image == null) {
            return false;
        }
        for (Events.Cell cell : image) {
            if (!keyColumns.contains(cell.name()) && !cell.kind().equals(mutation.kind())) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@code lindorm._derived_op}: a DELETE is a DeleteFamily, an UPDATE that only deletes is a Delete or
     * DeleteColumn, anything else a Put.
     */
    private static String derivedOp(Events.Event event, List<?> keyColumns) {
        if (event.op().equals("DELETE")) {
            return "DeleteFamily";
        }
        if (event.op().equals("UPDATE")) {
            Set<String> keyNames = new HashSet<>();
            for (Object name : keyColumns) {
                keyNames.add((String) name);
            }
            String kind = onlyDeletes(event.after() == null ? List.of() : event.after(), keyNames);
            if (kind != null) {
                return kind.equals(Events.DELETE_VERSION) ? "Delete" : "DeleteColumn";
            }
        }
        return "Put";
    }

    /**
     * The kind of the cells of {@code image} outside {@code names} where they only delete: DELETE_VERSION where they
     * are all of it (or there are none), DELETE_ALL_VERSIONS where they are all of that; else null.
     */
    private static String onlyDeletes(List<Events.Cell> image, Set<String> names) {
        Set<String> kinds = new HashSet<>();
        for (Events.Cell cell : image) {
            if (!names.contains(cell.name())) {
                kinds.add(cell.kind());
            }
        }
        if (kinds.isEmpty() || kinds.equals(Set.of(Events.DELETE_VERSION))) {
            return Events.DELETE_VERSION;
        }
        return kinds.equals(Set.of(Events.DELETE_ALL_VERSIONS)) ? Events.DELETE_ALL_VERSIONS : null;
    }

    /**
     * {@code lindorm._listed_positions}: the positions a {@code lindorm.blank_ts} of {@code value} lists: JSON text
     * of an array of integers (not booleans or floats); else none.
     */
    private static Set<Long> listedPositions(Object value) {
        Set<Long> listed = new HashSet<>();
        Object parsed = KeptFields.parsed(value);
        if (parsed instanceof List) {
            for (Object item : (List<?>) parsed) {
                if (item instanceof Long) { // an integer beyond 64 bits names no entry either
                    listed.add((Long) item);
                }
            }
        }
        return listed;
    }

    /**
     * {@code lindorm._blank_ts}: the positions of the entries that a {@code lindorm.blank_ts} of {@code value} writes
     * with a blank {@code ts}: those it lists that are entries of {@code image} without a version; in order.
     */
    private static List<Integer> blankTs(Object value, List<Events.Cell> image) {
        Set<Long> listed = listedPositions(value);
        List<Integer> blank = new ArrayList<>();
        for (int index = 0; index < image.size(); index++) {
            if (image.get(index).version() == null && listed.contains((long) index)) {
                blank.add(index);
            }
        }
        return blank;
    }

    /** {@code lindorm._positions_text}: positions as the JSON text of an array. */
    private static String positionsText(List<? extends Number> positions) {
        return JsonOut.msgspec(positions);
    }

    private static Set<String> names(List<Events.Cell> cells) {
        Set<String> names = new HashSet<>();
        for (Events.Cell cell : cells) {
            names.add(cell.name());
        }
        return names;
    }

    private static Events.Cell withKind(Events.Cell cell, String kind) {
        return cell.kind().equals(kind) ? cell
            : new Events.Cell(cell.name(), cell.value(), cell.type(), cell.version(), kind);
    }
}
