package cdcformats.spark.jvm;

import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import cdcformats.jvm.decoders.DecodeException;
import cdcformats.jvm.encoders.EncodeException;
import cdcformats.jvm.encoders.MessageEncoder;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.types.UTF8String;
import scala.collection.immutable.IndexedSeq;

/**
 * {@code cdc_encode(format, event)} (and {@code cdc_convert}, over a {@link DecodeExpression}) for a format with a JVM
 * encoder: each event row read back ({@link EventRows}) and written by the format's {@link MessageEncoder}, after the
 * bytes every message of the call starts with (Confluent's framing, resolved when the function was registered). A row
 * that cannot be written is handled by the error mode as the Arrow path ({@code arrow.encode_array}) handles it: a
 * dead letter passes on as its own error; a row the target refuses becomes an error naming the target, the reason,
 * the field and, as raw input, Python's repr of the row; a null, or a failed task.
 *
 * <p>The result is binary, or, for the {@code _or_error} forms, a {@code struct<key, value, error>}.
 */
public final class EncodeExpression extends CodecExpression {
    private static final long serialVersionUID = 1L;

    private final String format;
    private final String encoderClass;
    private final TreeMap<String, String> settings;
    private final byte[] prefix;
    private final String errors;
    private final String resultDdl;
    private transient DataType dataType;
    private transient MessageEncoder encoder;

    /** @param resultDdl the type of an {@code _or_error} form's result, or null for the binary forms */
    public EncodeExpression(Expression child, String format, String encoderClass, Map<String, String> settings,
                            byte[] prefix, String errors, String resultDdl) {
        super(child);
        this.format = format;
        this.encoderClass = encoderClass;
        this.settings = new TreeMap<>(settings);
        this.prefix = prefix.clone();
        this.errors = errors;
        this.resultDdl = resultDdl;
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> children) {
        return new EncodeExpression(children.apply(0), format, encoderClass, settings, prefix, errors, resultDdl);
    }

    @Override
    public DataType dataType() {
        if (dataType == null) {
            dataType = resultDdl == null ? DataTypes.BinaryType : DataType.fromDDL(resultDdl);
        }
        return dataType;
    }

    private MessageEncoder encoder() {
        if (encoder == null) {
            encoder = CodecClasses.instance(MessageEncoder.class, encoderClass, settings, format, "JVM encoder");
        }
        return encoder;
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
            return handled(errorFormat, reason, field, DecodeException.rendered(errorFormat, reason, field, raw), raw);
        }
        byte[] message;
        try {
            message = encoder().encode(EventRows.event(row));
        } catch (EncodeException error) {
            return handled(format, error.reason, error.field, error.render(format), PythonRepr.ofEvent(row));
        }
        byte[] value = new byte[prefix.length + message.length];
        System.arraycopy(prefix, 0, value, 0, prefix.length);
        System.arraycopy(message, 0, value, prefix.length, message.length);
        return resultDdl == null ? value : new GenericInternalRow(new Object[] {null, value, null});
    }

    private static String text(InternalRow row, int ordinal) {
        return row.isNullAt(ordinal) ? null : row.getUTF8String(ordinal).toString();
    }

    private Object handled(String errorFormat, String reason, String field, String message, byte[] raw) {
        switch (errors) {
            case "null":
                return null;
            case "fail":
                throw new IllegalArgumentException(message);
            default:
                InternalRow error = new GenericInternalRow(new Object[] {UTF8String.fromString(errorFormat),
                    UTF8String.fromString(reason), field == null ? null : UTF8String.fromString(field),
                    UTF8String.fromString(message), raw});
                return new GenericInternalRow(new Object[] {null, null, error});
        }
    }

    @Override
    public String prettyName() {
        return resultDdl == null ? "cdc_encode" : "cdc_encode_or_error";
    }

    @Override
    public String toString() {
        return prettyName() + "(" + format + " in the JVM, " + child + (errors.equals(defaultErrors()) ? ""
            : ", errors " + errors) + ")";
    }

    private String defaultErrors() {
        return resultDdl == null ? "null" : "dead-letter";
    }

    @Override
    public String sql() {
        return prettyName() + "('" + format + "', " + child.sql() + (errors.equals(defaultErrors()) ? ""
            : ", map('errors', '" + errors + "')") + ")";
    }

    @Override
    public int productArity() {
        return 7;
    }

    @Override
    public Object productElement(int n) {
        switch (n) {
            case 0: return child;
            case 1: return format;
            case 2: return encoderClass;
            case 3: return settings;
            case 4: return HexFormat.of().formatHex(prefix);
            case 5: return errors;
            case 6: return resultDdl;
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
            && settings.equals(that.settings) && java.util.Arrays.equals(prefix, that.prefix)
            && errors.equals(that.errors) && Objects.equals(resultDdl, that.resultDdl);
    }

    @Override
    public int hashCode() {
        return Objects.hash(child, format, encoderClass, settings, errors, resultDdl);
    }
}
