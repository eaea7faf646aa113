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
import cdcformats.jvm.decoders.MessageDecoder;
import cdcformats.jvm.decoders.RecordDecoder;
import cdcformats.jvm.decoders.TypedText;

/**
 * The JVM decoders against their golden files ({@code tests/fixtures/jvm-golden/<format>.jsonl}, described in
 * {@code tests/jvm_golden.py}), with the decoders alone on the class path: no Spark, no test framework.
 *
 * <p>{@code java GoldenCheck <file>...} decodes each line's message with the line's decoder and compares the event,
 * in the golden JSON form, with the line's {@code event}, or the one-line error with its {@code error}. Each
 * difference is printed as {@code <file>:<line> (<where>): differs at character <n>: expected ..., got ...}; the
 * exit code is 1 when there is one, 0 otherwise. {@code -} instead of a file reads lines of records from the standard
 * input ({@link #serveRecords}).
 */
public final class GoldenCheck {
    private GoldenCheck() {
    }

    public static void main(String[] files) throws IOException, DecodeException {
        Map<String, MessageDecoder> decoders = new HashMap<>();
        Map<String, RecordDecoder> recordDecoders = new HashMap<>();
        int checked = 0;
        int differences = 0;
        for (String file : files) {
            if (file.equals("-")) {
                serveRecords(recordDecoders);
                continue;
            }
            String format = Path.of(file).getFileName().toString().replaceFirst("\\.jsonl$", "");
            List<String> lines = Files.readAllLines(Path.of(file), StandardCharsets.UTF_8);
            for (int number = 1; number <= lines.size(); number++) {
                Map<?, ?> line = (Map<?, ?>) Json.parse(lines.get(number - 1).getBytes(StandardCharsets.UTF_8));
                String expected = line.containsKey("event") ? Json.write(line.get("event"))
                    : (String) line.get("error");
                String actual;
                if (line.containsKey("value_base64")) {
                    actual = recordDecoded(recordDecoders, format, line);
                } else {
                    byte[] message = line.containsKey("message")
                        ? ((String) line.get("message")).getBytes(StandardCharsets.UTF_8)
                        : Base64.getDecoder().decode((String) line.get("message_base64")); // a binary message
                    try {
                        actual = Json.write(event(decoder(decoders, (Map<?, ?>) line.get("decoder")).decode(message)));
                    } catch (DecodeException error) {
                        actual = error.render(format, message);
                    }
                }
                checked++;
                if (!actual.equals(expected)) {
                    differences++;
                    System.out.println(file + ":" + number + " (" + line.get("where") + "): differs at character "
                        + firstDifference(expected, actual) + ": expected " + expected + ", got " + actual);
                }
            }
        }
        System.out.println(checked + " messages checked, " + differences + " differences");
        System.exit(differences == 0 ? 0 : 1);
    }

    private static int firstDifference(String expected, String actual) {
        int at = 0;
        while (at < expected.length() && at < actual.length() && expected.charAt(at) == actual.charAt(at)) {
            at++;
        }
        return at;
    }

    /** The line's decoder, built once for each class and settings. */
    private static MessageDecoder decoder(Map<String, MessageDecoder> decoders, Map<?, ?> decoder) {
        return decoders.computeIfAbsent(Json.write(decoder), key -> construct(decoder));
    }

    /** A decoder of the class a line names, built with its settings. */
    @SuppressWarnings("unchecked")
    private static <T> T construct(Map<?, ?> decoder) {
        Map<String, String> settings = new HashMap<>();
        ((Map<?, ?>) decoder.get("settings")).forEach((name, value) -> settings.put((String) name, (String) value));
        try {
            return (T) Class.forName((String) decoder.get("class")).getConstructor(Map.class).newInstance(settings);
        } catch (InvocationTargetException error) {
            throw new IllegalStateException("bad settings " + settings, error.getCause());
        } catch (ReflectiveOperationException error) {
            throw new IllegalStateException("no decoder " + decoder.get("class"), error);
        }
    }

    // -- records (RecordDecoder): a line's key_base64 and value_base64 -------------------------------------------

    /** The golden JSON of the event a line's record decodes to (null for none), or its error's line. */
    private static String recordDecoded(Map<String, RecordDecoder> decoders, String format, Map<?, ?> line) {
        Map<?, ?> decoder = (Map<?, ?>) line.get("decoder");
        RecordDecoder reader = decoders.computeIfAbsent(Json.write(decoder), key -> construct(decoder));
        byte[] recordKey = part(line.get("key_base64"));
        byte[] value = part(line.get("value_base64"));
        try {
            Events.Event event = reader.decode(recordKey, value);
            return Json.write(event == null ? Json.NULL : event(event));
        } catch (DecodeException error) {
            return error.render(format, reader.line(recordKey, value));
        }
    }

    /**
     * {@code -}: golden lines of records read from the standard input, of the format named on the first line, each
     * answered as soon as it is read with one line, {@code ok} or the difference (for a property test that draws
     * records, without a JVM started for each).
     */
    private static void serveRecords(Map<String, RecordDecoder> decoders) throws IOException, DecodeException {
        BufferedReader input = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream output = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        String format = input.readLine();
        for (String text = input.readLine(); text != null; text = input.readLine()) {
            Map<?, ?> line = (Map<?, ?>) Json.parse(text.getBytes(StandardCharsets.UTF_8));
            String expected = line.containsKey("event") ? Json.write(line.get("event")) : (String) line.get("error");
            String actual = recordDecoded(decoders, format, line);
            output.println(actual.equals(expected) ? "ok" : "differs at character "
                + firstDifference(expected, actual) + ": expected " + expected + ", got " + actual);
        }
    }

    private static byte[] part(Object base64) {
        return Json.isNull(base64) ? null : Base64.getDecoder().decode((String) base64);
    }

    // -- the golden JSON form of an event (tests/jvm_golden.py) ---------------------------------------------------

    private static Map<String, Object> event(Events.Event event) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("op", event.op());
        Events.Table table = event.table();
        json.put("table", table == null ? null : object("catalog", table.catalog(), "schema", table.schema(),
            "name", table.name()));
        json.put("key", cells(event.key()));
        json.put("before", cells(event.before()));
        json.put("after", cells(event.after()));
        Events.Source source = event.source();
        json.put("source", object("system", source.system(), "position", entries(source.position()),
            "commit_time_us", source.commitTimeUs(), "capture_time_us", source.captureTimeUs()));
        json.put("key_only", event.keyOnly());
        json.put("attributes", entries(event.attributes()));
        return json;
    }

    private static List<Object> cells(List<Events.Cell> cells) {
        if (cells == null) {
            return null;
        }
        List<Object> json = new ArrayList<>();
        for (Events.Cell cell : cells) {
            json.add(object("name", cell.name(), "value", value(cell.value()), "type", cell.type(), "version",
                cell.version(), "kind", cell.kind()));
        }
        return json;
    }

    private static List<Object> entries(List<Events.Entry> entries) {
        List<Object> json = new ArrayList<>();
        for (Events.Entry entry : entries) {
            json.add(object("name", entry.name(), "value", value(entry.value())));
        }
        return json;
    }

    private static Map<String, Object> value(Object value) {
        if (Json.isNull(value)) {
            return null;
        }
        if (value instanceof Boolean) {
            return object("boolean", value);
        }
        if (value instanceof Long) {
            return object("long", value);
        }
        if (value instanceof Double) {
            double number = (Double) value;
            return object("double", Double.isFinite(number) ? value
                : Double.isNaN(number) ? "NaN" : number > 0 ? "Infinity" : "-Infinity");
        }
        if (value instanceof String) {
            return object("string", value);
        }
        if (value instanceof byte[]) {
            return object("bytes", Base64.getEncoder().encodeToString((byte[]) value));
        }
        if (value instanceof TypedText.DecimalText) {
            return object("decimal", ((TypedText.DecimalText) value).text);
        }
        return object("nested", Events.tagged(value));
    }

    /** An object of the (name, value) pairs given, in order. */
    private static Map<String, Object> object(Object... pairs) {
        Map<String, Object> json = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            json.put((String) pairs[i], pairs[i + 1]);
        }
        return json;
    }
}
