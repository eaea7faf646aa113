package cdcformats.jvm.encoders;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import cdcformats.jvm.decoders.DecodeException;
import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.decoders.Json;
import cdcformats.jvm.decoders.Messages;
import cdcformats.jvm.decoders.PythonDecimal;
import cdcformats.jvm.decoders.TypedText;

/**
 * A nested value as its tagged JSON text holds it ({@code arrow.value_row}'s {@code nested}), read back into the
 * event's values: arrays and objects as they are, {@code {"$binary": base64}}, {@code {"$decimal": text}} and
 * {@code {"$double": "NaN"}} as the values they tag, and a {@code {"$struct": ...}} as the Struct it wraps.
 */
public final class TaggedValues {
    private TaggedValues() {
    }

    /**
     * The nested value that tagged JSON text holds, as {@code arrow.value_from_row} reads a {@code nested} member,
     * {@code where} naming it in errors: refused, with Python's reason, where the text is no JSON or holds no array or
     * object, or where {@link #untagged} refuses it.
     */
    public static Object nested(byte[] text, String where) throws EncodeException {
        Object parsed;
        try {
            parsed = Json.parse(text);
        } catch (DecodeException error) {
            throw new EncodeException("nested is not JSON: " + error.reason.replaceFirst("^not valid JSON: ", ""),
                where);
        }
        Object value = untagged(parsed, where);
        if (!(value instanceof List || value instanceof Map)) {
            throw new EncodeException("nested holds an array or an object, not "
                + PythonStrings.repr(new String(text, StandardCharsets.UTF_8)), where);
        }
        return value;
    }

    /**
     * The value of parsed nested text ({@link Json#parse}), {@code where} naming it in errors: the inverse of
     * {@link Events#tagged}, as {@code arrow._untagged} reads it, refusing what it refuses with its reason.
     */
    public static Object untagged(Object member, String where) throws EncodeException {
        return untagged(member, where, 0);
    }

    private static Object untagged(Object member, String where, int depth) throws EncodeException {
        if ((member instanceof List || member instanceof Map) && depth == Messages.MAX_NESTING) {
            throw new EncodeException("nested deeper than " + Messages.MAX_NESTING + " levels", where);
        }
        if (member instanceof List) {
            List<Object> items = new ArrayList<>();
            int index = 0;
            for (Object item : (List<?>) member) {
                items.add(untagged(item, where + "[" + index++ + "]", depth + 1));
            }
            return items;
        }
        if (!(member instanceof Map)) {
            return Json.isNull(member) ? null : member;
        }
        Map<?, ?> fields = (Map<?, ?>) member;
        if (fields.size() == 1) {
            Map.Entry<?, ?> only = fields.entrySet().iterator().next();
            String tag = (String) only.getKey();
            if (tag.equals("$struct") && only.getValue() instanceof Map) {
                fields = (Map<?, ?>) only.getValue();
            } else if (Events.TAGS.contains(tag) && only.getValue() instanceof String) {
                return tagValue(tag, (String) only.getValue(), where);
            }
        }
        Map<String, Object> struct = new LinkedHashMap<>();
        for (Map.Entry<?, ?> field : fields.entrySet()) {
            String name = (String) field.getKey();
            struct.put(name, untagged(field.getValue(), where + "." + name, depth + 1));
        }
        return struct;
    }

    private static Object tagValue(String tag, String text, String where) throws EncodeException {
        switch (tag) {
            case "$binary":
                if (text.matches("([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")) {
                    return Base64.getDecoder().decode(text);
                }
                break;
            case "$decimal": {
                String decimal = PythonDecimal.str(text);
                if (decimal != null) {
                    return new TypedText.DecimalText(decimal);
                }
                break;
            }
            default:
                switch (text) {
                    case "NaN": return Double.NaN;
                    case "Infinity": return Double.POSITIVE_INFINITY;
                    case "-Infinity": return Double.NEGATIVE_INFINITY;
                    default: break;
                }
        }
        throw new EncodeException(tag + " does not hold " + PythonStrings.repr(text), where);
    }
}
