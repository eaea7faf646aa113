package cdcformats.jvm.encoders;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import cdcformats.jvm.decoders.EnvelopeSchema;
import cdcformats.jvm.decoders.EnvelopeSchema.AvroValue;
import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.decoders.Json;
import cdcformats.jvm.decoders.TypedText;

/**
 * The canonical Avro envelope ({@code avro/change_event.avsc}) of an event, the body alone: the same bytes as
 * {@code cdcformats/envelopes/avro_body.write_event}, which writes every event exactly (no normal form, nothing
 * refused). The schema is fixed, so each union's branch is told from the value's Java type, and the encoding is the
 * specification's: longs as zigzag varints, strings and bytes with their length first, unions and enums as their
 * index, arrays as one block and a zero. Confluent's framing (magic byte and schema id) is the caller's.
 */
public final class AvroEnvelopeEncoder implements MessageEncoder, WritesEveryEvent {
    public AvroEnvelopeEncoder(Map<String, String> settings) {
        if (!settings.isEmpty()) {
            throw new IllegalArgumentException("the Avro envelope takes no settings: " + settings);
        }
    }

    @Override
    public byte[] encode(Events.Event event) {
        Body out = new Body();
        out.index(EnvelopeSchema.OPS.indexOf(event.op()));
        Events.Table table = event.table();
        if (table == null) {
            out.index(0);
        } else {
            out.index(1);
            out.optionalString(table.catalog());
            out.optionalString(table.schema());
            out.string(table.name());
        }
        out.cells(event.key());
        out.optionalCells(event.before());
        out.optionalCells(event.after());
        Events.Source source = event.source();
        out.optionalString(source.system());
        out.entries(source.position());
        out.optionalLong(source.commitTimeUs());
        out.optionalLong(source.captureTimeUs());
        out.write(event.keyOnly() ? 1 : 0);
        out.entries(event.attributes());
        return out.toByteArray();
    }

    /** The bytes of a body as they are written. */
    private static final class Body extends ByteArrayOutputStream {
        Body() {
            super(256);
        }

        void varint(long number) {
            while ((number & ~0x7fL) != 0) {
                write((int) ((number & 0x7f) | 0x80));
                number >>>= 7;
            }
            write((int) number);
        }

        void longValue(long number) {
            varint((number << 1) ^ (number >> 63)); // zigzag
        }

        void index(int index) {
            longValue(index);
        }

        void bytes(byte[] data) {
            longValue(data.length);
            write(data, 0, data.length);
        }

        void string(String text) {
            bytes(text.getBytes(StandardCharsets.UTF_8));
        }

        void optionalString(String text) {
            if (text == null) {
                index(0);
            } else {
                index(1);
                string(text);
            }
        }

        void optionalLong(Long number) {
            if (number == null) {
                index(0);
            } else {
                index(1);
                longValue(number);
            }
        }

        void value(Object value) {
            if (Json.isNull(value)) {
                index(AvroValue.NULL);
            } else if (value instanceof String) {
                index(AvroValue.STRING);
                string((String) value);
            } else if (value instanceof Long) {
                index(AvroValue.LONG);
                longValue((Long) value);
            } else if (value instanceof Boolean) {
                index(AvroValue.BOOLEAN);
                write((Boolean) value ? 1 : 0);
            } else if (value instanceof Double) {
                index(AvroValue.DOUBLE);
                write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putDouble((Double) value).array(), 0, 8);
            } else if (value instanceof byte[]) {
                index(AvroValue.BYTES);
                bytes((byte[]) value);
            } else if (value instanceof TypedText.DecimalText) {
                index(AvroValue.DECIMAL);
                string(((TypedText.DecimalText) value).text);
            } else if (value instanceof List) {
                index(AvroValue.ARRAY);
                List<?> items = (List<?>) value;
                if (!items.isEmpty()) {
                    longValue(items.size());
                    for (Object item : items) {
                        value(item);
                    }
                }
                write(0);
            } else { // a Map, its names in order: Events refuses every other value as it is built
                index(AvroValue.STRUCT);
                Map<?, ?> fields = (Map<?, ?>) value;
                if (!fields.isEmpty()) {
                    longValue(fields.size());
                    for (Map.Entry<?, ?> field : fields.entrySet()) {
                        string((String) field.getKey());
                        value(field.getValue());
                    }
                }
                write(0);
            }
        }

        void cells(List<Events.Cell> cells) {
            if (!cells.isEmpty()) {
                longValue(cells.size());
                for (Events.Cell cell : cells) {
                    string(cell.name());
                    value(cell.value());
                    optionalString(cell.type());
                    optionalLong(cell.version());
                    index(EnvelopeSchema.KINDS.indexOf(cell.kind()));
                }
            }
            write(0);
        }

        void optionalCells(List<Events.Cell> cells) {
            if (cells == null) {
                index(0);
            } else {
                index(1);
                cells(cells);
            }
        }

        void entries(List<Events.Entry> entries) {
            if (!entries.isEmpty()) {
                longValue(entries.size());
                for (Events.Entry entry : entries) {
                    string(entry.name());
                    value(entry.value());
                }
            }
            write(0);
        }
    }
}
