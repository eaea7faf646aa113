import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import cdcformats.jvm.decoders.DecodeException;
import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.decoders.Json;
import cdcformats.jvm.decoders.TypedText;
import cdcformats.jvm.encoders.EncodeException;
import cdcformats.jvm.encoders.EventEncoder;
import cdcformats.jvm.encoders.MessageEncoder;
import cdcformats.jvm.encoders.Strict;
import cdcformats.jvm.encoders.RecordEncoder;
import cdcformats.jvm.encoders.TaggedValues;

/**
 * The JVM encoders against their golden files ({@code tests/fixtures/jvm-golden-encode/<format>.jsonl}, described in
 * {@code tests/jvm_golden_encode.py}), with the decoders and encoders alone on the class path: no Spark, no test
 * framework.
 *
 * <p>{@code java EncodeGoldenCheck <file>...} reads each line's event back from its golden JSON form, encodes it with
 * the line's encoder and compares the message's text with the line's {@code message} (a record's key and value with
 * its {@code key} and {@code value}), or the one-line error with its {@code error}. Each difference is printed as {@code <file>:<line> (<where>): differs at character <n>: expected
 * ..., got ...}; the exit code is 1 when there is one, 0 otherwise. The file {@code -} is the standard input, read
 * as {@link #serve} says.
 */
public final class EncodeGoldenCheck {
    private EncodeGoldenCheck() {
    }

    public static void main(String[] files) throws IOException, DecodeException {
        Map<String, Object> encoders = new HashMap<>();
        int checked = 0;
        int differences = 0;
        for (String file : files) {
            if (file.equals("-")) {
                serve(encoders);
                continue;
            }
            List<String> lines = Files.readAllLines(Path.of(file), StandardCharsets.UTF_8);
            for (int number = 1; number <= lines.size(); number++) {
                String difference = difference(encoders, format(file), lines.get(number - 1));
                checked++;
                if (difference != null) {
                    differences++;
                    System.out.println(file + ":" + number + " " + difference);
                }
            }
        }
        System.out.println(checked + " events checked, " + differences + " differences");
        System.exit(differences == 0 ? 0 : 1);
    }

    /**
     * {@code -}: lines of the golden form read from the standard input, of the format named on the first line, each
     * answered as soon as it is read with one line, {@code ok} or the difference (for a property test that draws
     * events, without a JVM started for each).
     */
    private static void serve(Map<String, Object> encoders) throws IOException, DecodeException {
        BufferedReader input = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream output = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        String format = input.readLine();
        for (String line = input.readLine(); line != null; line = input.readLine()) {
            String difference;
            try {
                difference = difference(encoders, format, line);
            } catch (RuntimeException error) { // answered, so that the next line is read
                difference = "failed: " + error;
            }
            output.println(difference == null ? "ok" : difference);
        }
    }

    private static String format(String file) {
        return Path.of(file).getFileName().toString().replaceFirst("\\.jsonl$", "");
    }

    /**
     * How the Java encoder's message (a record's key and value, as {@code {"key":...,"value":...}}) or error differs
     * from one golden line's, or null where it does not.
     */
    private static String difference(Map<String, Object> encoders, String format, String text)
            throws DecodeException {
        Map<?, ?> line = (Map<?, ?>) Json.parse(text.getBytes(StandardCharsets.UTF_8));
        boolean binary = line.containsKey("message_base64");
        boolean record = line.containsKey("value");
        String expected = (String) (line.containsKey("message") ? line.get("message")
            : binary ? line.get("message_base64") : record ? record(line.get("key"), line.get("value"))
            : line.get("error"));
        EventEncoder encoder = (EventEncoder) encoder(encoders, (Map<?, ?>) line.get("encoder"));
        Events.Event event = event((Map<?, ?>) line.get("event"));
        String actual;
        try {
            if (encoder instanceof RecordEncoder) {
                RecordEncoder.KafkaRecord written = ((RecordEncoder) encoder).encode(event);
                actual = record(text(written.key()), text(written.value()));
            } else {
                byte[] message = ((MessageEncoder) encoder).encode(event);
                actual = binary ? Base64.getEncoder().encodeToString(message) : text(message);
            }
        } catch (EncodeException error) {
            actual = error.render(format);
        }
        if (!actual.equals(expected)) {
            return "(" + line.get("where") + "): differs at character " + firstDifference(expected, actual)
                + ": expected " + expected + ", got " + actual;
        }
        String expectedStrict = Json.isNull(line.get("strict")) ? "null" : (String) line.get("strict");
        String actualStrict;
        try {
            EncodeException refusal = Strict.refusal(encoder, format, event);
            actualStrict = refusal == null ? "null" : refusal.render(format);
        } catch (EncodeException error) {
            actualStrict = error.render(format);
        }
        return actualStrict.equals(expectedStrict) ? null : "(" + line.get("where") + "): strict differs at character "
            + firstDifference(expectedStrict, actualStrict) + ": expected " + expectedStrict + ", got " + actualStrict;
    }

    private static String text(byte[] data) {
        return data == null ? null : new String(data, StandardCharsets.UTF_8);
    }

    /** A record's key and value (text or null) as one line's JSON, to compare and show. */
    private static String record(Object key, Object value) {
        Map<String, Object> record = new LinkedHashMap<>();
        record.put("key", Json.isNull(key) ? null : key);
        record.put("value", Json.isNull(value) ? null : value);
        return Json.write(record);
    }

    private static int firstDifference(String expected, String actual) {
        int at = 0;
        while (at < expected.length() && at < actual.length() && expected.charAt(at) == actual.charAt(at)) {
            at++;
        }
        return at;
    }

    /** The line's encoder (a MessageEncoder or a RecordEncoder), built once for each class and settings. */
    private static Object encoder(Map<String, Object> encoders, Map<?, ?> encoder) {
        return encoders.computeIfAbsent(Json.write(encoder), key -> {
            Map<String, String> settings = new HashMap<>();
            ((Map<?, ?>) encoder.get("settings")).forEach((name, value) -> settings.put((String) name,
                (String) value));
            try {
                return Class.forName((String) encoder.get("class")).getConstructor(Map.class).newInstance(settings);
            } catch (InvocationTargetException error) {
                throw new IllegalStateException("bad settings " + settings, error.getCause());
            } catch (ReflectiveOperationException error) {
                throw new IllegalStateException("no encoder " + encoder.get("class"), error);
            }
        });
    }

    // -- an event from its golden JSON form (tests/jvm_golden.py) --------------------------------------------------

    private static Events.Event event(Map<?, ?> json) {
        Map<?, ?> table = (Map<?, ?>) nullable(json.get("table"));
        Map<?, ?> source = (Map<?, ?>) json.get("source");
        return new Events.Event((String) json.get("op"),
            table == null ? null : new Events.Table((String) nullable(table.get("catalog")),
                (String) nullable(table.get("schema")), (String) table.get("name")),
            cells(json.get("key")), cells(json.get("before")), cells(json.get("after")),
            new Events.Source((String) nullable(source.get("system")), entries(source.get("position")),
                (Long) nullable(source.get("commit_time_us")), (Long) nullable(source.get("capture_time_us"))),
            (Boolean) json.get("key_only"), entries(json.get("attributes")));
    }

    private static Object nullable(Object value) {
        return Json.isNull(value) ? null : value;
    }

    private static List<Events.Cell> cells(Object json) {
        if (Json.isNull(json)) {
            return null;
        }
        List<Events.Cell> cells = new ArrayList<>();
        for (Object item : (List<?>) json) {
            Map<?, ?> cell = (Map<?, ?>) item;
            cells.add(new Events.Cell((String) cell.get("name"), value(cell.get("value")),
                (String) nullable(cell.get("type")), (Long) nullable(cell.get("version")), (String) cell.get("kind")));
        }
        return cells;
    }

    private static List<Events.Entry> entries(Object json) {
        List<Events.Entry> entries = new ArrayList<>();
        for (Object item : (List<?>) json) {
            Map<?, ?> entry = (Map<?, ?>) item;
            entries.add(new Events.Entry((String) entry.get("name"), value(entry.get("value"))));
        }
        return entries;
    }

    private static Object value(Object json) {
        if (Json.isNull(json)) {
            return null;
        }
        Map.Entry<?, ?> member = ((Map<?, ?>) json).entrySet().iterator().next();
        Object value = member.getValue();
        switch ((String) member.getKey()) {
            case "double":
                return value instanceof String ? Double.valueOf((String) value) : ((Number) value).doubleValue();
            case "bytes":
                return Base64.getDecoder().decode((String) value);
            case "decimal":
                return new TypedText.DecimalText((String) value);
            case "nested":
                try {
                    return TaggedValues.untagged(value, "value");
                } catch (EncodeException error) {
                    throw new IllegalStateException("a golden event's nested value: " + error.reason, error);
                }
            default:
                return value; // boolean, long, string
        }
    }
}
