import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.json.JsonConverter;

/**
 * Reads Kafka records with Kafka Connect's own JsonConverter, as a sink connector's worker would, and prints the
 * Connect data it gets, so that a test can compare what two producers' records become.
 *
 * <p>Each stdin line is {@code {"schemas": true|false, "topic": ..., "key": text|null, "value": text|null}}, the
 * key and value as they were on the wire. Each stdout line is {@code {"key": data, "value": data}}, where data is
 * null for a null record part, {@code {"error": message}} when the converter refuses it, and otherwise
 * {@code {"schema": ..., "value": ...}}: the schema as its type, optional flag, name, version, parameters and fields
 * (or key and value schemas), and the value tagged with its Java class where JSON would blur it (decimals, bytes,
 * dates, floats).
 */
public final class ReadConnectJson {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    public static void main(String[] args) throws Exception {
        JsonConverter withSchemas = converter(true);
        JsonConverter plain = converter(false);
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String text = in.readLine(); text != null; text = in.readLine()) {
            JsonNode record = JSON.readTree(text);
            JsonConverter converter = record.get("schemas").asBoolean() ? withSchemas : plain;
            String topic = record.path("topic").asText("topic");
            ObjectNode line = NODES.objectNode();
            line.set("key", read(converter, topic, record.get("key")));
            line.set("value", read(converter, topic, record.get("value")));
            out.println(JSON.writeValueAsString(line));
        }
    }

    private static JsonConverter converter(boolean schemas) {
        JsonConverter converter = new JsonConverter();
        converter.configure(Map.of("schemas.enable", schemas), false);
        return converter;
    }

    private static JsonNode read(JsonConverter converter, String topic, JsonNode part) {
        if (part == null || part.isNull()) {
            return NODES.nullNode();
        }
        ObjectNode data = NODES.objectNode();
        try {
            SchemaAndValue read = converter.toConnectData(topic, part.asText().getBytes(StandardCharsets.UTF_8));
            data.set("schema", schema(read.schema()));
            data.set("value", value(read.value()));
        } catch (RuntimeException refused) {
            data.put("error", refused.getClass().getSimpleName() + ": " + refused.getMessage());
        }
        return data;
    }

    private static JsonNode schema(Schema schema) {
        if (schema == null) {
            return NODES.nullNode();
        }
        ObjectNode described = NODES.objectNode();
        described.put("type", schema.type().getName());
        described.put("optional", schema.isOptional());
        described.put("name", schema.name());
        described.put("version", schema.version());
        described.set("parameters", JSON.valueToTree(schema.parameters()));
        described.set("default", value(schema.defaultValue()));
        switch (schema.type()) {
            case STRUCT -> {
                ArrayNode fields = described.putArray("fields");
                for (Field field : schema.fields()) {
                    ObjectNode named = NODES.objectNode();
                    named.put("field", field.name());
                    named.set("schema", schema(field.schema()));
                    fields.add(named);
                }
            }
            case ARRAY -> described.set("items", schema(schema.valueSchema()));
            case MAP -> {
                described.set("keys", schema(schema.keySchema()));
                described.set("values", schema(schema.valueSchema()));
            }
            default -> { }
        }
        return described;
    }

    private static JsonNode value(Object value) {
        if (value == null) {
            return NODES.nullNode();
        }
        if (value instanceof Struct struct) {
            ObjectNode fields = NODES.objectNode();
            for (Field field : struct.schema().fields()) {
                fields.set(field.name(), value(struct.get(field)));
            }
            return fields;
        }
        if (value instanceof Map<?, ?> map) {
            ObjectNode entries = NODES.objectNode();
            map.forEach((key, entry) -> entries.set(String.valueOf(key), value(entry)));
            return entries;
        }
        if (value instanceof List<?> list) {
            ArrayNode items = NODES.arrayNode();
            list.forEach(item -> items.add(value(item)));
            return items;
        }
        if (value instanceof byte[] bytes) {
            return tagged("bytes", Base64.getEncoder().encodeToString(bytes));
        }
        if (value instanceof ByteBuffer buffer) {
            byte[] bytes = new byte[buffer.remaining()];
            buffer.duplicate().get(bytes);
            return tagged("bytes", Base64.getEncoder().encodeToString(bytes));
        }
        if (value instanceof BigDecimal decimal) {
            return tagged("decimal", decimal.toPlainString());
        }
        if (value instanceof Date date) {
            return tagged("date", Long.toString(date.getTime()));
        }
        if (value instanceof Float || value instanceof Double) {
            return tagged(value.getClass().getSimpleName().toLowerCase(), value.toString());
        }
        return JSON.valueToTree(value);
    }

    private static JsonNode tagged(String kind, String text) {
        ObjectNode tagged = NODES.objectNode();
        tagged.put(kind, text);
        return tagged;
    }
}
