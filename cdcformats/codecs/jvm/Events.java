package cdcformats.codecs.jvm;

import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Rows of the canonical event's Spark type ({@code cdcformats.envelopes.arrow.EVENT}), field for field:
 * <pre>
 * EVENT  = op, table TABLE, key [CELL], before [CELL], after [CELL], source SOURCE, key_only, attributes [ENTRY], error
 * TABLE  = catalog, schema, name          SOURCE = system, position [ENTRY], commit_time_us, capture_time_us
 * CELL   = name, value VALUE, type, version, kind                 ENTRY = name, value VALUE
 * VALUE  = boolean, long, double, string, bytes, decimal, nested (exactly one set; the whole value null for a null)
 * ERROR  = format, reason, field, message, raw
 * </pre>
 * Values are Java objects: {@code Boolean}, {@code Long}, {@code Double}, {@code String}, {@code byte[]},
 * {@link TypedText.DecimalText}, or null ({@link Json#NULL} too); a nested value is a {@code List} (the model's
 * array) or a {@code Map} with text keys in order (its Struct) of such values, written to {@code nested} as the tagged
 * JSON text of {@code arrow.value_row}, byte for byte.
 */
public final class Events {
    private Events() {
    }

    public static final String PUT = "PUT";
    public static final String DELETE_VERSION = "DELETE_VERSION";
    public static final String DELETE_ALL_VERSIONS = "DELETE_ALL_VERSIONS";

    private static UTF8String text(String value) {
        return value == null ? null : UTF8String.fromString(value);
    }

    /** A VALUE row, or null for a null value; refuses what the model cannot hold (an integer beyond 64 bits). */
    public static InternalRow value(Object value) {
        if (Json.isNull(value)) {
            return null;
        }
        Object[] members = new Object[7];
        if (value instanceof Boolean) {
            members[0] = value;
        } else if (value instanceof Long) {
            members[1] = value;
        } else if (value instanceof Double) {
            members[2] = value;
        } else if (value instanceof String) {
            members[3] = UTF8String.fromString((String) value);
        } else if (value instanceof byte[]) {
            members[4] = value;
        } else if (value instanceof TypedText.DecimalText) {
            members[5] = UTF8String.fromString(((TypedText.DecimalText) value).text);
        } else if (value instanceof List || value instanceof Map) {
            members[6] = UTF8String.fromString(Json.write(tagged(value)));
        } else {
            throw new IllegalArgumentException("not a change-event value: " + value.getClass().getName());
        }
        return new GenericInternalRow(members);
    }

    private static final Set<String> TAGS = Set.of("$binary", "$decimal", "$double", "$struct");

    /**
     * {@code arrow._tagged}: a nested value's members as its {@code nested} text holds them, for {@link Json#write}
     * to write as msgspec.json.encode does. Arrays and objects stay as they are; what JSON has no form for becomes an
     * object of one tag: {@code {"$binary": base64}}, {@code {"$decimal": text}}, {@code {"$double": "NaN"}}; a Struct
     * whose only field is named as a tag goes inside {@code {"$struct": ...}}.
     */
    static Object tagged(Object value) {
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

    public static InternalRow cell(String name, Object value, String type, Long version, String kind) {
        return new GenericInternalRow(new Object[] {text(name), value(value), text(type), version, text(kind)});
    }

    public static InternalRow entry(String name, Object value) {
        return new GenericInternalRow(new Object[] {text(name), value(value)});
    }

    public static InternalRow table(String catalog, String schema, String name) {
        return new GenericInternalRow(new Object[] {text(catalog), text(schema), text(name)});
    }

    /** An array of rows, or null for an absent image. */
    public static GenericArrayData array(List<InternalRow> rows) {
        return rows == null ? null : new GenericArrayData(rows.toArray());
    }

    /** The entries of a list of (name, value) pairs kept in order. */
    public static GenericArrayData entries(List<Map.Entry<String, Object>> pairs) {
        Object[] rows = new Object[pairs.size()];
        for (int i = 0; i < rows.length; i++) {
            rows[i] = entry(pairs.get(i).getKey(), pairs.get(i).getValue());
        }
        return new GenericArrayData(rows);
    }

    /** One event. {@code table} is a TABLE row or null; images are null when absent; {@code key} is never null. */
    public static InternalRow event(String op, InternalRow table, List<InternalRow> key, List<InternalRow> before,
                                    List<InternalRow> after, String system,
                                    List<Map.Entry<String, Object>> position, Long commitTimeUs, Long captureTimeUs,
                                    boolean keyOnly, List<Map.Entry<String, Object>> attributes) {
        InternalRow source = new GenericInternalRow(new Object[] {
            text(system), entries(position), commitTimeUs, captureTimeUs});
        return new GenericInternalRow(new Object[] {
            text(op), table, array(key), array(before), array(after), source, keyOnly, entries(attributes), null});
    }

    /** A dead-letter row: every event field null but {@code error}. */
    public static InternalRow error(String format, String reason, String field, String message, byte[] raw) {
        InternalRow error = new GenericInternalRow(new Object[] {
            text(format), text(reason), text(field), text(message), raw});
        return new GenericInternalRow(new Object[] {null, null, null, null, null, null, null, null, error});
    }
}
