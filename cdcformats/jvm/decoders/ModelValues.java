package cdcformats.jvm.decoders;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The checks {@code cdcformats/model.py} makes of the nested values it is given, in its order and words, for the
 * decoders of the canonical envelopes, whose bodies may hold any value: a Struct names each field once, and no value
 * is nested deeper than {@link Messages#MAX_NESTING} levels.
 */
final class ModelValues {
    private ModelValues() {
    }

    /** A value the model refuses: its ValueError's text. */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message, null, false, false);
        }
    }

    /** {@code Struct(fields)}: the fields in order, each name once; a field's array checked first, as the model does. */
    static Map<String, Object> struct(List<Map.Entry<String, Object>> fields) throws Refused {
        checkEntries(fields, "struct field");
        Map<String, Object> struct = new LinkedHashMap<>();
        int depth = 0;
        for (Map.Entry<String, Object> field : fields) {
            if (struct.containsKey(field.getKey())) {
                throw new Refused("struct field " + Python.repr(field.getKey()) + " twice: a struct names each field "
                    + "once");
            }
            struct.put(field.getKey(), field.getValue());
        }
        for (Object value : struct.values()) {
            depth = Math.max(depth, nesting(value));
        }
        if (depth + 1 > Messages.MAX_NESTING) {
            throw new Refused("struct: nested deeper than " + Messages.MAX_NESTING + " levels");
        }
        return struct;
    }

    /** {@code check_value} of an array where the model is given one: {@code where} names it, as the model does. */
    static void checkValue(Object value, String where) throws Refused {
        if (value instanceof List && nesting(value) > Messages.MAX_NESTING) {
            throw new Refused(where + ": nested deeper than " + Messages.MAX_NESTING + " levels");
        }
    }

    /** The model's {@code _entries(pairs, where)}: each entry's value checked, named {@code <where> '<name>'}. */
    static void checkEntries(List<Map.Entry<String, Object>> entries, String where) throws Refused {
        for (Map.Entry<String, Object> entry : entries) {
            if (entry.getValue() instanceof List) {
                checkValue(entry.getValue(), where + " " + Python.repr(entry.getKey()));
            }
        }
    }

    /** {@code model.nesting}: how many levels of arrays and Structs a value is, 0 for a scalar. */
    static int nesting(Object value) {
        int inner = 0;
        if (value instanceof List) {
            for (Object item : (List<?>) value) {
                inner = Math.max(inner, nesting(item));
            }
            return inner + 1;
        }
        if (value instanceof Map) {
            for (Object item : ((Map<?, ?>) value).values()) {
                inner = Math.max(inner, nesting(item));
            }
            return inner + 1;
        }
        return 0;
    }
}
