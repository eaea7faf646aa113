package cdcformats.jvm.decoders;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import cdcformats.jvm.decoders.EnvelopeSchema.AvroValue;

/**
 * The canonical Avro envelope ({@code cdcformats/envelopes/avro.py}), one body per message, decoded as
 * {@code AvroCodec.decode_message} decodes it: the reader of {@code envelopes/avro_body.py}, rule for rule, with its
 * errors. With the setting {@code framing=confluent}, a message is in Confluent's wire format and is read as
 * {@code ChangeEventDeserializer.events} reads it: its writer schema is found by id ({@link WriterSchemas}, whose
 * settings it takes too); a body written with the canonical schema ({@code reader_schema}, the .avsc Python gives) is
 * read by the same reader, and one written with another version of the envelope is read through Avro's schema
 * resolution into the canonical one ({@link AvroResolution}), as {@code AvroCodec.decode_written_with} reads it.
 */
public final class AvroEnvelopeDecoder implements MessageDecoder {
    private static final int MAX_NESTING = Messages.MAX_NESTING;
    private static final String NOT_CANONICAL = "not a canonical Avro change event (";
    private static final String DECIMAL_SYNTAX = "[<class 'decimal.ConversionSyntax'>]"; // str(InvalidOperation)

    private final WriterSchemas writerSchemas;
    private final Object readerSchema;
    private final String readerSchemaText;
    // The reading of each writer schema, by its text: the canonical reader (null), or a resolution into it.
    private final Map<String, AvroResolution> resolutions = new ConcurrentHashMap<>();

    public AvroEnvelopeDecoder(Map<String, String> settings) throws DecodeException {
        String framing = settings.getOrDefault("framing", "none");
        if (framing.equals("confluent")) {
            writerSchemas = WriterSchemas.of(settings);
            readerSchemaText = settings.get("reader_schema");
            if (writerSchemas == null || readerSchemaText == null) {
                throw new IllegalArgumentException("framing=confluent needs the writer schemas and reader_schema: "
                    + settings.keySet());
            }
            readerSchema = Json.parse(readerSchemaText.getBytes(StandardCharsets.UTF_8));
        } else if (framing.equals("none")) {
            writerSchemas = null;
            readerSchema = null;
            readerSchemaText = null;
        } else {
            throw new IllegalArgumentException("framing must be confluent or none, not " + framing);
        }
    }

    @Override
    public Events.Event decode(byte[] message) throws DecodeException {
        if (writerSchemas == null) {
            return body(message);
        }
        int id = ConfluentFraming.schemaId(message);
        WriterSchemas.Schema writer = writerSchemas.byId(id);
        byte[] body = Arrays.copyOfRange(message, ConfluentFraming.HEADER, message.length);
        AvroResolution resolution = resolution(writer.text());
        return resolution == null ? body(body) : resolution.event(body);
    }

    /**
     * {@code _parsed_writer_schema}: null for the canonical schema (equal to it as JSON), else its resolution; a
     * writer schema that is not an Avro schema is refused on field {@code schema id}.
     */
    private AvroResolution resolution(String text) throws DecodeException {
        AvroResolution known = resolutions.get(text);
        if (known != null) {
            return known == AvroResolution.CANONICAL ? null : known;
        }
        Object writer;
        try {
            writer = Json.parse(text.getBytes(StandardCharsets.UTF_8));
        } catch (DecodeException error) {
            throw new DecodeException("the writer schema is not an Avro schema (JSONDecodeError: "
                + jsonError(text, error.reason) + ")", "schema id");
        }
        AvroResolution resolution = writesCanonicalBodies(writer, readerSchema) ? AvroResolution.CANONICAL
            : AvroResolution.of(text, readerSchemaText);
        resolutions.put(text, resolution);
        return resolution == AvroResolution.CANONICAL ? null : resolution;
    }

    /**
     * {@code avro.writes_canonical_bodies}: whether every body a writer schema writes is a body of the canonical schema
     * that holds the same values (the same records and fields in order, each union of the writer's the first branches
     * of the canonical's at the same place, as version 1 of the envelope is; names without their namespaces): such
     * bodies are read as canonical ones.
     */
    static boolean writesCanonicalBodies(Object writer, Object canonical) {
        return new CanonicalBodies(writer, canonical).same(writer, canonical);
    }

    /** The records of a writer schema and of the canonical one, compared as {@link #writesCanonicalBodies} does. */
    private static final class CanonicalBodies {
        private final Map<String, Object> writerRecords = new HashMap<>();
        private final Map<String, Object> readerRecords = new HashMap<>();
        // Records already being compared: a record may hold itself.
        private final Set<String> compared = new HashSet<>();

        CanonicalBodies(Object writer, Object reader) {
            records(writer, writerRecords);
            records(reader, readerRecords);
        }

        private static String shortName(Object name) {
            return name instanceof String ? ((String) name).substring(((String) name).lastIndexOf('.') + 1) : "";
        }

        /** Each record a schema defines, by its name: one schema may define a record where the other names it. */
        private static void records(Object schema, Map<String, Object> found) {
            if (schema instanceof List) {
                for (Object branch : (List<?>) schema) {
                    records(branch, found);
                }
            } else if (schema instanceof Map && "record".equals(((Map<?, ?>) schema).get("type"))) {
                found.put(shortName(((Map<?, ?>) schema).get("name")), schema);
                Object fields = ((Map<?, ?>) schema).get("fields");
                for (Object field : fields instanceof List ? (List<?>) fields : List.of()) {
                    records(field instanceof Map ? ((Map<?, ?>) field).get("type") : null, found);
                }
            } else if (schema instanceof Map) {
                records(((Map<?, ?>) schema).get("type"), found);
                records(((Map<?, ?>) schema).get("items"), found);
            }
        }

        boolean same(Object written, Object read) {
            written = written instanceof String ? writerRecords.getOrDefault(shortName(written), written) : written;
            read = read instanceof String ? readerRecords.getOrDefault(shortName(read), read) : read;
            if (written instanceof List) {
                List<?> branches = (List<?>) written;
                if (!(read instanceof List) || branches.size() > ((List<?>) read).size()) {
                    return false;
                }
                for (int index = 0; index < branches.size(); index++) {
                    if (!same(branches.get(index), ((List<?>) read).get(index))) {
                        return false;
                    }
                }
                return true;
            }
            if (!(written instanceof Map) || !(read instanceof Map)
                    || !Python.equal(((Map<?, ?>) written).get("type"), ((Map<?, ?>) read).get("type"))) {
                return Python.equal(written, read);
            }
            Map<?, ?> writtenSchema = (Map<?, ?>) written;
            Map<?, ?> readSchema = (Map<?, ?>) read;
            if ("record".equals(writtenSchema.get("type"))) {
                String writtenName = shortName(writtenSchema.get("name"));
                if (!compared.add(writtenName + "\u0000" + shortName(readSchema.get("name")))) {
                    return true;
                }
                Object fields = writtenSchema.get("fields");
                Object readFields = readSchema.get("fields");
                if (!writtenName.equals(shortName(readSchema.get("name"))) || !(fields instanceof List)
                        || !(readFields instanceof List)
                        || ((List<?>) fields).size() != ((List<?>) readFields).size()) {
                    return false;
                }
                for (int index = 0; index < ((List<?>) fields).size(); index++) {
                    Object field = ((List<?>) fields).get(index);
                    Object readField = ((List<?>) readFields).get(index);
                    if (!(field instanceof Map) || !(readField instanceof Map)
                            || !Python.equal(((Map<?, ?>) field).get("name"), ((Map<?, ?>) readField).get("name"))
                            || !same(((Map<?, ?>) field).get("type"), ((Map<?, ?>) readField).get("type"))) {
                        return false;
                    }
                }
                return true;
            }
            if ("array".equals(writtenSchema.get("type"))) {
                return same(writtenSchema.get("items"), readSchema.get("items"));
            }
            if ("enum".equals(writtenSchema.get("type"))) {
                return shortName(writtenSchema.get("name")).equals(shortName(readSchema.get("name")))
                    && Python.equal(writtenSchema.get("symbols"), readSchema.get("symbols"));
            }
            return Python.equal(written, read);
        }
    }

    /**
     * What Python's {@code json.loads} says of text that is no JSON, where it is sure to say it of the first character:
     * text that starts with no JSON value (a Protobuf schema, say); else {@code reason}, the JVM parser's own words.
     */
    private static String jsonError(String text, String reason) {
        int at = 0;
        while (at < text.length() && " \t\n\r".indexOf(text.charAt(at)) >= 0) {
            at++;
        }
        if (at < text.length() && "{[\"-0123456789tfnNI".indexOf(text.charAt(at)) >= 0) {
            return reason;
        }
        int line = 1;
        int lineStart = 0;
        for (int i = 0; i < at; i++) {
            if (text.charAt(i) == '\n') {
                line++;
                lineStart = i + 1;
            }
        }
        return "Expecting value: line " + line + " column " + (at - lineStart + 1) + " (char " + at + ")";
    }

    // -- the body written with the canonical schema: avro_body.read_event ------------------------------------------

    /** Bytes that are not a body of the canonical schema: BodyError's text. */
    private static final class BodyError extends Exception {
        private static final long serialVersionUID = 1L;

        BodyError(String message) {
            super(message, null, false, false);
        }
    }

    /** {@code AvroCodec.decode_message}: the event of a body, or its error as Python words it. */
    static Events.Event body(byte[] data) throws DecodeException {
        Body body = new Body(data);
        Events.Event event;
        try {
            event = body.event();
        } catch (IndexOutOfBoundsException error) { // a read past the end, as Python's IndexError
            throw new DecodeException(NOT_CANONICAL + "the body ends inside the event, after " + data.length
                + " bytes)", null);
        } catch (Python.Utf8Error error) {
            throw new DecodeException(NOT_CANONICAL + "a string that is not UTF-8 (" + error.getMessage() + "))",
                null);
        } catch (BodyError error) {
            throw new DecodeException(NOT_CANONICAL + error.getMessage() + ")", null);
        } catch (ModelValues.Refused error) { // what the model refuses: its own words
            throw new DecodeException(error.getMessage(), null);
        }
        if (body.pos != data.length) {
            throw new DecodeException((data.length - body.pos) + " bytes left over after the event", null);
        }
        return event;
    }

    /** A body being read: {@code pos} is where the next read starts. */
    private static final class Body {
        private final byte[] data;
        private int pos;

        Body(byte[] data) {
            this.data = data;
        }

        /** {@code _long_at}: a zigzag varint of at most 10 bytes and 64 bits. */
        long longValue() throws BodyError {
            int start = pos;
            long number = 0;
            for (int shift = 0; ; shift += 7) {
                int octet = data[pos++] & 0xff;
                if (shift == 63) {
                    if (octet >= 0x80) { // Python's loop ends without a last byte
                        throw new BodyError("a long of more than 10 bytes at byte " + start);
                    }
                    if (octet > 1) { // the 10th byte may only carry the 64th bit
                        throw new BodyError("a long of more than 64 bits at byte " + start);
                    }
                }
                number |= (long) (octet & 0x7f) << shift;
                if (octet < 0x80) {
                    return (number >>> 1) ^ -(number & 1);
                }
            }
        }

        /** {@code _index_at}: a union branch or enum symbol, below {@code count}. */
        int index(int count, String what) throws BodyError {
            int start = pos;
            long index = longValue();
            if (index < 0 || index >= count) {
                throw new BodyError(what + " " + index + " at byte " + start + ", of " + count);
            }
            return (int) index;
        }

        /** {@code _size_at}: the length of the string or bytes here, checked against the bytes left. */
        int size() throws BodyError {
            int start = pos;
            long size = longValue();
            if (size < 0 || size > data.length - pos) {
                throw new BodyError("a length of " + size + " at byte " + start + ", with " + (data.length - pos)
                    + " bytes left");
            }
            return (int) size;
        }

        String string() throws BodyError, Python.Utf8Error {
            int size = size();
            pos += size;
            return Python.utf8(data, pos - size, pos);
        }

        /** {@code _present_at}: whether the {@code ["null", X]} union here holds an X. */
        boolean present() throws BodyError {
            return index(2, "union branch") == 1;
        }

        String optionalString() throws BodyError, Python.Utf8Error {
            return present() ? string() : null;
        }

        Long optionalLong() throws BodyError {
            return present() ? longValue() : null;
        }

        boolean bool() throws BodyError {
            int octet = data[pos] & 0xff;
            if (octet > 1) { // the specification writes 0 or 1 only
                throw new BodyError("a boolean of " + octet + " at byte " + pos);
            }
            pos++;
            return octet == 1;
        }

        /** {@code _block_at}: the item count of the array block here (0: the array ends). */
        long block() throws BodyError {
            long count = longValue();
            if (count < 0) { // the block gives its size in bytes too, which is not needed
                count = -count;
                longValue();
            }
            // -Long.MIN_VALUE stays negative: 2 ** 63 items, more than any body holds
            if (count < 0 || count > data.length - pos) {
                throw new BodyError("an array block of " + Long.toUnsignedString(count) + " items at byte " + pos
                    + ", with " + (data.length - pos) + " bytes left");
            }
            return count;
        }

        /** {@code _value_at}: the value here, held in {@code depth} arrays and Structs. */
        Object value(int depth) throws BodyError, Python.Utf8Error, ModelValues.Refused {
            int branch = index(AvroValue.BRANCHES, "value union branch");
            switch (branch) {
                case AvroValue.NULL:
                    return null;
                case AvroValue.BOOLEAN:
                    return bool();
                case AvroValue.LONG:
                    return longValue();
                case AvroValue.DOUBLE:
                    double number = ByteBuffer.wrap(data, pos, 8).order(ByteOrder.LITTLE_ENDIAN).getDouble();
                    pos += 8;
                    return number;
                case AvroValue.STRING:
                    return string();
                case AvroValue.BYTES:
                    int size = size();
                    pos += size;
                    return Arrays.copyOfRange(data, pos - size, pos);
                case AvroValue.DECIMAL:
                    return decimal(string());
                default:
                    break;
            }
            if (depth >= MAX_NESTING) { // the model would refuse it; refused before reading on, as bodies nest deep
                throw new ModelValues.Refused("a value nested deeper than " + MAX_NESTING + " levels");
            }
            if (branch == AvroValue.ARRAY) {
                List<Object> items = new ArrayList<>();
                for (long count = block(); count != 0; count = block()) {
                    for (long i = 0; i < count; i++) {
                        items.add(value(depth + 1));
                    }
                }
                return items;
            }
            return ModelValues.struct(entries(depth + 1));
        }

        List<Map.Entry<String, Object>> entries(int depth) throws BodyError, Python.Utf8Error, ModelValues.Refused {
            List<Map.Entry<String, Object>> entries = new ArrayList<>();
            for (long count = block(); count != 0; count = block()) {
                for (long i = 0; i < count; i++) {
                    String name = string();
                    entries.add(new AbstractMap.SimpleImmutableEntry<>(name, value(depth)));
                }
            }
            return entries;
        }

        List<Events.Cell> cells() throws BodyError, Python.Utf8Error, ModelValues.Refused {
            List<Events.Cell> cells = new ArrayList<>();
            for (long count = block(); count != 0; count = block()) {
                for (long i = 0; i < count; i++) {
                    String name = string();
                    Object value = value(0);
                    if (data[pos] != 0 && pos + 1 >= data.length) {
                        // Python's reader looks at the byte after a type's branch before it reads the branch (for the
                        // length of a short string): a body that ends there ends inside the event, whatever the branch
                        throw new ArrayIndexOutOfBoundsException(pos + 1);
                    }
                    String type = optionalString();
                    Long version = optionalLong();
                    String kind = EnvelopeSchema.KINDS.get(index(EnvelopeSchema.KINDS.size(), "CellKind symbol"));
                    cells.add(Events.cell(name, value, type, version, kind));
                }
            }
            return cells;
        }

        List<Events.Cell> optionalCells() throws BodyError, Python.Utf8Error, ModelValues.Refused {
            return present() ? cells() : null;
        }

        Events.Event event() throws BodyError, Python.Utf8Error, ModelValues.Refused {
            String op = EnvelopeSchema.OPS.get(index(EnvelopeSchema.OPS.size(), "Op symbol"));
            Events.Table table = null;
            if (present()) {
                String catalog = optionalString();
                String schema = optionalString();
                table = Events.table(catalog, schema, string());
            }
            List<Events.Cell> key = cells();
            List<Events.Cell> before = optionalCells();
            List<Events.Cell> after = optionalCells();
            String system = optionalString();
            List<Map.Entry<String, Object>> position = entries(0);
            Long commitTimeUs = optionalLong();
            Long captureTimeUs = optionalLong();
            boolean keyOnly = bool();
            List<Map.Entry<String, Object>> attributes = entries(0);
            return Events.event(op, table, key, before, after, system, position, commitTimeUs, captureTimeUs, keyOnly,
                attributes);
        }
    }

    /** {@code Decimal(text)}, as its {@code str()} keeps it; text that is no decimal is Python's InvalidOperation. */
    static TypedText.DecimalText decimal(String text) throws ModelValues.Refused {
        String decimal = PythonDecimal.str(text);
        if (decimal == null) {
            throw new ModelValues.Refused(DECIMAL_SYNTAX);
        }
        return new TypedText.DecimalText(decimal);
    }
}
