package cdcformats.jvm.decoders;

import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The canonical change event ({@code cdcformats/model.py}) as plain Java values, which every decoder builds and the
 * Spark adapter ({@code cdcformats.spark.jvm.SparkRows}) turns into rows of {@code cdcformats.envelopes.arrow.EVENT}:
 * <pre>
 * Event  = op, table Table, key [Cell], before [Cell], after [Cell], source Source, keyOnly, attributes [Entry]
 * Table  = catalog, schema, name          Source = system, position [Entry], commitTimeUs, captureTimeUs
 * Cell   = name, value, type, version, kind                       Entry = name, value
 * </pre>
 * Values are Java objects: {@code Boolean}, {@code Long}, {@code Double}, {@code String}, {@code byte[]},
 * {@link TypedText.DecimalText}, or null ({@link Json#NULL} too); a nested value is a {@code List} (the model's
 * array) or a {@code Map} with text keys in order (its Struct) of such values. Images are null when absent; the key
 * is never null.
 */
public final class Events {
    private Events() {
    }

    public static final String PUT = "PUT";
    public static final String DELETE_VERSION = "DELETE_VERSION";
    public static final String DELETE_ALL_VERSIONS = "DELETE_ALL_VERSIONS";

    public record Table(String catalog, String schema, String name) {
    }

    /** One column value; refuses, as it is built, a value the model cannot hold. */
    public record Cell(String name, Object value, String type, Long version, String kind) {
        public Cell {
            checkValue(value);
        }
    }

    public record Entry(String name, Object value) {
        public Entry {
            checkValue(value);
        }
    }

    public record Source(String system, List<Entry> position, Long commitTimeUs, Long captureTimeUs) {
    }

    public record Event(String op, Table table, List<Cell> key, List<Cell> before, List<Cell> after, Source source,
                        boolean keyOnly, List<Entry> attributes) {
    }

    /** Refuses what is not a change-event value (an integer beyond 64 bits arrives as a BigInteger). */
    private static void checkValue(Object value) {
        if (!(Json.isNull(value) || value instanceof Boolean || value instanceof Long || value instanceof Double
                || value instanceof String || value instanceof byte[] || value instanceof TypedText.DecimalText
                || value instanceof List || value instanceof Map)) {
            throw new IllegalArgumentException("not a change-event value: " + value.getClass().getName());
        }
    }

    /** The tags of nested text ({@link #tagged}), each an object of one member. */
    public static final Set<String> TAGS = Set.of("$binary", "$decimal", "$double", "$struct");

    /**
     * {@code arrow._tagged}: a nested value's members as its {@code nested} text holds them, for {@link Json#write}
     * to write as msgspec.json.encode does. Arrays and objects stay as they are; what JSON has no form for becomes an
     * object of one tag: {@code {"$binary": base64}}, {@code {"$decimal": text}}, {@code {"$double": "NaN"}}; a Struct
     * whose only field is named as a tag goes inside {@code {"$struct": ...}}.
     */
    public static Object tagged(Object value) {
        if (value instanceof List) {
            List<Object> items = new ArrayList<>();
            for (Object item : (List<?>) value) {
                items.add(tagged(item));
            }
            return items;
        }
        if (value instanceof Map) {
            Map<String, Object> members = new LinkedHashMap<>();
            for (Map.Entry<?, ?> field : ((Map<?, ?>) value).entrySet()) {
                members.put((String) field.getKey(), tagged(field.getValue()));
            }
            boolean wrapped = members.size() == 1 && TAGS.contains(members.keySet().iterator().next());
            return wrapped ? Map.of("$struct", members) : members;
        }
        if (value instanceof byte[]) {
            return Map.of("$binary", Base64.getEncoder().encodeToString((byte[]) value));
        }
        if (value instanceof TypedText.DecimalText) {
            return Map.of("$decimal", ((TypedText.DecimalText) value).text);
        }
        if (value instanceof Double && !Double.isFinite((Double) value)) {
            double number = (Double) value;
            return Map.of("$double", Double.isNaN(number) ? "NaN" : number > 0 ? "Infinity" : "-Infinity");
        }
        return value;
    }

    public static Cell cell(String name, Object value, String type, Long version, String kind) {
        return new Cell(name, value, type, version, kind);
    }

    public static Table table(String catalog, String schema, String name) {
        return new Table(catalog, schema, name);
    }

    /** The entries of a list of (name, value) pairs kept in order. */
    public static List<Entry> entries(List<Map.Entry<String, Object>> pairs) {
        List<Entry> entries = new ArrayList<>(pairs.size());
        for (Map.Entry<String, Object> pair : pairs) {
            entries.add(new Entry(pair.getKey(), pair.getValue()));
        }
        return entries;
    }

    /** One event. {@code table} is null when unknown; images are null when absent; {@code key} is never null. */
    public static Event event(String op, Table table, List<Cell> key, List<Cell> before, List<Cell> after,
                              String system, List<Map.Entry<String, Object>> position, Long commitTimeUs,
                              Long captureTimeUs, boolean keyOnly, List<Map.Entry<String, Object>> attributes) {
        return new Event(op, table, key, before, after,
            new Source(system, entries(position), commitTimeUs, captureTimeUs), keyOnly, entries(attributes));
    }
}
