package cdcformats.spark.jvm;

import java.util.Map;

import cdcformats.jvm.decoders.DecodeException;
import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.decoders.MessageDecoder;
import cdcformats.jvm.decoders.RecordDecoder;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A source's Java decoder as the reading functions call it: each input to its event. A format whose messages are
 * bytes ({@link MessageDecoder}) reads a binary or string column; one whose messages are Kafka records
 * ({@link RecordDecoder}) reads a {@code struct<key, value>} of them, as Spark's Kafka source gives them, and finds no
 * event in a record that holds no change (a tombstone).
 */
final class EventReader {
    private final MessageDecoder messages;
    private final RecordDecoder records;
    private final int key;
    private final int value;
    private final DataType keyType;
    private final DataType valueType;

    EventReader(String className, Map<String, String> settings, String format, DataType input) {
        Object decoder = CodecClasses.instance(Object.class, className, settings, format, "JVM decoder");
        this.messages = decoder instanceof MessageDecoder ? (MessageDecoder) decoder : null;
        this.records = decoder instanceof RecordDecoder ? (RecordDecoder) decoder : null;
        this.key = records == null ? -1 : ((StructType) input).fieldIndex("key");
        this.value = records == null ? -1 : ((StructType) input).fieldIndex("value");
        this.keyType = records == null ? null : part((StructType) input, "key");
        this.valueType = records == null ? null : part((StructType) input, "value");
    }

    /** Whether a decoder of {@code className} reads inputs of type {@code input}. */
    static boolean reads(String className, DataType input) {
        if (CodecClasses.implementing(RecordDecoder.class, className)) {
            return input instanceof StructType && isBytes(part((StructType) input, "key"))
                && isBytes(part((StructType) input, "value"));
        }
        return isBytes(input) && CodecClasses.implementing(MessageDecoder.class, className);
    }

    private static DataType part(StructType record, String name) {
        return record.getFieldIndex(name).isDefined() ? record.fields()[record.fieldIndex(name)].dataType() : null;
    }

    private static boolean isBytes(DataType type) {
        return type instanceof BinaryType || type instanceof StringType;
    }

    /** The event of one (non-null) input, or null for a record without a change. */
    Events.Event read(Object input) throws DecodeException {
        if (records == null) {
            return messages.decode(bytes(input));
        }
        InternalRow record = (InternalRow) input;
        return records.decode(part(record, key, keyType), part(record, value, valueType));
    }

    /** The input as an error names it and a dead letter keeps it: a message's bytes, or a record's line. */
    byte[] raw(Object input) {
        if (records == null) {
            return bytes(input);
        }
        InternalRow record = (InternalRow) input;
        return records.line(part(record, key, keyType), part(record, value, valueType));
    }

    private static byte[] part(InternalRow record, int ordinal, DataType type) {
        return record.isNullAt(ordinal) ? null : bytes(record.get(ordinal, type));
    }

    private static byte[] bytes(Object input) {
        return input instanceof UTF8String ? ((UTF8String) input).getBytes() : (byte[]) input;
    }
}
