package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.Events;

/**
 * The encoder in the JVM of a format whose messages are Kafka records ({@code contract.KafkaRecord}: connect-json,
 * paimon-log), beside {@link MessageEncoder} for the formats whose messages are bytes: one canonical event to the one
 * record the format's Python codec writes for it, {@code encode_messages(event)[0]}, key and value byte for byte. As
 * there, an event with no form in the format is refused with the reason and field of Python's {@code EncodeError};
 * an implementation has a public constructor that takes its codec's {@code jvm_encoder()} settings, as a
 * {@code java.util.Map<String, String>}, and keeps no state between events.
 */
public interface RecordEncoder {
    /** A Kafka record: its key and its value, each the bytes written, or null (no key; a tombstone). */
    record KafkaRecord(byte[] key, byte[] value) {
    }

    KafkaRecord encode(Events.Event event) throws EncodeException;
}
