package cdcformats.jvm.decoders;

import java.math.BigInteger;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/** What the JVM decoders of the JSON formats share, each the counterpart of a piece of {@code _kit}. */
public final class Messages {
    private Messages() {
    }

    /** {@code json_message.load_object}: one JSON object, refused unparsed beyond {@code maxBytes}. */
    public static Map<String, Object> loadObject(byte[] message, long maxBytes) throws DecodeException {
        if (message.length > maxBytes) {
            throw new DecodeException("message of " + message.length + " bytes is over the limit of " + maxBytes
                + " (option max_message_bytes)", null);
        }
        Object document = Json.parse(message);
        if (!(document instanceof Map)) {
            throw new DecodeException("expected a JSON object, got " + Json.typeName(document), null);
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> object = (Map<String, Object>) document;
        return object;
    }

    /**
     * {@code json_message.database_table}: [schema, name] of the fields {@code database} and {@code table} (Canal,
     * Maxwell), or null for a message without a table.
     */
    public static String[] databaseTable(Object database, Object name) throws DecodeException {
        String[] fields = {"database", "table"};
        Object[] values = {database, name};
        for (int i = 0; i < 2; i++) {
            if (!Json.isNull(values[i]) && !(values[i] instanceof String)) {
                throw new DecodeException("expected a string or null, got " + Json.typeName(values[i]), fields[i]);
            }
        }
        if (!(name instanceof String)) {
            if (database instanceof String) {
                throw new DecodeException("a database without a table", "table");
            }
            return null;
        }
        return new String[] {database instanceof String ? (String) database : null, (String) name};
    }

    /** {@code kept_fields.read}: the fields other than {@code reserved}, as prefix + name and the field's JSON text. */
    public static List<Map.Entry<String, Object>> keptFields(String prefix, Map<String, Object> document,
                                                             Set<String> reserved) {
        List<Map.Entry<String, Object>> kept = new ArrayList<>();
        for (Map.Entry<String, Object> field : document.entrySet()) {
            if (!reserved.contains(field.getKey())) {
                kept.add(pair(prefix + field.getKey(), Json.write(field.getValue())));
            }
        }
        return kept;
    }

    /**
     * {@code json_message.value_of}: a parsed JSON value as a cell value. An array is the model's array and an object
     * its Struct as they are (a {@code List}, a {@code LinkedHashMap}); an integer beyond 64 bits anywhere in it, or
     * nesting deeper than {@link #MAX_NESTING}, is refused, the message naming where it is and the field being
     * {@code path}.
     */
    public static Object valueOf(Object parsed, String path) throws DecodeException {
        return valueOf(parsed, path, 0);
    }

    /** {@link #valueOf(Object, String)} for a value {@code depth} levels inside a nested value. */
    public static Object valueOf(Object parsed, String path, int depth) throws DecodeException {
        String refusal = refusal(parsed, path, depth);
        if (refusal != null) {
            throw new DecodeException(refusal, path);
        }
        return parsed;
    }

    /** The model's {@code MAX_NESTING}: how many levels of arrays and objects a value may hold. */
    public static final int MAX_NESTING = 32;

    /**
     * {@code typed_text.from_json}'s refusal, in its order: the ValueError text for the first integer beyond 64 bits
     * or array or object deeper than {@link #MAX_NESTING}, or null.
     */
    private static String refusal(Object parsed, String where, int depth) {
        if (parsed instanceof BigInteger) {
            return where + ": integer " + parsed + " is outside the signed 64-bit range";
        }
        if ((parsed instanceof List || parsed instanceof Map) && depth == MAX_NESTING) {
            return where + ": nested deeper than " + MAX_NESTING + " levels";
        }
        if (parsed instanceof List) {
            List<?> items = (List<?>) parsed;
            for (int index = 0; index < items.size(); index++) {
                String refusal = refusal(items.get(index), where + "[" + index + "]", depth + 1);
                if (refusal != null) {
                    return refusal;
                }
            }
        } else if (parsed instanceof Map) {
            for (Map.Entry<?, ?> field : ((Map<?, ?>) parsed).entrySet()) {
                String refusal = refusal(field.getValue(), where + "." + field.getKey(), depth + 1);
                if (refusal != null) {
                    return refusal;
                }
            }
        }
        return null;
    }

    /** A map of names to values, given in turn, that keeps their order (Map.of does not). */
    public static Map<String, String> inOrder(String... namesAndValues) {
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            map.put(namesAndValues[i], namesAndValues[i + 1]);
        }
        return map;
    }

    public static Map.Entry<String, Object> pair(String name, Object value) {
        return new AbstractMap.SimpleImmutableEntry<>(name, value);
    }

    /** {@code ChangeEventDeserializer.__call__}'s refusal of a message that is not exactly one change. */
    public static DecodeException notOneEvent(int count) {
        return new DecodeException("a message holds one change, this one " + count
            + ": read it with events(), as the bridge does", null);
    }

    /** {@code time_units.to_microseconds}: null when the microseconds leave 64 bits. */
    public static Long toMicroseconds(long count, long unit) {
        try {
            return Math.multiplyExact(count, unit);
        } catch (ArithmeticException outside64Bits) {
            return null;
        }
    }

    /**
     * The fields of {@code fields} that a message has, in that order, each a JSON scalar kept verbatim as a position
     * entry (a parsed double is always finite; an integer beyond 64 bits would not read back as itself). Any other
     * value is refused: "expected {@code expected}, got" what {@code described} calls it.
     */
    public static List<Map.Entry<String, Object>> scalarFields(Map<String, Object> document, List<String> fields,
                                                               String expected, Function<Object, String> described)
            throws DecodeException {
        List<Map.Entry<String, Object>> scalars = new ArrayList<>();
        for (String field : fields) {
            if (document.containsKey(field)) {
                Object value = document.get(field);
                if (value instanceof Map || value instanceof List || value instanceof BigInteger) {
                    throw new DecodeException("expected " + expected + ", got " + described.apply(value), field);
                }
                scalars.add(pair(field, value));
            }
        }
        return scalars;
    }
}
