package cdcformats.spark.jvm;

import java.util.Map;
import java.util.TreeMap;

import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.encoders.EncodeException;
import cdcformats.jvm.encoders.EventEncoder;
import cdcformats.jvm.encoders.MessageEncoder;
import cdcformats.jvm.encoders.RecordEncoder;
import cdcformats.jvm.encoders.Strict;

/**
 * A target's Java encoder as the writing functions call it: each event to the function's result ({@link WrittenRows}),
 * refused first where the option {@code strict} is on and the target would drop something ({@link Strict}).
 */
final class EventWriter {
    private final EventEncoder encoder;
    private final String format;
    private final boolean strict;

    /**
     * The encoder of {@code className}, built from {@code settings}; {@code strict} where the setting {@code strict}
     * is {@code true} (which Python adds to the codec's own settings for a call under {@code strict}).
     */
    EventWriter(String className, Map<String, String> settings, String format) {
        Map<String, String> own = new TreeMap<>(settings);
        this.strict = Boolean.parseBoolean(own.remove("strict"));
        this.encoder = CodecClasses.instance(EventEncoder.class, className, own, format, "JVM encoder");
        this.format = format;
    }

    Object write(Events.Event event, WrittenRows results) throws EncodeException {
        if (strict) {
            EncodeException refused = Strict.refusal(encoder, format, event);
            if (refused != null) {
                throw refused;
            }
        }
        if (encoder instanceof RecordEncoder) {
            RecordEncoder.KafkaRecord record = ((RecordEncoder) encoder).encode(event);
            return results.written(record.key(), record.value());
        }
        return results.written(((MessageEncoder) encoder).encode(event));
    }
}
