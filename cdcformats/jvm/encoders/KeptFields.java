package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.DecodeException;
import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.decoders.Json;
import cdcformats.jvm.decoders.Python;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code _kit/kept_fields.py} for the JVM encoders: the fields a format keeps as attributes ({@code <prefix><name>}
 * holding the field's JSON text) written back verbatim ({@link #write}), and which of an event's attributes a
 * message gives back, and as what ({@link #asDecoded}).
 */
public final class KeptFields {
    private KeptFields() {
    }

    /** An attribute written back: the group it is written in (groups read back in their order), and its value. */
    public record Kept(int group, Object value) {
    }

    /** A format's rule for its own attributes: how one is written back, or null where it is not. */
    public interface GroupOf {
        Kept of(String name, Object value);
    }

    /**
     * {@code kept_fields.as_decoded}: the attributes written back, the first of each name (as a JSON object holds a
     * field once), as what, in the order of their groups.
     */
    public static List<Events.Entry> asDecoded(List<Events.Entry> attributes, GroupOf groupOf) {
        List<Map.Entry<Integer, Events.Entry>> kept = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (Events.Entry attribute : attributes) {
            Kept written = seen.contains(attribute.name()) ? null : groupOf.of(attribute.name(), attribute.value());
            if (written != null) {
                seen.add(attribute.name());
                kept.add(Map.entry(written.group(), new Events.Entry(attribute.name(), written.value())));
            }
        }
        kept.sort(Comparator.comparing(Map.Entry::getKey)); // stable: in their order within a group
        List<Events.Entry> inOrder = new ArrayList<>(kept.size());
        for (Map.Entry<Integer, Events.Entry> entry : kept) {
            inOrder.add(entry.getValue());
        }
        return inOrder;
    }

    /**
     * {@code kept_fields.is_kept_field}: whether an attribute is a kept field that a message gives back as it is: one
     * of {@code prefix}, not naming a {@code reserved} field, holding JSON text as msgspec writes it.
     */
    public static boolean isKeptField(String name, Object value, String prefix, Collection<String> reserved) {
        return name.startsWith(prefix) && !reserved.contains(name.substring(prefix.length()))
            && isCanonical(value, false);
    }

    /**
     * {@code kept_fields.write}: the fields that the {@code prefix} attributes keep, to write back verbatim (the last
     * value of a name); one that would read back as a field of the format itself ({@code reserved}) is refused, and
     * so is a value that is no JSON text.
     */
    public static Map<String, Object> write(List<Events.Entry> attributes, String prefix, Collection<String> reserved)
            throws EncodeException {
        Map<String, Object> fields = new LinkedHashMap<>();
        for (int index = 0; index < attributes.size(); index++) {
            String name = attributes.get(index).name();
            if (!name.startsWith(prefix)) {
                continue;
            }
            String field = name.substring(prefix.length());
            if (reserved.contains(field)) {
                throw new EncodeException(name + " would read back as the field " + Python.repr(field),
                    "attributes[" + index + "]");
            }
            fields.put(field, raw(attributes.get(index).value(), "attributes[" + index + "]"));
        }
        return fields;
    }

    /**
     * The value of the JSON text an attribute holds ({@link Json#NULL} for {@code null}), or null where it holds no
     * text or no JSON.
     */
    public static Object parsed(Object text) {
        if (!(text instanceof String)) {
            return null;
        }
        try {
            return Json.parse(((String) text).getBytes(StandardCharsets.UTF_8));
        } catch (DecodeException notJson) {
            return null;
        }
    }

    /** {@code json_message.raw}: JSON text kept from a decoded message, checked before it is written back. */
    static JsonOut.Raw raw(Object text, String field) throws EncodeException {
        if (parsed(text) == null) {
            throw new EncodeException("expected JSON text to write back verbatim, got " + Python.repr(text), field);
        }
        return new JsonOut.Raw((String) text);
    }

    /**
     * {@code json_message.is_canonical}: whether {@code text} is JSON text exactly as msgspec writes it, so that it
     * reads back unchanged; with {@code nestedOnly}, an object or an array.
     */
    public static boolean isCanonical(Object text, boolean nestedOnly) {
        Object parsed = parsed(text);
        return parsed != null && JsonOut.msgspec(parsed).equals(text)
            && (!nestedOnly || parsed instanceof Map || parsed instanceof List);
    }

    /**
     * {@code debezium_envelope.canonical_json}: a kept field's JSON text as decoding gives it back, in its canonical
     * form (msgspec's); any other value the JSON value it is as a scalar (text as a JSON string).
     */
    public static String canonicalJson(Object value) {
        Object parsed = parsed(value);
        return JsonOut.msgspec(parsed != null ? parsed : Values.jsonForm(value));
    }
}
