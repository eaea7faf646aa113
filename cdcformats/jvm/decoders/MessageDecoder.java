package cdcformats.jvm.decoders;

/**
 * A format's decoder in the JVM: one message to one canonical event (an {@link Events.Event}), exactly as the
 * format's Python codec decodes it. An implementation has a public constructor that takes the settings its codec's
 * {@code jvm_decoder()} gives, as a {@code java.util.Map<String, String>}.
 */
public interface MessageDecoder {
    Events.Event decode(byte[] message) throws DecodeException;
}
