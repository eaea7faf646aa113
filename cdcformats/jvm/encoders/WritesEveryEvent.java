package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.Events;

/**
 * The encoder of a format that writes every event exactly (the canonical envelopes): its normal form of an event is
 * the event, and it carries every feature, so {@code strict} refuses nothing.
 */
public interface WritesEveryEvent extends EventEncoder {
    @Override
    default Events.Event normalForm(Events.Event event) {
        return event;
    }

    @Override
    default boolean carries(String feature) {
        return true;
    }
}
