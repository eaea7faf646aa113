package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.ConnectSchema;
import cdcformats.jvm.decoders.DecodeException;
import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.decoders.Json;
import cdcformats.jvm.decoders.TypedText;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code _kit/connect_schema.py}'s writing half for the JVM encoders (the reading half, the schemas generated for
 * values and values as JsonConverter writes them are {@link ConnectSchema}'s): a cell as its Connect field schema
 * gives it back ({@link #asReadBack}) and the schema of the field that holds it ({@link #fieldSchema}).
 */
public final class ConnectSchemas {
    private ConnectSchemas() {
    }

    /** {@code connect_schema.TYPED_FEATURES}: what a format with a schema wrapper carries only when it writes it. */
    public static final Set<String> TYPED_FEATURES = Set.of("cell.type", "value.bytes", "value.decimal",
        "value.float_nonfinite", "value.nested_non_json");

    /**
     * {@code schema_only_features} (whether a value has one): bytes, a decimal, NaN or an infinity, a nested value
     * holding one of them: what only a column schema makes readable from JSON.
     */
    public static boolean schemaOnly(Object value) {
        return value instanceof byte[] || value instanceof TypedText.DecimalText || Values.isNonFinite(value)
            || Values.isNested(value) && !Values.isJson(value);
    }

    /**
     * {@code kept_schema}: the field schema a cell's type keeps: a type that is a JSON object with a text
     * {@code type} and no {@code field} is the field's whole Connect schema; null for any other type.
     */
    public static Map<?, ?> keptSchema(String typeName) {
        if (typeName == null || !typeName.startsWith("{")) {
            return null;
        }
        Object schema;
        try {
            schema = Json.parse(typeName.getBytes(StandardCharsets.UTF_8));
        } catch (DecodeException notJson) {
            return null;
        }
        if (!(schema instanceof Map) || !(((Map<?, ?>) schema).get("type") instanceof String)
                || ((Map<?, ?>) schema).containsKey("field")) {
            return null;
        }
        return (Map<?, ?>) schema;
    }

    /**
     * A struct schema an attribute keeps as JSON text (an envelope's, a record's key or value): the schema, when the
     * text is JSON of an object whose {@code type} is struct and whose {@code fields} are a list; else null.
     */
    public static Map<Object, Object> structText(Object text) {
        Object schema;
        try {
            schema = text instanceof String ? Json.parse(((String) text).getBytes(StandardCharsets.UTF_8)) : null;
        } catch (DecodeException notJson) {
            return null;
        }
        if (!(schema instanceof Map) || !"struct".equals(((Map<?, ?>) schema).get("type"))
                || !(((Map<?, ?>) schema).get("fields") instanceof List)) {
            return null;
        }
        return new LinkedHashMap<>((Map<?, ?>) schema);
    }

    /**
     * {@code field_schema}: the schema of the field that holds {@code cell} in a struct, as JsonConverter writes it:
     * the one its type keeps, else the one generated from its value and type name.
     */
    public static Map<Object, Object> fieldSchema(Events.Cell cell) {
        Map<?, ?> kept = keptSchema(cell.type());
        if (kept != null) {
            Map<Object, Object> schema = new LinkedHashMap<>(kept);
            schema.put("field", cell.name());
            return schema;
        }
        return generatedSchema(cell.name(), cell.value(), cell.type());
    }

    /**
     * {@code generated_schema}: the field schema generated from a value and its type name; a nested value that no
     * Connect schema holds is written as its JSON text, and has that text's schema.
     */
    private static Map<Object, Object> generatedSchema(String name, Object value, String typeName) {
        if (Values.isNested(value) && ConnectSchema.nestedSchema(value) == null) {
            value = Values.render(value);
        }
        Map<Object, Object> schema = ConnectSchema.generatedSchema(Json.isNull(value) ? null : value, typeName);
        schema.put("field", name);
        return schema;
    }

    /**
     * {@code image_struct_schema}: the optional struct schema of an envelope's {@code before} or {@code after}, from
     * its cells, or from the other image's when it is absent (Debezium has one row schema for both).
     */
    public static Map<Object, Object> imageStructSchema(Events.Event event, String imageName, String name) {
        boolean before = imageName.equals("before");
        List<Events.Cell> image = before ? event.before() : event.after();
        List<Events.Cell> cells = image != null ? image : before ? event.after() : event.before();
        List<Object> fields = new ArrayList<>();
        if (cells != null) {
            for (Events.Cell cell : cells) {
                fields.add(fieldSchema(cell));
            }
        }
        Map<Object, Object> schema = ConnectSchema.structSchema(fields, true, name);
        schema.put("field", imageName);
        return schema;
    }

    /**
     * {@code as_read_back}: a cell, as the base rules write it, as its Connect schema gives it back: a decimal no
     * Connect Decimal holds as its text; a value that the schema its type keeps does not read back exactly, its type
     * taken away (then its schema is generated from its value); a type that reads back otherwise as it reads back; a
     * nested value no Connect schema holds as its JSON text.
     */
    public static Events.Cell asReadBack(Events.Cell cell) {
        if (!cell.kind().equals(Events.PUT)) {
            return cell;
        }
        Object value = cell.value();
        if (value instanceof TypedText.DecimalText
                && !ConnectSchema.carriesDecimal(((TypedText.DecimalText) value).text)) {
            return new Events.Cell(cell.name(), Values.render(value), cell.type(), cell.version(), cell.kind());
        }
        Map<?, ?> schema = keptSchema(cell.type());
        if (schema != null) {
            ConnectSchema.Read read;
            try {
                read = ConnectSchema.readValue(ConnectSchema.jsonValue(value), schema, "");
            } catch (DecodeException | IllegalArgumentException refused) {
                // IllegalArgumentException: a NaN in a nested value, which no schema reads back (where Python's
                // json_value fails, which this does not follow: its value is written as its JSON text below)
                read = null;
            }
            if (read != null && read.typeName != null && Values.same(read.value, value)) {
                return read.typeName.equals(cell.type()) ? cell
                    : new Events.Cell(cell.name(), value, read.typeName, cell.version(), cell.kind());
            }
            cell = new Events.Cell(cell.name(), value, null, cell.version(), cell.kind());
        }
        Object written = nestedAsReadBack(value);
        return written == value ? cell : new Events.Cell(cell.name(), written, cell.type(), cell.version(), cell.kind());
    }

    /**
     * {@code nested_as_read_back}: a value as Connect gives it back: a nested value that no Connect schema holds (an
     * array whose items differ, a decimal Connect cannot hold) as its JSON text.
     */
    public static Object nestedAsReadBack(Object value) {
        return Values.isNested(value) && ConnectSchema.nestedSchema(value) == null ? Values.render(value) : value;
    }
}
