package cdcformats.jvm.encoders;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import cdcformats.jvm.decoders.EnvelopeSchema;
import cdcformats.jvm.decoders.EnvelopeSchema.Proto;
import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.decoders.Json;
import cdcformats.jvm.decoders.TypedText;

/**
 * The canonical Protobuf envelope ({@code proto/cdcformats/v1/change_event.proto}) of an event, the body alone: the
 * same bytes as {@code cdcformats/envelopes/protobuf_body.write_event}, which are upb's, for every event (no normal
 * form, nothing refused). Fields go in field-number order; a proto3 scalar at its default (an empty name, a zero op or
 * kind, {@code key_only} false) is left out; an {@code optional} field, a message field and a oneof member are written
 * whenever set; a null cell or entry value is no {@code value} field, a null array item an empty {@code Value}.
 * Confluent's framing (magic byte, schema id and message index) is the caller's.
 */
public final class ProtobufEnvelopeEncoder implements MessageEncoder, WritesEveryEvent {
    private static final int DELIMITED = Proto.DELIMITED;
    private static final int VARINT = Proto.VARINT;

    public ProtobufEnvelopeEncoder(Map<String, String> settings) {
        if (!settings.isEmpty()) {
            throw new IllegalArgumentException("the Protobuf envelope takes no settings: " + settings);
        }
    }

    @Override
    public byte[] encode(Events.Event event) {
        Message out = new Message();
        out.varintField(tag(Proto.EVENT_OP, VARINT), EnvelopeSchema.OPS.indexOf(event.op()) + 1); // from 1
        Events.Table table = event.table();
        if (table != null) {
            Message body = new Message();
            body.optionalText(tag(Proto.TABLE_CATALOG, DELIMITED), table.catalog()); // optional
            body.optionalText(tag(Proto.TABLE_SCHEMA, DELIMITED), table.schema()); // optional
            if (!table.name().isEmpty()) {
                body.text(tag(Proto.TABLE_NAME, DELIMITED), table.name());
            }
            out.field(tag(Proto.EVENT_TABLE, DELIMITED), body);
        }
        out.cells(event.key(), tag(Proto.EVENT_KEY, DELIMITED));
        if (event.before() != null) { // an Image
            Message image = new Message();
            image.cells(event.before(), tag(Proto.IMAGE_CELLS, DELIMITED));
            out.field(tag(Proto.EVENT_BEFORE, DELIMITED), image);
        }
        if (event.after() != null) {
            Message image = new Message();
            image.cells(event.after(), tag(Proto.IMAGE_CELLS, DELIMITED));
            out.field(tag(Proto.EVENT_AFTER, DELIMITED), image);
        }
        Events.Source source = event.source();
        Message body = new Message(); // always set, so always written
        body.optionalText(tag(Proto.SOURCE_SYSTEM, DELIMITED), source.system()); // optional
        body.entries(source.position(), tag(Proto.SOURCE_POSITION, DELIMITED));
        if (source.commitTimeUs() != null) { // optional int64
            body.varintField(tag(Proto.SOURCE_COMMIT_TIME, VARINT), source.commitTimeUs());
        }
        if (source.captureTimeUs() != null) { // optional int64
            body.varintField(tag(Proto.SOURCE_CAPTURE_TIME, VARINT), source.captureTimeUs());
        }
        out.field(tag(Proto.EVENT_SOURCE, DELIMITED), body);
        if (event.keyOnly()) {
            out.varintField(tag(Proto.EVENT_KEY_ONLY, VARINT), 1);
        }
        out.entries(event.attributes(), tag(Proto.EVENT_ATTRIBUTES, DELIMITED));
        return out.toByteArray();
    }

    private static int tag(int field, int wireType) {
        return Proto.tag(field, wireType);
    }

    /** A message's bytes as its fields are written; a tag is one byte, every field number being below 16. */
    private static final class Message extends ByteArrayOutputStream {
        void varint(long number) { // unsigned: a negative int64 is ten bytes of two's complement
            while ((number & ~0x7fL) != 0) {
                write((int) ((number & 0x7f) | 0x80));
                number >>>= 7;
            }
            write((int) number);
        }

        void varintField(int tag, long number) {
            write(tag);
            varint(number);
        }

        void field(int tag, byte[] body) {
            write(tag);
            varint(body.length);
            write(body, 0, body.length);
        }

        void field(int tag, Message body) {
            write(tag);
            varint(body.size());
            write(body.buf, 0, body.count);
        }

        void text(int tag, String text) {
            field(tag, text.getBytes(StandardCharsets.UTF_8));
        }

        void optionalText(int tag, String text) {
            if (text != null) {
                text(tag, text);
            }
        }

        /** The fields of the {@code Value} message of a value that is not null. */
        void value(Object value) {
            if (value instanceof String) {
                text(tag(Proto.VALUE_STRING, DELIMITED), (String) value);
            } else if (value instanceof Long) {
                long number = (Long) value;
                varintField(tag(Proto.VALUE_INT, VARINT), (number << 1) ^ (number >> 63)); // sint64
            } else if (value instanceof Boolean) {
                varintField(tag(Proto.VALUE_BOOL, VARINT), (Boolean) value ? 1 : 0);
            } else if (value instanceof Double) {
                write(tag(Proto.VALUE_DOUBLE, Proto.FIXED64));
                write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putDouble((Double) value).array(), 0, 8);
            } else if (value instanceof TypedText.DecimalText) {
                text(tag(Proto.VALUE_DECIMAL, DELIMITED), ((TypedText.DecimalText) value).text);
            } else if (value instanceof byte[]) {
                field(tag(Proto.VALUE_BYTES, DELIMITED), (byte[]) value);
            } else if (value instanceof List) {
                Message items = new Message();
                for (Object item : (List<?>) value) {
                    Message itemValue = new Message();
                    if (!Json.isNull(item)) {
                        itemValue.value(item);
                    }
                    items.field(tag(Proto.ARRAY_ITEMS, DELIMITED), itemValue);
                }
                field(tag(Proto.VALUE_ARRAY, DELIMITED), items);
            } else { // a Map, its names in order
                Message fields = new Message();
                for (Map.Entry<?, ?> field : ((Map<?, ?>) value).entrySet()) {
                    fields.entry((String) field.getKey(), field.getValue(), tag(Proto.STRUCT_FIELDS, DELIMITED));
                }
                field(tag(Proto.VALUE_STRUCT, DELIMITED), fields);
            }
        }

        void entry(String name, Object value, int tag) {
            Message entry = new Message();
            if (!name.isEmpty()) {
                entry.text(tag(Proto.ENTRY_NAME, DELIMITED), name);
            }
            if (!Json.isNull(value)) {
                Message body = new Message();
                body.value(value);
                entry.field(tag(Proto.ENTRY_VALUE, DELIMITED), body);
            }
            field(tag, entry);
        }

        void entries(List<Events.Entry> entries, int tag) {
            for (Events.Entry entry : entries) {
                entry(entry.name(), entry.value(), tag);
            }
        }

        void cells(List<Events.Cell> cells, int tag) {
            for (Events.Cell cell : cells) {
                Message body = new Message();
                if (!cell.name().isEmpty()) {
                    body.text(tag(Proto.CELL_NAME, DELIMITED), cell.name());
                }
                if (!Json.isNull(cell.value())) {
                    Message value = new Message();
                    value.value(cell.value());
                    body.field(tag(Proto.CELL_VALUE, DELIMITED), value);
                }
                body.optionalText(tag(Proto.CELL_TYPE, DELIMITED), cell.type()); // optional: written even when empty
                if (cell.version() != null) {
                    body.varintField(tag(Proto.CELL_VERSION, VARINT), cell.version()); // optional int64
                }
                int kind = EnvelopeSchema.KINDS.indexOf(cell.kind());
                if (kind != 0) { // PUT, the enum's zero, is not written
                    body.varintField(tag(Proto.CELL_KIND, VARINT), kind);
                }
                field(tag, body);
            }
        }
    }
}
