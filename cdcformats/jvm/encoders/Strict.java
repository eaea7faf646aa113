package cdcformats.jvm.encoders;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.decoders.Numbers;
import cdcformats.jvm.decoders.PythonDecimal;
import cdcformats.jvm.decoders.TypedText;

/**
 * The option {@code strict}: an event that a target would write only by dropping something is refused, as
 * {@code convert.refusal} refuses it: {@code <target> cannot carry <feature>: <what it writes instead>}, on the field
 * where the target's normal form first differs from the event ({@code losses.differences}, of which this is a port,
 * in the same order, with Python's {@code repr} of what is written instead).
 */
public final class Strict {
    private static final String PUT = Events.PUT;
    private static final int SHOWN_LIMIT = 60; // losses._shown

    private Strict() {
    }

    /** The error {@code strict} refuses {@code event} with in {@code format}, or null where nothing is dropped. */
    public static EncodeException refusal(EventEncoder encoder, String format, Events.Event event)
            throws EncodeException {
        Events.Event written;
        try {
            written = encoder.normalForm(event);
        } catch (EncodeException error) {
            if (error.feature == null) {
                throw error; // not a change without a form here, but an event that cannot be written at all
            }
            return lossy(format, error.feature, error.field, error.reason);
        }
        Differences found = new Differences(encoder);
        found.of(event, written);
        if (found.first == null) {
            return null;
        }
        return lossy(format, found.first[0], found.first[1], found.first[2]);
    }

    private static EncodeException lossy(String format, String feature, String path, String why) {
        return new EncodeException(format + " cannot carry " + feature + (why.isEmpty() ? "" : ": " + why), path);
    }

    /** {@code losses.differences} and {@code _Found}, up to the first difference (all that strict reports). */
    private static final class Differences {
        private final EventEncoder target;
        String[] first; // feature, path, why

        Differences(EventEncoder target) {
            this.target = target;
        }

        private void found(String feature, String path, String why) {
            if (first == null) {
                first = new String[] {feature, path, why};
            }
        }

        /** {@code _Found.replaced}: what is written instead, shown. */
        private void replaced(String feature, String path, String shown, boolean nothing) {
            found(feature, path, nothing ? "not written" : "written as " + shortened(shown));
        }

        private void replacedValue(String feature, String path, Object written) {
            replaced(feature, path, Repr.value(written), written == null || isEmptyArray(written));
        }

        void of(Events.Event event, Events.Event written) {
            if (!written.op().equals(event.op())) {
                replaced("op." + event.op(), "op", written.op(), false);
            }
            Events.Table table = event.table();
            Events.Table writtenTable = written.table();
            if (!Objects.equals(table, writtenTable)) {
                if (table == null || writtenTable == null || !writtenTable.name().equals(table.name())) {
                    replaced("table", "table", Repr.table(writtenTable), writtenTable == null);
                } else {
                    if (!Objects.equals(writtenTable.schema(), table.schema())) {
                        replacedValue("table.schema", "table.schema", writtenTable.schema());
                    }
                    if (!Objects.equals(writtenTable.catalog(), table.catalog())) {
                        replacedValue("table.catalog", "table.catalog", writtenTable.catalog());
                    }
                }
            }
            image("key", event.key(), written.key());
            image("before", event.before(), written.before());
            image("after", event.after(), written.after());
            Events.Source source = event.source();
            Events.Source writtenSource = written.source();
            if (!Objects.equals(writtenSource.system(), source.system())) {
                replacedValue("source.system", "source.system", writtenSource.system());
            }
            if (!sameEntries(source.position(), writtenSource.position())) {
                entries("source.position", source.position(), writtenSource.position());
            }
            time("source.commit_time", "source.commit_time_us", source.commitTimeUs(), writtenSource.commitTimeUs());
            time("source.capture_time", "source.capture_time_us", source.captureTimeUs(),
                writtenSource.captureTimeUs());
            if (written.keyOnly() != event.keyOnly()) {
                replaced("key_only", "key_only", written.keyOnly() ? "True" : "False", false);
            }
            if (!sameEntries(event.attributes(), written.attributes())) {
                entries("attributes", event.attributes(), written.attributes());
            }
        }

        private void time(String feature, String path, Long time, Long written) {
            if (Objects.equals(written, time)) {
                return;
            }
            boolean toTheMillisecond = time != null && written != null
                && written == NormalForm.flooredToMillisecond(time);
            replaced(toTheMillisecond ? "source.time.sub_ms" : feature, path, String.valueOf(written),
                written == null);
        }

        /**
         * {@code _Found.image}: compared cell by cell where the written image is the event's with cells taken away
         * or changed in place, else replaced whole.
         */
        private void image(String name, List<Events.Cell> image, List<Events.Cell> written) {
            if (sameImage(image, written)) {
                return;
            }
            boolean some = image != null && !image.isEmpty();
            boolean writtenSome = written != null && !written.isEmpty();
            List<Pair<Events.Cell>> pairs = some && writtenSome ? paired(image, written, Events.Cell::name) : null;
            if (pairs == null || !firstOfEachNameKept(pairs)) {
                // A row of other columns, or in another order: a typed row, unless the target writes rows as they
                // come.
                boolean typed = some && writtenSome && !name.equals("key") && !target.carries("image.columns");
                replaced(typed ? "image.columns" : name, name, Repr.cells(written), !writtenSome);
                return;
            }
            Set<String> keptNames = new HashSet<>();
            for (Events.Cell cell : written) {
                keptNames.add(cell.name());
            }
            for (int index = 0; index < pairs.size(); index++) {
                Events.Cell cell = pairs.get(index).item();
                Events.Cell writtenCell = pairs.get(index).written();
                String path = name + "[" + index + "]";
                if (writtenCell == null) {
                    found(keptNames.contains(cell.name()) ? "cell.repeated" : "image.columns", path, "not written");
                } else if (!Values.sameCell(cell, writtenCell)) {
                    cell(path, cell, writtenCell);
                }
            }
        }

        private void cell(String path, Events.Cell cell, Events.Cell written) {
            boolean deleted = !cell.kind().equals(PUT) && !written.kind().equals(cell.kind());
            if (!Values.same(cell.value(), written.value())) {
                replacedValue(deleted ? "cell.kind." + cell.kind() : valueFeature(cell.value(), written.value()),
                    path + ".value", written.value());
            }
            if (!Objects.equals(written.type(), cell.type())) {
                replacedValue(written.type() == null && target.carries("cell.type") ? "value.off_type" : "cell.type",
                    path + ".type", written.type());
            }
            if (!Objects.equals(written.version(), cell.version())) {
                replacedValue("cell.version", path + ".version", written.version());
            }
            if (!written.kind().equals(cell.kind())) {
                // A deletion written as a put of null, or a put written as a deletion: a row key entry that nothing
                // marks as the key reads back with its mutation's kind.
                replaced(cell.kind().equals(PUT) ? "key" : "cell.kind." + cell.kind(), path + ".kind", written.kind(),
                    false);
            }
        }

        /** {@code _Found.entries}: named values (attributes, a source position), compared entry by entry. */
        private void entries(String name, List<Events.Entry> entries, List<Events.Entry> written) {
            List<Pair<Events.Entry>> pairs = paired(entries, written, Events.Entry::name);
            if (pairs == null) {
                replaced(name, name, Repr.entries(written), written.isEmpty());
                return;
            }
            for (int index = 0; index < pairs.size(); index++) {
                Events.Entry entry = pairs.get(index).item();
                Events.Entry writtenEntry = pairs.get(index).written();
                if (writtenEntry == null) {
                    found(name, name + "[" + index + "]", "no place for " + entry.name());
                } else if (!Values.same(entry.value(), writtenEntry.value())) {
                    String feature = Repr.typeName(entry.value()).equals(Repr.typeName(writtenEntry.value())) ? name
                        : valueFeature(entry.value(), writtenEntry.value());
                    replacedValue(feature, name + "[" + index + "].value", writtenEntry.value());
                }
            }
        }
    }

    /** {@code losses._value_feature}: the feature a target lacks where it writes {@code written} for {@code value}. */
    private static String valueFeature(Object value, Object written) {
        if (Values.isNonFinite(value) && value instanceof Double) {
            return "value.float_nonfinite";
        }
        if (Values.isNested(value)) {
            return Values.isNested(written) ? "value.nested_non_json" : "value.nested";
        }
        return Values.feature(value);
    }

    private static boolean isEmptyArray(Object value) {
        return value instanceof List && ((List<?>) value).isEmpty();
    }

    /** {@code _shown}: at most 60 characters (code points, as Python counts them). */
    private static String shortened(String shown) {
        if (shown.codePointCount(0, shown.length()) <= SHOWN_LIMIT) {
            return shown;
        }
        return shown.substring(0, shown.offsetByCodePoints(0, SHOWN_LIMIT - 3)) + "...";
    }

    // -- the model's equality -----------------------------------------------------------------------------------------

    private static boolean sameImage(List<Events.Cell> left, List<Events.Cell> right) {
        if (left == null || right == null) {
            return left == right;
        }
        if (left.size() != right.size()) {
            return false;
        }
        for (int i = 0; i < left.size(); i++) {
            if (!Values.sameCell(left.get(i), right.get(i))) {
                return false;
            }
        }
        return true;
    }

    private static boolean sameEntries(List<Events.Entry> left, List<Events.Entry> right) {
        if (left.size() != right.size()) {
            return false;
        }
        for (int i = 0; i < left.size(); i++) {
            if (!left.get(i).name().equals(right.get(i).name())
                    || !Values.same(left.get(i).value(), right.get(i).value())) {
                return false;
            }
        }
        return true;
    }

    /** An element of an event (a cell, an entry) and the written element that stands in its place, or null. */
    private record Pair<T>(T item, T written) {
    }

    /**
     * {@code losses._paired}: each item with the written item that stands in its place (null: taken away), where the
     * written items are the items with some taken away and the others kept in order under their names; else null.
     */
    private static <T> List<Pair<T>> paired(List<T> items, List<T> written, Function<T, String> nameOf) {
        List<Pair<T>> pairs = new ArrayList<>(items.size());
        int next = 0;
        for (T item : items) {
            boolean kept = next < written.size() && nameOf.apply(written.get(next)).equals(nameOf.apply(item));
            pairs.add(new Pair<>(item, kept ? written.get(next++) : null));
        }
        return next == written.size() ? pairs : null;
    }

    /** {@code losses._first_of_each_name_kept}. */
    private static boolean firstOfEachNameKept(List<Pair<Events.Cell>> pairs) {
        Set<String> taken = new HashSet<>();
        for (Pair<Events.Cell> pair : pairs) {
            if (pair.written() == null) {
                taken.add(pair.item().name());
            } else if (taken.contains(pair.item().name())) {
                return false;
            }
        }
        return true;
    }

    /** Python's {@code repr} of the model's objects, as {@code _shown} shows what a target writes instead. */
    static final class Repr {
        private Repr() {
        }

        /** The name of a value's Python type, as {@code type(a) is type(b)} tells two apart. */
        static String typeName(Object value) {
            if (value == null) {
                return "NoneType";
            }
            if (value instanceof List) {
                return "tuple";
            }
            if (value instanceof Map) {
                return "Struct";
            }
            return value.getClass().getName();
        }

        static String value(Object value) {
            StringBuilder out = new StringBuilder();
            value(value, out);
            return out.toString();
        }

        private static void value(Object value, StringBuilder out) {
            if (value == null) {
                out.append("None");
            } else if (value instanceof Boolean) {
                out.append((Boolean) value ? "True" : "False");
            } else if (value instanceof Long) {
                out.append(value);
            } else if (value instanceof Double) {
                out.append(Numbers.pythonRepr((Double) value));
            } else if (value instanceof String) {
                out.append(PythonStrings.repr((String) value));
            } else if (value instanceof byte[]) {
                out.append(PythonStrings.bytesRepr((byte[]) value));
            } else if (value instanceof TypedText.DecimalText) {
                out.append("Decimal(").append(PythonStrings.repr(PythonDecimal.str(((TypedText.DecimalText) value)
                    .text))).append(')');
            } else if (value instanceof List) {
                List<String> items = new ArrayList<>();
                for (Object item : (List<?>) value) {
                    items.add(value(item));
                }
                out.append(tuple(items));
            } else { // a Struct, as a Map
                List<String> fields = new ArrayList<>();
                for (Map.Entry<?, ?> field : ((Map<?, ?>) value).entrySet()) {
                    fields.add("(" + value(field.getKey()) + ", " + value(field.getValue()) + ")");
                }
                out.append("Struct(fields=").append(tuple(fields)).append(')');
            }
        }

        static String table(Events.Table table) {
            return table == null ? "None" : "Table(name=" + value(table.name()) + ", schema=" + value(table.schema())
                + ", catalog=" + value(table.catalog()) + ")";
        }

        static String cells(List<Events.Cell> cells) {
            if (cells == null) {
                return "None";
            }
            List<String> shown = new ArrayList<>(cells.size());
            for (Events.Cell cell : cells) {
                shown.add("Cell(name=" + value(cell.name()) + ", value=" + value(cell.value()) + ", type="
                    + value(cell.type()) + ", version=" + value(cell.version()) + ", kind=<CellKind." + cell.kind()
                    + ": '" + cell.kind() + "'>)");
            }
            return tuple(shown);
        }

        static String entries(List<Events.Entry> entries) {
            List<String> shown = new ArrayList<>(entries.size());
            for (Events.Entry entry : entries) {
                shown.add("(" + value(entry.name()) + ", " + value(entry.value()) + ")");
            }
            return tuple(shown);
        }

        private static String tuple(List<String> items) {
            return "(" + String.join(", ", items) + (items.size() == 1 ? ",)" : ")");
        }
    }
}
