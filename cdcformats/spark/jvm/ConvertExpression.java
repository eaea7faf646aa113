package cdcformats.spark.jvm;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import cdcformats.jvm.decoders.DecodeException;
import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.encoders.EncodeException;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.types.DataType;
import scala.collection.immutable.IndexedSeq;

/**
 * {@code cdc_convert(value, source, target)} where both formats have Java codecs: each message decoded by the
 * source's Java decoder ({@link EventReader}) and the event written straight by the target's encoder ({@link EventWriter}), with
 * no event row between them (what {@link DecodeExpression} builds and {@link EncodeExpression} reads back). A row
 * gives what the two would give one over the other, as {@link WrittenRows} says: a message that cannot be read is an
 * error naming the source with the message as raw input; an event the target refuses, an error naming the target
 * with Python's repr of the event's row as raw input.
 */
public final class ConvertExpression extends CodecExpression {
    private static final long serialVersionUID = 1L;

    private final String source;
    private final String decoderClass;
    private final TreeMap<String, String> decoderSettings;
    private final String target;
    private final String encoderClass;
    private final TreeMap<String, String> encoderSettings;
    private final WrittenRows results;
    private transient EventReader reader;
    private transient EventWriter writer;

    public ConvertExpression(Expression child, String source, String decoderClass, Map<String, String> decoderSettings,
                             String target, String encoderClass, Map<String, String> encoderSettings,
                             WrittenRows results) {
        super(child);
        this.source = source;
        this.decoderClass = decoderClass;
        this.decoderSettings = new TreeMap<>(decoderSettings);
        this.target = target;
        this.encoderClass = encoderClass;
        this.encoderSettings = new TreeMap<>(encoderSettings);
        this.results = results;
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> children) {
        return new ConvertExpression(children.apply(0), source, decoderClass, decoderSettings, target, encoderClass,
            encoderSettings, results);
    }

    @Override
    public DataType dataType() {
        return results.dataType();
    }

    @Override
    public Object eval(InternalRow input) {
        Object value = child.eval(input);
        if (value == null) {
            return null;
        }
        if (reader == null) {
            reader = new EventReader(decoderClass, decoderSettings, source, child.dataType());
            writer = new EventWriter(encoderClass, encoderSettings, target);
        }
        Events.Event event;
        try {
            event = reader.read(value);
        } catch (DecodeException error) {
            byte[] raw = reader.raw(value);
            return results.failed(source, error.reason, error.field, error.render(source, raw), raw);
        }
        if (event == null) { // a record that holds no change
            return null;
        }
        try {
            return writer.write(event, results);
        } catch (EncodeException error) {
            return results.failed(target, error.reason, error.field, error.render(target),
                PythonRepr.ofEvent(SparkRows.event(event)));
        }
    }

    @Override
    public String prettyName() {
        return results.name("cdc_convert");
    }

    @Override
    public String toString() {
        return prettyName() + "(" + child + ", " + source + " to " + target + " in the JVM" + results.options() + ")";
    }

    @Override
    public String sql() {
        return prettyName() + "(" + child.sql() + ", '" + source + "', '" + target + "'" + results.options() + ")";
    }

    @Override
    public int productArity() {
        return 8;
    }

    @Override
    public Object productElement(int n) {
        switch (n) {
            case 0: return child;
            case 1: return source;
            case 2: return decoderClass;
            case 3: return decoderSettings;
            case 4: return target;
            case 5: return encoderClass;
            case 6: return encoderSettings;
            case 7: return results;
            default: throw new IndexOutOfBoundsException(String.valueOf(n));
        }
    }

    @Override
    public boolean canEqual(Object other) {
        return other instanceof ConvertExpression;
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof ConvertExpression)) {
            return false;
        }
        ConvertExpression that = (ConvertExpression) other;
        return child.equals(that.child) && source.equals(that.source) && decoderClass.equals(that.decoderClass)
            && decoderSettings.equals(that.decoderSettings) && target.equals(that.target)
            && encoderClass.equals(that.encoderClass) && encoderSettings.equals(that.encoderSettings)
            && results.equals(that.results);
    }

    @Override
    public int hashCode() {
        return Objects.hash(child, source, decoderClass, decoderSettings, target, encoderClass, encoderSettings,
            results);
    }
}
