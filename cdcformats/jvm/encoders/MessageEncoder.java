package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.Events;

/**
 * A format's encoder in the JVM: one canonical event (an {@link Events.Event}) to the one message the format's Python
 * codec writes for it, byte for byte: {@code encode_exact(written(event))}, the codec's normal form of the event, so
 * that an event from any format is written as Python writes it. An event with no form in the format at all is refused
 * with the reason and field of Python's {@code EncodeError}. An implementation has a public constructor that takes
 * the settings its codec's {@code jvm_encoder()} gives, as a {@code java.util.Map<String, String>}, and keeps no state
 * between events.
 */
public interface MessageEncoder extends EventEncoder {
    byte[] encode(Events.Event event) throws EncodeException;
}
