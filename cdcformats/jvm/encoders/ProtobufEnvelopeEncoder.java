package cdcformats.jvm.encoders;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

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
public final class ProtobufEnvelopeEncoder implements MessageEncoder {
    // Op's numbers, from 1 in this order; CellKind's from 0.
    private static final List<String> OPS = List.of("INSERT", "UPDATE", "DELETE", "UPSERT", "READ", "TRUNCATE");
    private static final List<String> KINDS = List.of(Events.PUT, Events.DELETE_VERSION, Events.DELETE_ALL_VERSIONS);

    public ProtobufEnvelopeEncoder(Map<String, String> settings) {
        if (!settings.isEmpty()) {
            throw new IllegalArgumentException("the Protobuf envelope takes no settings: " + settings);
        }
    }

    @Override
    public Events.Event normalForm(Events.Event event) {
        return event; // the canonical envelope writes every event exactly
    }

    @Override
    public boolean carries(String feature) {
        return true;
    }

    @Override
    public byte[] encode(Events.Event event) {
        Message out = new Message();
        out.varintField(0x08, OPS.indexOf(event.op()) + 1); // ChangeEvent.op = 1
        Events.Table table = event.table();
        if (table != null) { // ChangeEvent.table = 2
            Message body = new Message();
            body.optionalText(0x0A, table.catalog()); // Table.catalog = 1, optional
            body.optionalText(0x12, table.schema()); // Table.schema = 2, optional
            if (!table.name().isEmpty()) {
                body.text(0x1A, table.name()); // Table.name = 3
            }
            out.field(0x12, body);
        }
        out.cells(event.key(), 0x1A); // ChangeEvent.key = 3
        if (event.before() != null) { // ChangeEvent.before = 4, an Image
            Message image = new Message();
            image.cells(event.before(), 0x0A); // Image.cells = 1
            out.field(0x22, image);
        }
        if (event.after() != null) { // ChangeEvent.after = 5, an Image
            Message image = new Message();
            image.cells(event.after(), 0x0A);
            out.field(0x2A, image);
        }
        Events.Source source = event.source();
        Message body = new Message(); // ChangeEvent.source = 6: always set, so always written
        body.optionalText(0x0A, source.system()); // Source.system = 1, optional
        body.entries(source.position(), 0x12); // Source.position = 2
        if (source.commitTimeUs() != null) {
            body.varintField(0x18, source.commitTimeUs()); // Source.commit_time_us = 3, optional int64
        }
        if (source.captureTimeUs() != null) {
            body.varintField(0x20, source.captureTimeUs()); // Source.capture_time_us = 4, optional int64
        }
        out.field(0x32, body);
        if (event.keyOnly()) {
            out.varintField(0x38, 1); // ChangeEvent.key_only = 7
        }
        out.entries(event.attributes(), 0x42); // ChangeEvent.attributes = 8
        return out.toByteArray();
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
                text(0x22, (String) value); // Value.string_value = 4
            } else if (value instanceof Long) {
                long number = (Long) value;
                varintField(0x10, (number << 1) ^ (number >> 63)); // Value.long_value = 2, sint64
            } else if (value instanceof Boolean) {
                varintField(0x08, (Boolean) value ? 1 : 0); // Value.bool_value = 1
            } else if (value instanceof Double) {
                write(0x19); // Value.double_value = 3, fixed64
                write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putDouble((Double) value).array(), 0, 8);
            } else if (value instanceof TypedText.DecimalText) {
                text(0x32, ((TypedText.DecimalText) value).text); // Value.decimal_value = 6
            } else if (value instanceof byte[]) {
                field(0x2A, (byte[]) value); // Value.bytes_value = 5
            } else if (value instanceof List) {
                Message items = new Message(); // Value.array_value = 7, its Array.items = 1
                for (Object item : (List<?>) value) {
                    Message itemValue = new Message();
                    if (!Json.isNull(item)) {
                        itemValue.value(item);
                    }
                    items.field(0x0A, itemValue);
                }
                field(0x3A, items);
            } else { // a Map, its names in order: Value.struct_value = 8, its Struct.fields = 1
                Message fields = new Message();
                for (Map.Entry<?, ?> field : ((Map<?, ?>) value).entrySet()) {
                    fields.entry((String) field.getKey(), field.getValue(), 0x0A);
                }
                field(0x42, fields);
            }
        }

        void entry(String name, Object value, int tag) {
            Message entry = new Message();
            if (!name.isEmpty()) {
                entry.text(0x0A, name); // Entry.name = 1
            }
            if (!Json.isNull(value)) {
                Message body = new Message();
                body.value(value);
                entry.field(0x12, body); // Entry.value = 2
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
                    body.text(0x0A, cell.name()); // Cell.name = 1
                }
                if (!Json.isNull(cell.value())) {
                    Message value = new Message();
                    value.value(cell.value());
                    body.field(0x12, value); // Cell.value = 2
                }
                body.optionalText(0x1A, cell.type()); // Cell.type = 3, optional: written even when empty
                if (cell.version() != null) {
                    body.varintField(0x20, cell.version()); // Cell.version = 4, optional int64
                }
                int kind = KINDS.indexOf(cell.kind());
                if (kind != 0) {
                    body.varintField(0x28, kind); // Cell.kind = 5; PUT, the enum's zero, is not written
                }
                field(tag, body);
            }
        }
    }
}
