package cdcformats.jvm.decoders;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericEnumSymbol;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.Decoder;
import org.apache.avro.util.Utf8;

/**
 * A body of the Avro envelope written with another version of its schema, read into the canonical schema through
 * Avro's schema resolution (Apache Avro's, a jar of Spark's), as {@code AvroCodec.decode_written_with} reads it with
 * fastavro: the record it resolves to becomes the event as {@code event_from_record} makes it, and bytes after the
 * record are refused. The body's bytes are read by {@link FastavroReads}, which fails where fastavro fails and says
 * what fastavro says. (A writer schema whose bodies are canonical ones, version 1's, is read as the canonical.)
 */
final class AvroResolution {
    /** The reading of the canonical schema itself, which needs no resolution. */
    static final AvroResolution CANONICAL = new AvroResolution(null, null);

    private final GenericDatumReader<GenericRecord> reader;
    private final DecodeException refusal;

    private AvroResolution(GenericDatumReader<GenericRecord> reader, DecodeException refusal) {
        this.reader = reader;
        this.refusal = refusal;
    }

    /** The resolution of {@code writer} into {@code canonical}; one that refuses every body where it is no schema. */
    static AvroResolution of(String writer, String canonical) {
        try {
            Schema written = new Schema.Parser().setValidateDefaults(false).parse(writer);
            return new AvroResolution(new GenericDatumReader<>(written, new Schema.Parser().parse(canonical)), null);
        } catch (AvroRuntimeException error) { // fastavro.parse_schema's refusal, in Avro's words
            return new AvroResolution(null, new DecodeException("the writer schema is not an Avro schema ("
                + error.getClass().getSimpleName() + ": " + error.getMessage() + ")", "schema id"));
        }
    }

    Events.Event event(byte[] body) throws DecodeException {
        if (refusal != null) {
            throw refusal;
        }
        GenericRecord record;
        FastavroReads reads = new FastavroReads(body);
        try {
            synchronized (reader) { // a reader keeps its resolver as it reads
                record = reader.read(null, reads);
            }
        } catch (FastavroReads.Failure error) {
            throw unreadable(error.pythonType, error.getMessage());
        } catch (ArrayIndexOutOfBoundsException error) { // a branch or symbol beyond the writer's
            throw unreadable("IndexError", "list index out of range");
        } catch (IOException | AvroRuntimeException error) { // a writer schema that does not resolve
            throw unreadable("SchemaResolutionError", error.getMessage());
        }
        if (reads.pos != body.length) {
            throw new DecodeException((body.length - reads.pos) + " bytes left over after the event", null);
        }
        try {
            return event(record);
        } catch (ModelValues.Refused error) {
            throw new DecodeException(error.getMessage(), null);
        }
    }

    private static DecodeException unreadable(String type, String message) {
        return new DecodeException("cannot be read with its writer schema (" + type + ": " + message + ")", null);
    }

    // -- event_from_record ------------------------------------------------------------------------------------------

    private static Events.Event event(GenericRecord record) throws ModelValues.Refused {
        GenericRecord table = (GenericRecord) record.get("table");
        List<Events.Cell> key = cells(record.get("key"));
        List<Events.Cell> before = cells(record.get("before"));
        List<Events.Cell> after = cells(record.get("after"));
        GenericRecord source = (GenericRecord) record.get("source");
        List<Map.Entry<String, Object>> position = entries(source.get("position"));
        ModelValues.checkEntries(position, "source position");
        List<Map.Entry<String, Object>> attributes = entries(record.get("attributes"));
        ModelValues.checkEntries(attributes, "attributes");
        return Events.event(((GenericEnumSymbol<?>) record.get("op")).toString(),
            table == null ? null : Events.table(text(table.get("catalog")), text(table.get("schema")),
                text(table.get("name"))),
            key, before, after, text(source.get("system")), position, (Long) source.get("commit_time_us"),
            (Long) source.get("capture_time_us"), (Boolean) record.get("key_only"), attributes);
    }

    private static String text(Object text) {
        return text == null ? null : text.toString();
    }

    private static List<Events.Cell> cells(Object cells) throws ModelValues.Refused {
        if (cells == null) {
            return null;
        }
        List<Events.Cell> result = new ArrayList<>();
        for (Object item : (List<?>) cells) {
            GenericRecord cell = (GenericRecord) item;
            String name = text(cell.get("name"));
            Object value = value(cell.get("value"));
            ModelValues.checkValue(value, "cell " + Python.repr(name) + " value");
            result.add(Events.cell(name, value, text(cell.get("type")), (Long) cell.get("version"),
                cell.get("kind").toString()));
        }
        return result;
    }

    private static List<Map.Entry<String, Object>> entries(Object entries) throws ModelValues.Refused {
        List<Map.Entry<String, Object>> result = new ArrayList<>();
        for (Object item : (List<?>) entries) {
            GenericRecord entry = (GenericRecord) item;
            result.add(new AbstractMap.SimpleImmutableEntry<>(text(entry.get("name")), value(entry.get("value"))));
        }
        return result;
    }

    /** {@code _value_in}: a record of the union is a Decimal, an Array or a Struct, told apart by their fields. */
    private static Object value(Object value) throws ModelValues.Refused {
        if (value instanceof GenericRecord) {
            GenericRecord record = (GenericRecord) value;
            if (record.hasField("text")) {
                return AvroEnvelopeDecoder.decimal(text(record.get("text")));
            }
            if (record.hasField("items")) {
                List<Object> items = new ArrayList<>();
                for (Object item : (List<?>) record.get("items")) {
                    items.add(value(item));
                }
                return items;
            }
            return ModelValues.struct(entries(record.get("fields")));
        }
        if (value instanceof Utf8) {
            return value.toString();
        }
        if (value instanceof ByteBuffer) {
            ByteBuffer bytes = (ByteBuffer) value;
            return Arrays.copyOfRange(bytes.array(), bytes.arrayOffset() + bytes.position(),
                bytes.arrayOffset() + bytes.limit());
        }
        return value; // null, Boolean, Long, Double
    }

    /**
     * The primitive reads of a body, failing where fastavro's reader fails with its exception and words: a varint that
     * the body ends before is {@code EOFError}, or {@code IndexError} within it; bytes and strings cut short say how
     * many bytes were expected and read; strings that are not UTF-8 are refused as Python decodes them. (fastavro
     * names its stream by its address for a boolean or a double cut short, which is written here without one.)
     */
    static final class FastavroReads extends Decoder {
        /** fastavro's exception: its Python type and text. */
        static final class Failure extends IOException {
            private static final long serialVersionUID = 1L;
            final String pythonType;

            Failure(String pythonType, String message) {
                super(message);
                this.pythonType = pythonType;
            }
        }

        private final byte[] data;
        private int pos;

        FastavroReads(byte[] data) {
            this.data = data;
        }

        @Override
        public void readNull() {
        }

        @Override
        public boolean readBoolean() throws IOException {
            if (pos >= data.length) {
                throw new Failure("EOFError", "cannot read boolean from <_io.BytesIO object>");
            }
            return data[pos++] != 0; // fastavro reads any byte but 0 as true
        }

        @Override
        public int readInt() throws IOException {
            return (int) readLong();
        }

        @Override
        public long readLong() throws IOException {
            if (pos >= data.length) {
                throw new Failure("EOFError", "");
            }
            long number = 0;
            for (int shift = 0; ; shift += 7) {
                if (pos >= data.length) {
                    throw new Failure("IndexError", "string index out of range");
                }
                int octet = data[pos++] & 0xff;
                number |= (long) (octet & 0x7f) << shift;
                if (octet < 0x80) {
                    return (number >>> 1) ^ -(number & 1);
                }
            }
        }

        @Override
        public float readFloat() throws IOException {
            return ByteBuffer.wrap(fixed(4, "float"), 0, 4).order(ByteOrder.LITTLE_ENDIAN).getFloat();
        }

        @Override
        public double readDouble() throws IOException {
            return ByteBuffer.wrap(fixed(8, "double"), 0, 8).order(ByteOrder.LITTLE_ENDIAN).getDouble();
        }

        private byte[] fixed(int size, String type) throws Failure {
            if (data.length - pos < size) {
                throw new Failure("EOFError", "cannot read " + type + " from <_io.BytesIO object>");
            }
            pos += size;
            return Arrays.copyOfRange(data, pos - size, pos);
        }

        private byte[] sized() throws IOException {
            long size = readLong();
            long left = data.length - pos;
            if (size < 0 || size > left) { // Python's read(size) reads what is left, all of it for a negative size
                throw new Failure("EOFError", "Expected " + size + " bytes, read " + left);
            }
            pos += (int) size;
            return Arrays.copyOfRange(data, pos - (int) size, pos);
        }

        @Override
        public Utf8 readString(Utf8 old) throws IOException {
            return new Utf8(readString());
        }

        @Override
        public String readString() throws IOException {
            byte[] bytes = sized();
            try {
                return Python.utf8(bytes, 0, bytes.length);
            } catch (Python.Utf8Error error) {
                throw new Failure("UnicodeDecodeError", error.getMessage());
            }
        }

        @Override
        public void skipString() throws IOException {
            readString();
        }

        @Override
        public ByteBuffer readBytes(ByteBuffer old) throws IOException {
            return ByteBuffer.wrap(sized());
        }

        @Override
        public void skipBytes() throws IOException {
            sized();
        }

        @Override
        public void readFixed(byte[] bytes, int start, int length) throws IOException {
            if (data.length - pos < length) {
                throw new Failure("EOFError", "Expected " + length + " bytes, read " + (data.length - pos));
            }
            System.arraycopy(data, pos, bytes, start, length);
            pos += length;
        }

        @Override
        public void skipFixed(int length) throws IOException {
            readFixed(new byte[length], 0, length);
        }

        @Override
        public int readEnum() throws IOException {
            return readInt();
        }

        /** A block's item count, its size in bytes read past where it is negative. */
        private long blockCount() throws IOException {
            long count = readLong();
            if (count < 0) {
                readLong();
                count = -count;
            }
            return count;
        }

        @Override
        public long readArrayStart() throws IOException {
            return blockCount();
        }

        @Override
        public long arrayNext() throws IOException {
            return blockCount();
        }

        @Override
        public long skipArray() throws IOException {
            return blockCount();
        }

        @Override
        public long readMapStart() throws IOException {
            return blockCount();
        }

        @Override
        public long mapNext() throws IOException {
            return blockCount();
        }

        @Override
        public long skipMap() throws IOException {
            return blockCount();
        }

        @Override
        public int readIndex() throws IOException {
            return readInt();
        }
    }
}
