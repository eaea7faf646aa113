package cdcformats.jvm.decoders;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The writer schemas of Confluent-framed messages, by the schema id after the magic byte, as
 * {@code kafka/serdes.py}'s {@code ChangeEventDeserializer} fetches them: from a Confluent-compatible registry over
 * HTTP, each id asked once per JVM (an executor) and kept, since a registry never changes what an id names; or given
 * whole by the driver, where the registry is a file that only Python reads (the embedded registry).
 *
 * <p>Settings (a decoder's, from Python's {@code jvm_decoder()}): {@code schema_registry} is a registry's URL, or
 * {@code writer_schemas} is a JSON object of id to {@code {"type": ..., "text": ...}}; {@code registry_address} is how
 * errors name the registry, as Python's {@code schema_registry.client.address} does.
 */
public abstract class WriterSchemas {
    /** A registered schema: its type (AVRO, PROTOBUF, JSON) and its text. */
    public record Schema(String type, String text) {
    }

    private final String address;

    private WriterSchemas(String address) {
        this.address = address;
    }

    /** The schema registered under {@code id}; a {@link DecodeException} on field {@code schema id} where there is
     * none, as Python's: {@code schema id <id> cannot be fetched from <registry>: <the registry's error>}. */
    public final Schema byId(int id) throws DecodeException {
        try {
            return fetched(id);
        } catch (RegistryException error) {
            throw new DecodeException("schema id " + Integer.toUnsignedString(id) + " cannot be fetched from "
                + address + ": " + error.getMessage(), "schema id");
        }
    }

    abstract Schema fetched(int id) throws RegistryException;

    /** The writer schemas that {@code settings} name, or null where they name none. */
    public static WriterSchemas of(Map<String, String> settings) {
        String address = settings.getOrDefault("registry_address", "the schema registry");
        String url = settings.get("schema_registry");
        if (url != null) {
            return new OverHttp(url, address);
        }
        String given = settings.get("writer_schemas");
        return given == null ? null : new Given(given, address);
    }

    /** A registry's refusal or silence, in the words Python's client uses for it. */
    static final class RegistryException extends Exception {
        private static final long serialVersionUID = 1L;

        RegistryException(String message) {
            super(message, null, false, false);
        }
    }

    /** The schemas the driver read from its registry when the query was planned. */
    private static final class Given extends WriterSchemas {
        private final Map<Integer, Schema> schemas = new ConcurrentHashMap<>();

        Given(String json, String address) {
            super(address);
            Object parsed;
            try {
                parsed = Json.parse(json.getBytes(StandardCharsets.UTF_8));
            } catch (DecodeException error) {
                throw new IllegalArgumentException("writer_schemas is not JSON: " + error.reason, error);
            }
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) parsed).entrySet()) {
                Map<?, ?> schema = (Map<?, ?>) entry.getValue();
                schemas.put(Integer.parseUnsignedInt((String) entry.getKey()),
                    new Schema((String) schema.get("type"), (String) schema.get("text")));
            }
        }

        @Override
        Schema fetched(int id) throws RegistryException {
            Schema schema = schemas.get(id);
            if (schema == null) { // the embedded registry's own words (schema_registry/store.py)
                throw new RegistryException("Schema " + Integer.toUnsignedString(id) + " not found (HTTP status code "
                    + "404, SR code 40403)");
            }
            return schema;
        }
    }

    /** A Confluent-compatible registry: {@code GET /schemas/ids/<id>} on the first of its URLs that answers. */
    private static final class OverHttp extends WriterSchemas {
        // Per JVM, so that each executor asks once per registry and id, however many tasks and queries read it.
        private static final Map<String, Map<Integer, Schema>> FETCHED = new ConcurrentHashMap<>();
        private static final Duration TIMEOUT = Duration.ofSeconds(10); // confluent-kafka's default timeout
        private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();

        private final String urls;

        OverHttp(String urls, String address) {
            super(address);
            this.urls = urls;
        }

        @Override
        Schema fetched(int id) throws RegistryException {
            Map<Integer, Schema> known = FETCHED.computeIfAbsent(urls, ignored -> new ConcurrentHashMap<>());
            Schema schema = known.get(id);
            if (schema == null) {
                schema = fetch(id);
                known.put(id, schema);
            }
            return schema;
        }

        private Schema fetch(int id) throws RegistryException {
            RegistryException last = null;
            for (String url : urls.split(",")) { // confluent-kafka takes a comma-separated list, tried in turn
                try {
                    return fetch(URI.create(url.strip()), id);
                } catch (IOException | IllegalArgumentException error) {
                    last = new RegistryException(error.getClass().getSimpleName() + ": " + error.getMessage());
                } catch (InterruptedException error) {
                    Thread.currentThread().interrupt();
                    throw new RegistryException("interrupted");
                }
            }
            throw last;
        }

        private static Schema fetch(URI registry, int id) throws IOException, InterruptedException,
                RegistryException {
            String path = registry.getRawPath().replaceAll("/+$", "") + "/schemas/ids/" + Integer.toUnsignedString(id);
            HttpRequest.Builder request = HttpRequest.newBuilder(
                    URI.create(registry.getScheme() + "://" + registry.getRawAuthority().replaceAll("^.*@", "") + path))
                .timeout(TIMEOUT).header("Accept", "application/vnd.schemaregistry.v1+json");
            if (registry.getRawUserInfo() != null) { // a URL's user:password, as confluent-kafka reads it
                request.header("Authorization", "Basic " + Base64.getEncoder().encodeToString(
                    java.net.URLDecoder.decode(registry.getRawUserInfo(), StandardCharsets.UTF_8)
                        .getBytes(StandardCharsets.UTF_8)));
            }
            HttpResponse<byte[]> response = CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
            Object body;
            try {
                body = Json.parse(response.body());
            } catch (DecodeException error) {
                body = null;
            }
            Map<?, ?> fields = body instanceof Map ? (Map<?, ?>) body : Map.of();
            if (response.statusCode() != 200 || !(fields.get("schema") instanceof String)) {
                // confluent-kafka's SchemaRegistryError: the registry's message, status and error code
                Object message = fields.get("message");
                Object code = fields.get("error_code");
                throw new RegistryException((message instanceof String ? (String) message : "Unknown Schema Registry "
                    + "Error: " + new String(response.body(), StandardCharsets.UTF_8)) + " (HTTP status code "
                    + response.statusCode() + ", SR code " + (code instanceof Long ? code : -1) + ")");
            }
            Object type = fields.get("schemaType");
            return new Schema(type instanceof String ? (String) type : "AVRO", (String) fields.get("schema"));
        }
    }
}
