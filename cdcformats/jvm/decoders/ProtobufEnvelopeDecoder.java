package cdcformats.jvm.decoders;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import cdcformats.jvm.decoders.EnvelopeSchema.Proto;

/**
 * The canonical Protobuf envelope ({@code cdcformats/envelopes/protobuf.py}), one serialized
 * {@code cdcformats.v1.ChangeEvent} per message, decoded as {@code ProtobufCodec.decode_message} decodes it. Python
 * reads the usual layout by hand ({@code protobuf_body.read_event}) and leaves every other message to upb, the
 * reference, which the hand-written reader gives the same events as; this is the reference's reading, by hand: what
 * upb parses (fields in any order, a singular field twice where the last wins, a message field twice where both
 * merge, unknown fields skipped, open enums) and refuses, with its words, then {@code event_from_proto}'s mapping and
 * refusals. With the setting {@code framing=confluent}, a message is in Confluent's wire format and is read as
 * {@code ChangeEventDeserializer.events} reads it: after its magic byte, schema id and message indexes, which must
 * point at the envelope; the schema id is not looked up, since Protobuf reads every version alike.
 */
public final class ProtobufEnvelopeDecoder implements MessageDecoder {
    private static final String NOT_CANONICAL = "not a canonical Protobuf change event (Error parsing message with "
        + "type 'cdcformats.v1.ChangeEvent': ";
    // upb's limit of nested messages below the top one (upb_DecodeOptions_MaxDepth's default)
    private static final int MAX_DEPTH = 100;

    private final boolean framed;

    public ProtobufEnvelopeDecoder(Map<String, String> settings) {
        String framing = settings.getOrDefault("framing", "none");
        if (!framing.equals("confluent") && !framing.equals("none")) {
            throw new IllegalArgumentException("framing must be confluent or none, not " + framing);
        }
        framed = framing.equals("confluent");
    }

    @Override
    public Events.Event decode(byte[] message) throws DecodeException {
        int start = framed ? ConfluentFraming.protobufBody(message) : 0;
        ChangeEventMessage parsed = new ChangeEventMessage();
        Wire wire = new Wire(message);
        wire.pos = start;
        try {
            wire.merge(parsed, message.length, 0);
        } catch (Corrupt error) {
            throw new DecodeException(NOT_CANONICAL + error.getMessage() + ")", null);
        }
        try {
            return parsed.event();
        } catch (ModelValues.Refused error) { // what the model refuses, in its own words
            throw new DecodeException(error.getMessage(), null);
        }
    }

    // -- upb's parsing ---------------------------------------------------------------------------------------------

    /** A message upb refuses: its status's text. */
    private static final class Corrupt extends Exception {
        private static final long serialVersionUID = 1L;

        Corrupt(String message) {
            super(message, null, false, false);
        }
    }

    private static final String MALFORMED = "Wire format was corrupt";

    /** A message type's fields: each known field read into it, or false where it is unknown to it. */
    private interface Message {
        boolean field(int number, int wireType, Wire wire, int end, int depth) throws Corrupt;
    }

    /** The bytes being parsed; {@code pos} is where the next read starts. */
    private static final class Wire {
        private final byte[] data;
        private int pos;

        Wire(byte[] data) {
            this.data = data;
        }

        /** The fields from {@code pos} to {@code end} merged into {@code message}, {@code depth} messages deep. */
        void merge(Message message, int end, int depth) throws Corrupt {
            while (pos < end) {
                long tag = varint(end);
                if (tag > 0xffffffffL || tag >>> 3 == 0) {
                    throw new Corrupt(MALFORMED);
                }
                int number = (int) (tag >>> 3);
                int wireType = (int) (tag & 7);
                if (wireType == Proto.END_GROUP || !message.field(number, wireType, this, end, depth)) {
                    skip(number, wireType, end, depth);
                }
            }
            if (pos != end) { // a string ran past the message (text() reads it to say first whether it is UTF-8)
                throw new Corrupt(MALFORMED);
            }
        }

        /** An unknown field, skipped; a group to its end group, which only closes a group. */
        private void skip(int number, int wireType, int end, int depth) throws Corrupt {
            switch (wireType) {
                case Proto.VARINT:
                    varint(end);
                    return;
                case Proto.FIXED64:
                    fixed(8, end);
                    return;
                case Proto.FIXED32:
                    fixed(4, end);
                    return;
                case Proto.DELIMITED:
                    int size = size(end);
                    pos += size;
                    return;
                case Proto.START_GROUP:
                    if (depth + 1 > MAX_DEPTH) { // upb skips an unknown group within the limit, or calls it corrupt
                        throw new Corrupt(MALFORMED);
                    }
                    while (true) {
                        if (pos >= end) {
                            throw new Corrupt(MALFORMED);
                        }
                        long tag = varint(end);
                        if (tag > 0xffffffffL) { // within a group, upb skips field number 0 too
                            throw new Corrupt(MALFORMED);
                        }
                        if ((tag & 7) == Proto.END_GROUP) {
                            if (tag >>> 3 != number) {
                                throw new Corrupt(MALFORMED);
                            }
                            return;
                        }
                        skip((int) (tag >>> 3), (int) (tag & 7), end, depth + 1);
                    }
                default: // an end group outside its group, or no wire type at all
                    throw new Corrupt(MALFORMED);
            }
        }

        /** A varint of at most 10 bytes, as unsigned 64 bits (the bits beyond them dropped, as upb drops them). */
        long varint(int end) throws Corrupt {
            long number = 0;
            for (int shift = 0; shift < 70; shift += 7) {
                if (pos >= end) {
                    throw new Corrupt(MALFORMED);
                }
                int octet = data[pos++] & 0xff;
                number |= (long) (octet & 0x7f) << shift;
                if (octet < 0x80) {
                    return number;
                }
            }
            throw new Corrupt(MALFORMED);
        }

        /** The size of a length-delimited field, which must lie within {@code end}. */
        int size(int end) throws Corrupt {
            long size = varint(end);
            if (size < 0 || size >= Integer.MAX_VALUE || size > end - pos) {
                throw new Corrupt(MALFORMED);
            }
            return (int) size;
        }

        byte[] fixed(int size, int end) throws Corrupt {
            if (end - pos < size) {
                throw new Corrupt(MALFORMED);
            }
            pos += size;
            return Arrays.copyOfRange(data, pos - size, pos);
        }

        byte[] bytes(int end) throws Corrupt {
            int size = size(end);
            pos += size;
            return Arrays.copyOfRange(data, pos - size, pos);
        }

        /**
         * A {@code string} field: proto3 requires UTF-8. upb checks its length against the data alone, not against
         * the message that holds it, and its bytes before that: one that runs past its message is refused as bad
         * UTF-8 where it is not UTF-8, and as corrupt where it is, when the message ends.
         */
        String text(int end) throws Corrupt {
            int size = size(data.length);
            pos += size;
            try {
                return Python.utf8(data, pos - size, pos);
            } catch (Python.Utf8Error error) {
                throw new Corrupt("String field had bad UTF-8");
            }
        }

        /** A message field's bytes merged into {@code message}, one level deeper. */
        <M extends Message> M message(M message, int end, int depth) throws Corrupt {
            int size = size(end);
            if (depth + 1 > MAX_DEPTH) {
                throw new Corrupt("Exceeded upb_DecodeOptions_MaxDepth");
            }
            merge(message, pos + size, depth + 1);
            return message;
        }
    }

    // -- the messages of change_event.proto, as upb holds them -------------------------------------------------------

    private static final class ChangeEventMessage implements Message {
        long op;
        TableMessage table;
        final List<CellMessage> key = new ArrayList<>();
        Repeated<CellMessage> before;
        Repeated<CellMessage> after;
        SourceMessage source;
        boolean keyOnly;
        final List<EntryMessage> attributes = new ArrayList<>();

        @Override
        public boolean field(int number, int wireType, Wire wire, int end, int depth) throws Corrupt {
            if (wireType == Proto.VARINT) {
                if (number == Proto.EVENT_OP) {
                    op = wire.varint(end);
                } else if (number == Proto.EVENT_KEY_ONLY) {
                    keyOnly = wire.varint(end) != 0;
                } else {
                    return false;
                }
                return true;
            }
            if (wireType != Proto.DELIMITED) {
                return false;
            }
            switch (number) {
                case Proto.EVENT_TABLE:
                    table = wire.message(table == null ? new TableMessage() : table, end, depth);
                    return true;
                case Proto.EVENT_KEY:
                    key.add(wire.message(new CellMessage(), end, depth));
                    return true;
                case Proto.EVENT_BEFORE:
                    before = wire.message(before == null ? image() : before, end, depth);
                    return true;
                case Proto.EVENT_AFTER:
                    after = wire.message(after == null ? image() : after, end, depth);
                    return true;
                case Proto.EVENT_SOURCE:
                    source = wire.message(source == null ? new SourceMessage() : source, end, depth);
                    return true;
                case Proto.EVENT_ATTRIBUTES:
                    attributes.add(wire.message(new EntryMessage(), end, depth));
                    return true;
                default:
                    return false;
            }
        }

        /** {@code event_from_proto}, in its order. */
        Events.Event event() throws DecodeException, ModelValues.Refused {
            int number = (int) op; // an enum field is an int32
            if (number < 1 || number > EnvelopeSchema.OPS.size()) {
                throw new DecodeException("unknown or missing op " + number, "op");
            }
            List<Events.Cell> keyCells = cells(key, "key");
            List<Events.Cell> beforeCells = before == null ? null : cells(before.items, "before");
            List<Events.Cell> afterCells = after == null ? null : cells(after.items, "after");
            SourceMessage from = source == null ? new SourceMessage() : source;
            List<Map.Entry<String, Object>> position = entries(from.position, "source.position");
            ModelValues.checkEntries(position, "source position");
            List<Map.Entry<String, Object>> attributeEntries = entries(attributes, "attributes");
            ModelValues.checkEntries(attributeEntries, "attributes");
            return Events.event(EnvelopeSchema.OPS.get(number - 1),
                table == null ? null : Events.table(table.catalog, table.schema, table.name), keyCells, beforeCells,
                afterCells, from.system, position, from.commitTimeUs, from.captureTimeUs, keyOnly, attributeEntries);
        }
    }

    private static final class TableMessage implements Message {
        String catalog;
        String schema;
        String name = "";

        @Override
        public boolean field(int number, int wireType, Wire wire, int end, int depth) throws Corrupt {
            if (wireType != Proto.DELIMITED) {
                return false;
            }
            switch (number) {
                case Proto.TABLE_CATALOG:
                    catalog = wire.text(end);
                    return true;
                case Proto.TABLE_SCHEMA:
                    schema = wire.text(end);
                    return true;
                case Proto.TABLE_NAME:
                    name = wire.text(end);
                    return true;
                default:
                    return false;
            }
        }
    }

    private static final class CellMessage implements Message {
        String name = "";
        ValueMessage value;
        String type;
        Long version;
        long kind;

        @Override
        public boolean field(int number, int wireType, Wire wire, int end, int depth) throws Corrupt {
            if (wireType == Proto.VARINT) {
                if (number == Proto.CELL_VERSION) {
                    version = wire.varint(end); // int64: two's complement
                } else if (number == Proto.CELL_KIND) {
                    kind = wire.varint(end);
                } else {
                    return false;
                }
                return true;
            }
            if (wireType != Proto.DELIMITED) {
                return false;
            }
            switch (number) {
                case Proto.CELL_NAME:
                    name = wire.text(end);
                    return true;
                case Proto.CELL_VALUE:
                    value = wire.message(value == null ? new ValueMessage() : value, end, depth);
                    return true;
                case Proto.CELL_TYPE:
                    type = wire.text(end);
                    return true;
                default:
                    return false;
            }
        }
    }

    private static final class EntryMessage implements Message {
        String name = "";
        ValueMessage value;

        @Override
        public boolean field(int number, int wireType, Wire wire, int end, int depth) throws Corrupt {
            if (wireType != Proto.DELIMITED) {
                return false;
            }
            if (number == Proto.ENTRY_NAME) {
                name = wire.text(end);
            } else if (number == Proto.ENTRY_VALUE) {
                value = wire.message(value == null ? new ValueMessage() : value, end, depth);
            } else {
                return false;
            }
            return true;
        }
    }

    private static final class SourceMessage implements Message {
        String system;
        final List<EntryMessage> position = new ArrayList<>();
        Long commitTimeUs;
        Long captureTimeUs;

        @Override
        public boolean field(int number, int wireType, Wire wire, int end, int depth) throws Corrupt {
            if (wireType == Proto.VARINT) {
                if (number == Proto.SOURCE_COMMIT_TIME) {
                    commitTimeUs = wire.varint(end);
                } else if (number == Proto.SOURCE_CAPTURE_TIME) {
                    captureTimeUs = wire.varint(end);
                } else {
                    return false;
                }
                return true;
            }
            if (wireType != Proto.DELIMITED) {
                return false;
            }
            if (number == Proto.SOURCE_SYSTEM) {
                system = wire.text(end);
            } else if (number == Proto.SOURCE_POSITION) {
                position.add(wire.message(new EntryMessage(), end, depth));
            } else {
                return false;
            }
            return true;
        }
    }

    /** A {@code Value}: the member of its oneof that is set (its field number; 0 for none) and what it holds. */
    private static final class ValueMessage implements Message {
        int member;
        Object scalar;
        Repeated<ValueMessage> array;
        Repeated<EntryMessage> struct;

        @Override
        public boolean field(int number, int wireType, Wire wire, int end, int depth) throws Corrupt {
            Object read;
            if (number == Proto.VALUE_BOOL && wireType == Proto.VARINT) {
                read = wire.varint(end) != 0;
            } else if (number == Proto.VALUE_INT && wireType == Proto.VARINT) {
                long zigzag = wire.varint(end);
                read = (zigzag >>> 1) ^ -(zigzag & 1);
            } else if (number == Proto.VALUE_DOUBLE && wireType == Proto.FIXED64) {
                read = ByteBuffer.wrap(wire.fixed(8, end)).order(ByteOrder.LITTLE_ENDIAN).getDouble();
            } else if ((number == Proto.VALUE_STRING || number == Proto.VALUE_DECIMAL)
                    && wireType == Proto.DELIMITED) {
                read = wire.text(end);
            } else if (number == Proto.VALUE_BYTES && wireType == Proto.DELIMITED) {
                read = wire.bytes(end);
            } else if (number == Proto.VALUE_ARRAY && wireType == Proto.DELIMITED) {
                // a message member set again merges into it; any other member is replaced
                array = wire.message(member == number ? array
                    : new Repeated<>(Proto.ARRAY_ITEMS, ValueMessage::new), end, depth);
                set(number, null);
                return true;
            } else if (number == Proto.VALUE_STRUCT && wireType == Proto.DELIMITED) {
                struct = wire.message(member == number ? struct
                    : new Repeated<>(Proto.STRUCT_FIELDS, EntryMessage::new), end, depth);
                set(number, null);
                return true;
            } else {
                return false;
            }
            set(number, read);
            return true;
        }

        private void set(int number, Object read) {
            if (number != Proto.VALUE_ARRAY) {
                array = null;
            }
            if (number != Proto.VALUE_STRUCT) {
                struct = null;
            }
            member = number;
            scalar = read;
        }
    }

    /** A message of one repeated message field: an Image's cells, an Array's items, a Struct's fields. */
    private static final class Repeated<M extends Message> implements Message {
        private final int number;
        private final Supplier<M> made;
        final List<M> items = new ArrayList<>();

        Repeated(int number, Supplier<M> made) {
            this.number = number;
            this.made = made;
        }

        @Override
        public boolean field(int number, int wireType, Wire wire, int end, int depth) throws Corrupt {
            if (number != this.number || wireType != Proto.DELIMITED) {
                return false;
            }
            items.add(wire.message(made.get(), end, depth));
            return true;
        }
    }

    private static Repeated<CellMessage> image() {
        return new Repeated<>(Proto.IMAGE_CELLS, CellMessage::new);
    }

    // -- event_from_proto's mapping --------------------------------------------------------------------------------

    private static List<Events.Cell> cells(List<CellMessage> cells, String path)
            throws DecodeException, ModelValues.Refused {
        List<Events.Cell> result = new ArrayList<>(cells.size());
        for (int index = 0; index < cells.size(); index++) {
            CellMessage cell = cells.get(index);
            int kind = (int) cell.kind; // an enum field is an int32
            if (kind < 0 || kind >= EnvelopeSchema.KINDS.size()) {
                throw new DecodeException("unknown cell kind " + kind, path + "[" + index + "].kind");
            }
            Object value = value(cell.value, path + "[" + index + "].value");
            ModelValues.checkValue(value, "cell " + Python.repr(cell.name) + " value");
            result.add(Events.cell(cell.name, value, cell.type, cell.version, EnvelopeSchema.KINDS.get(kind)));
        }
        return result;
    }

    private static List<Map.Entry<String, Object>> entries(List<EntryMessage> entries, String path)
            throws DecodeException, ModelValues.Refused {
        List<Map.Entry<String, Object>> result = new ArrayList<>(entries.size());
        for (int index = 0; index < entries.size(); index++) {
            EntryMessage entry = entries.get(index);
            result.add(new AbstractMap.SimpleImmutableEntry<>(entry.name,
                value(entry.value, path + "[" + index + "].value")));
        }
        return result;
    }

    /** {@code _value_in}: the member set, or null for none; a decimal that is not one is refused at {@code path}. */
    private static Object value(ValueMessage value, String path) throws DecodeException, ModelValues.Refused {
        if (value == null || value.member == 0) {
            return null;
        }
        switch (value.member) {
            case Proto.VALUE_DECIMAL:
                String text = (String) value.scalar;
                String decimal = PythonDecimal.str(text);
                if (decimal == null) {
                    throw new DecodeException("not a decimal: " + Python.repr(text), path);
                }
                return new TypedText.DecimalText(decimal);
            case Proto.VALUE_ARRAY:
                List<Object> items = new ArrayList<>();
                for (int index = 0; index < value.array.items.size(); index++) {
                    items.add(value(value.array.items.get(index), path + "[" + index + "]"));
                }
                return items;
            case Proto.VALUE_STRUCT:
                return ModelValues.struct(entries(value.struct.items, path + ".fields"));
            default:
                return value.scalar;
        }
    }
}
