package cdcformats.spark.jvm;

import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import cdcformats.jvm.decoders.DecodeException;
import cdcformats.jvm.encoders.EncodeException;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.types.DataType;
import scala.collection.immutable.IndexedSeq;

/**
 * {@code cdc_encode(format, event)} for a format with a JVM encoder: each event row read back ({@link EventRows}) and
 * written by the format's Java encoder ({@link EventWriter}), the result given as {@link WrittenRows} says. A dead
 * letter passes on as its own error; a row the target refuses becomes an error naming the target, the reason, the
 * field and, as raw input, Python's repr of the row.
 */
public final class EncodeExpression extends CodecExpression {
    private static final long serialVersionUID = 1L;

    private final String format;
    private final String encoderClass;
    private final TreeMap<String, String> settings;
    private final WrittenRows results;
    private transient EventWriter writer;

    public EncodeExpression(Expression child, String format, String encoderClass, Map<String, String> settings,
                            WrittenRows results) {
        super(child);
        this.format = format;
        this.encoderClass = encoderClass;
        this.settings = new TreeMap<>(settings);
        this.results = results;
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> children) {
        return new EncodeExpression(children.apply(0), format, encoderClass, settings, results);
    }

    @Override
    public DataType dataType() {
        return results.dataType();
    }

    private EventWriter writer() {
        if (writer == null) {
            writer = new EventWriter(encoderClass, settings, format);
        }
        return writer;
    }

    @Override
    public Object eval(InternalRow input) {
        InternalRow row = (InternalRow) child.eval(input);
        if (row == null) {
            return null;
        }
        InternalRow deadLetter = EventRows.deadLetter(row);
        if (deadLetter != null) { // a message that could not be read: its error goes on
            byte[] raw = deadLetter.isNullAt(4) ? null : deadLetter.getBinary(4);
            String errorFormat = text(deadLetter, 0);
            String reason = text(deadLetter, 1);
            String field = text(deadLetter, 2);
            return results.failed(errorFormat, reason, field, DecodeException.rendered(errorFormat, reason, field, raw),
                raw);
        }
        try {
            return writer().write(EventRows.event(row), results);
        } catch (EncodeException error) {
            return results.failed(format, error.reason, error.field, error.render(format), PythonRepr.ofEvent(row));
        }
    }

    private static String text(InternalRow row, int ordinal) {
        return row.isNullAt(ordinal) ? null : row.getUTF8String(ordinal).toString();
    }

    @Override
    public String prettyName() {
        return results.name("cdc_encode");
    }

    @Override
    public String toString() {
        return prettyName() + "(" + format + " in the JVM, " + child + results.options() + ")";
    }

    @Override
    public String sql() {
        return prettyName() + "('" + format + "', " + child.sql() + results.options() + ")";
    }

    @Override
    public int productArity() {
        return 5;
    }

    @Override
    public Object productElement(int n) {
        switch (n) {
            case 0: return child;
            case 1: return format;
            case 2: return encoderClass;
            case 3: return settings;
            case 4: return results;
            default: throw new IndexOutOfBoundsException(String.valueOf(n));
        }
    }

    @Override
    public boolean canEqual(Object other) {
        return other instanceof EncodeExpression;
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof EncodeExpression)) {
            return false;
        }
        EncodeExpression that = (EncodeExpression) other;
        return child.equals(that.child) && format.equals(that.format) && encoderClass.equals(that.encoderClass)
            && settings.equals(that.settings) && results.equals(that.results);
    }

    @Override
    public int hashCode() {
        return Objects.hash(child, format, encoderClass, settings, results);
    }
}
