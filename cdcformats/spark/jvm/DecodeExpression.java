package cdcformats.spark.jvm;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import cdcformats.jvm.decoders.DecodeException;
import cdcformats.jvm.decoders.Events;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.types.DataType;
import scala.collection.immutable.IndexedSeq;

/**
 * {@code cdc_decode(format, value)} for a format with a JVM decoder: each message (binary or string, or a Kafka
 * record's {@code struct<key, value>}) decoded by the format's Java decoder ({@link EventReader}), a bad one handled by the error mode as the Python path handles it: a dead-letter
 * row naming the format, the reason, the field and the raw message; a null; or a failed task.
 */
public final class DecodeExpression extends CodecExpression {
    private static final long serialVersionUID = 1L;

    private final String format;
    private final String decoderClass;
    private final TreeMap<String, String> settings;
    private final String errors;
    private final String eventDdl;
    private transient DataType dataType;
    private transient EventReader reader;

    public DecodeExpression(Expression child, String format, String decoderClass, Map<String, String> settings,
                            String errors, String eventDdl) {
        super(child);
        this.format = format;
        this.decoderClass = decoderClass;
        this.settings = new TreeMap<>(settings);
        this.errors = errors;
        this.eventDdl = eventDdl;
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> children) {
        return new DecodeExpression(children.apply(0), format, decoderClass, settings, errors, eventDdl);
    }

    @Override
    public DataType dataType() {
        if (dataType == null) {
            dataType = DataType.fromDDL(eventDdl);
        }
        return dataType;
    }

    private EventReader reader() {
        if (reader == null) {
            reader = new EventReader(decoderClass, settings, format, child.dataType());
        }
        return reader;
    }

    @Override
    public Object eval(InternalRow input) {
        Object value = child.eval(input);
        if (value == null) {
            return null;
        }
        try {
            Events.Event event = reader().read(value);
            return event == null ? null : SparkRows.event(event);
        } catch (DecodeException error) {
            byte[] raw = reader().raw(value);
            switch (errors) {
                case "null":
                    return null;
                case "fail":
                    throw new IllegalArgumentException(error.render(format, raw));
                default:
                    return SparkRows.error(format, error.reason, error.field, error.render(format, raw), raw);
            }
        }
    }

    @Override
    public String prettyName() {
        return "cdc_decode";
    }

    @Override
    public String toString() {
        return "cdc_decode(" + format + " in the JVM, " + child + (errors.equals("dead-letter") ? ""
            : ", errors " + errors) + ")";
    }

    @Override
    public String sql() {
        return "cdc_decode('" + format + "', " + child.sql() + (errors.equals("dead-letter") ? ""
            : ", map('errors', '" + errors + "')") + ")";
    }

    @Override
    public int productArity() {
        return 6;
    }

    @Override
    public Object productElement(int n) {
        switch (n) {
            case 0: return child;
            case 1: return format;
            case 2: return decoderClass;
            case 3: return settings;
            case 4: return errors;
            case 5: return eventDdl;
            default: throw new IndexOutOfBoundsException(String.valueOf(n));
        }
    }

    @Override
    public boolean canEqual(Object other) {
        return other instanceof DecodeExpression;
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof DecodeExpression)) {
            return false;
        }
        DecodeExpression that = (DecodeExpression) other;
        return child.equals(that.child) && format.equals(that.format) && decoderClass.equals(that.decoderClass)
            && settings.equals(that.settings) && errors.equals(that.errors) && eventDdl.equals(that.eventDdl);
    }

    @Override
    public int hashCode() {
        return Objects.hash(child, format, decoderClass, settings, errors);
    }
}
