package cdcformats.codecs.jvm;

import org.apache.spark.sql.catalyst.InternalRow;

/**
 * A format's decoder that runs inside Spark's JVM: one message to one canonical event, as an {@code EVENT} row (see
 * {@link Events}), exactly as the format's Python codec decodes it. An implementation has a public constructor that
 * takes the settings its codec's {@code jvm_decoder()} gives, as a {@code java.util.Map<String, String>}.
 */
public interface MessageDecoder {
    InternalRow decode(byte[] message) throws DecodeException;
}
