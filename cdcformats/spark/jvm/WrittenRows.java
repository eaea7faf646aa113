package cdcformats.spark.jvm;

import java.io.Serializable;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * What a function that writes messages ({@code cdc_encode}, {@code cdc_convert} and their {@code _or_error} forms)
 * gives for each row, as the Arrow path ({@code arrow.encode_array}) gives it: a written message after the bytes every
 * message of the call starts with (Confluent's framing); a row that cannot be written handled by the error mode, as
 * a null, a failed task, or an error row naming the format, the reason, the field and the raw input.
 *
 * <p>The result is binary, or, for the {@code _or_error} forms, a {@code struct<key, value, error>}.
 */
final class WrittenRows implements Serializable {
    private static final long serialVersionUID = 1L;

    final byte[] prefix;
    final String errors;
    final String resultDdl;
    private transient DataType dataType;

    /** @param resultDdl the type of an {@code _or_error} form's result, or null for the binary forms */
    WrittenRows(byte[] prefix, String errors, String resultDdl) {
        this.prefix = prefix.clone();
        this.errors = errors;
        this.resultDdl = resultDdl;
    }

    DataType dataType() {
        if (dataType == null) {
            dataType = resultDdl == null ? DataTypes.BinaryType : DataType.fromDDL(resultDdl);
        }
        return dataType;
    }

    /** The result for a written message. */
    Object written(byte[] message) {
        byte[] value = new byte[prefix.length + message.length];
        System.arraycopy(prefix, 0, value, 0, prefix.length);
        System.arraycopy(message, 0, value, prefix.length, message.length);
        return resultDdl == null ? value : new GenericInternalRow(new Object[] {null, value, null});
    }

    /** The result for a written Kafka record, each part bytes or null: only an {@code _or_error} form holds a key. */
    Object written(byte[] key, byte[] value) {
        return new GenericInternalRow(new Object[] {key, value, null});
    }

    /** The result for a row that cannot be written: {@code message} is the error's one line. */
    Object failed(String format, String reason, String field, String message, byte[] raw) {
        switch (errors) {
            case "null":
                return null;
            case "fail":
                throw new IllegalArgumentException(message);
            default:
                InternalRow error = new GenericInternalRow(new Object[] {UTF8String.fromString(format),
                    UTF8String.fromString(reason), field == null ? null : UTF8String.fromString(field),
                    UTF8String.fromString(message), raw});
                return new GenericInternalRow(new Object[] {null, null, error});
        }
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof WrittenRows && java.util.Arrays.equals(prefix, ((WrittenRows) other).prefix)
            && errors.equals(((WrittenRows) other).errors)
            && java.util.Objects.equals(resultDdl, ((WrittenRows) other).resultDdl);
    }

    @Override
    public int hashCode() {
        return java.util.Objects.hash(java.util.Arrays.hashCode(prefix), errors, resultDdl);
    }

    @Override
    public String toString() {
        return "prefix " + java.util.HexFormat.of().formatHex(prefix) + ", errors " + errors + ", result "
            + (resultDdl == null ? "binary" : resultDdl);
    }

    /** The function's name in plans. */
    String name(String function) {
        return resultDdl == null ? function : function + "_or_error";
    }

    /** The options map of a call, in SQL, where its error mode is not the default. */
    String options() {
        return errors.equals(resultDdl == null ? "null" : "dead-letter") ? "" : ", map('errors', '" + errors + "')";
    }
}
