package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.Events;

/**
 * What every format's encoder in the JVM knows of its format, whatever its messages are ({@link MessageEncoder}'s
 * bytes, {@link RecordEncoder}'s Kafka records): the event it writes for an event, and the features it carries, which
 * {@code strict} compares ({@link Strict}).
 */
public interface EventEncoder {
    /**
     * {@code Codec.normal_form}: the event this format writes for {@code event}, which is what decoding its message
     * gives back; {@link EncodeException#refused} for a change with no form here.
     */
    Events.Event normalForm(Events.Event event) throws EncodeException;

    /** Whether the format carries a feature ({@code Codec.carries}), as {@code strict} names what it drops. */
    boolean carries(String feature);
}
