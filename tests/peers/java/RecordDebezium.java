import java.io.FileReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.debezium.embedded.Connect;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.RecordChangeEvent;
import io.debezium.engine.format.ChangeEventFormat;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * Runs Debezium's embedded engine with the connector properties in the file given as the one argument, and prints
 * each record it emits as one JSON line on stdout: its topic, and its key and value as Kafka Connect's own
 * JsonConverter writes them, with schemas ({@code key}, {@code value}) and without ({@code key_plain},
 * {@code value_plain}). A record without a value (a tombstone) has null values.
 *
 * <p>The engine runs until stdin is closed, so the script that drives the database decides when everything it
 * changed has arrived. Failures of the engine are printed as {@code {"error": ...}} and end the process with 1.
 */
public final class RecordDebezium {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        Properties connector = new Properties();
        try (FileReader reader = new FileReader(args[0], StandardCharsets.UTF_8)) {
            connector.load(reader);
        }
        JsonConverter withSchemas = converter(true);
        JsonConverter plain = converter(false);
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        int[] exit = {0};

        DebeziumEngine<RecordChangeEvent<SourceRecord>> engine = DebeziumEngine.create(ChangeEventFormat.of(Connect.class))
            .using(connector)
            .notifying((List<RecordChangeEvent<SourceRecord>> batch,
                        DebeziumEngine.RecordCommitter<RecordChangeEvent<SourceRecord>> committer) -> {
                for (RecordChangeEvent<SourceRecord> event : batch) {
                    out.println(line(event.record(), withSchemas, plain));
                    committer.markProcessed(event);
                }
                committer.markBatchFinished();
            })
            .using((success, message, error) -> {
                if (!success) {
                    ObjectNode failure = JSON.createObjectNode();
                    failure.put("error", message + (error == null ? "" : ": " + error));
                    out.println(failure);
                    exit[0] = 1;
                    System.exit(1);
                }
            })
            .build();
        ExecutorService executor = Executors.newSingleThreadExecutor();
        executor.execute(engine);
        while (System.in.read() != -1) {
            // Lines the driver sends are only a sign of life; the end of stdin is what stops the engine.
        }
        engine.close();
        executor.shutdown();
        executor.awaitTermination(60, TimeUnit.SECONDS);
        System.exit(exit[0]);
    }

    private static JsonConverter converter(boolean schemas) {
        JsonConverter converter = new JsonConverter();
        converter.configure(Map.of("schemas.enable", schemas), false);
        return converter;
    }

    private static String line(SourceRecord record, JsonConverter withSchemas, JsonConverter plain) {
        ObjectNode line = JSON.createObjectNode();
        line.put("topic", record.topic());
        line.put("key", text(withSchemas.fromConnectData(record.topic(), record.keySchema(), record.key())));
        line.put("value", text(withSchemas.fromConnectData(record.topic(), record.valueSchema(), record.value())));
        line.put("key_plain", text(plain.fromConnectData(record.topic(), record.keySchema(), record.key())));
        line.put("value_plain", text(plain.fromConnectData(record.topic(), record.valueSchema(), record.value())));
        return line.toString();
    }

    private static String text(byte[] bytes) {
        return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
    }
}
