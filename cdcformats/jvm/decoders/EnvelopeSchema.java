package cdcformats.jvm.decoders;

import java.util.List;

/**
 * What the schemas of the canonical envelopes fix ({@code cdcformats/schemas/avro/change_event.avsc} and
 * {@code proto/cdcformats/v1/change_event.proto}), which their decoders and encoders share: the symbols of the enums,
 * the branches of Avro's value union, Protobuf's field numbers.
 */
public final class EnvelopeSchema {
    private EnvelopeSchema() {
    }

    /** Op's symbols in the order of both schemas: Avro's enum index, and Protobuf's number less one (0 is unset). */
    public static final List<String> OPS = List.of("INSERT", "UPDATE", "DELETE", "UPSERT", "READ", "TRUNCATE");
    /** CellKind's symbols in the order of both schemas: Avro's enum index and Protobuf's number. */
    public static final List<String> KINDS = List.of(Events.PUT, Events.DELETE_VERSION, Events.DELETE_ALL_VERSIONS);

    /** The branches of every value union of the Avro schema (a cell's, an entry's, an array item's), in order. */
    public static final class AvroValue {
        private AvroValue() {
        }

        public static final int NULL = 0;
        public static final int BOOLEAN = 1;
        public static final int LONG = 2;
        public static final int DOUBLE = 3;
        public static final int STRING = 4;
        public static final int BYTES = 5;
        public static final int DECIMAL = 6;
        public static final int ARRAY = 7;
        public static final int STRUCT = 8;
        public static final int BRANCHES = 9;
    }

    /** The field numbers of the Protobuf messages, by message. */
    public static final class Proto {
        private Proto() {
        }

        // ChangeEvent
        public static final int EVENT_OP = 1;
        public static final int EVENT_TABLE = 2;
        public static final int EVENT_KEY = 3;
        public static final int EVENT_BEFORE = 4;
        public static final int EVENT_AFTER = 5;
        public static final int EVENT_SOURCE = 6;
        public static final int EVENT_KEY_ONLY = 7;
        public static final int EVENT_ATTRIBUTES = 8;
        // Value, each a member of its oneof kind
        public static final int VALUE_BOOL = 1;
        public static final int VALUE_INT = 2; // sint64
        public static final int VALUE_DOUBLE = 3;
        public static final int VALUE_STRING = 4;
        public static final int VALUE_BYTES = 5;
        public static final int VALUE_DECIMAL = 6;
        public static final int VALUE_ARRAY = 7;
        public static final int VALUE_STRUCT = 8;
        // Array, Struct and Image: their one repeated field
        public static final int ARRAY_ITEMS = 1;
        public static final int STRUCT_FIELDS = 1;
        public static final int IMAGE_CELLS = 1;
        // Cell
        public static final int CELL_NAME = 1;
        public static final int CELL_VALUE = 2;
        public static final int CELL_TYPE = 3;
        public static final int CELL_VERSION = 4;
        public static final int CELL_KIND = 5;
        // Table
        public static final int TABLE_CATALOG = 1;
        public static final int TABLE_SCHEMA = 2;
        public static final int TABLE_NAME = 3;
        // Entry
        public static final int ENTRY_NAME = 1;
        public static final int ENTRY_VALUE = 2;
        // Source
        public static final int SOURCE_SYSTEM = 1;
        public static final int SOURCE_POSITION = 2;
        public static final int SOURCE_COMMIT_TIME = 3;
        public static final int SOURCE_CAPTURE_TIME = 4;

        // Wire types
        public static final int VARINT = 0;
        public static final int FIXED64 = 1;
        public static final int DELIMITED = 2;
        public static final int START_GROUP = 3;
        public static final int END_GROUP = 4;
        public static final int FIXED32 = 5;

        /** The tag of a field, its number and wire type in one varint (one byte for every field here). */
        public static int tag(int field, int wireType) {
            return field << 3 | wireType;
        }
    }
}
