package cdcformats.jvm.decoders;

/**
 * A decoder in the JVM of a format whose messages are Kafka records, a key and a value (Python's
 * {@code KafkaRecord}): one record to its one change, exactly as the format's Python codec reads it
 * ({@code decode_messages(KafkaRecord(key, value))}), or to none (null) where the record holds no change, such as a
 * tombstone. An implementation has a public constructor that takes the settings its codec's {@code jvm_decoder()}
 * gives, as a {@code java.util.Map<String, String>}.
 */
public interface RecordDecoder {
    /** The change of a record whose key and value are each bytes or null; null where it holds none. */
    Events.Event decode(byte[] key, byte[] value) throws DecodeException;

    /**
     * The record as a line of its format's file form: the input that an error names ({@link DecodeException#render})
     * and a dead letter keeps, as Python's Spark functions keep it for a record that cannot be read.
     */
    byte[] line(byte[] key, byte[] value);
}
