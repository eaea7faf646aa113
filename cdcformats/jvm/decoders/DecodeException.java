package cdcformats.jvm.decoders;

/** A message that is not valid in its format: the reason, and the field where it is known (as DecodeError). */
public final class DecodeException extends Exception {
    private static final long serialVersionUID = 1L;
    private static final int EXCERPT_LIMIT = 80; // errors.EXCERPT_LIMIT

    public final String reason;
    public final String field;

    public DecodeException(String reason, String field) {
        super(reason, null, false, false); // no stack trace: bad input is common and reported by its reason
        this.reason = reason;
        this.field = field;
    }

    /**
     * The one-line error of {@code message} in {@code format}, as {@code DecodeError} renders it with no position:
     * {@code <format>: field <field>: <reason> (input: <excerpt>)}.
     */
    public String render(String format, byte[] message) {
        return rendered(format, reason, field, message);
    }

    /** {@link #render} of an error's parts, as a dead-letter row keeps them; without the input where it has none. */
    public static String rendered(String format, String reason, String field, byte[] message) {
        return format + ": " + (field == null || field.isEmpty() ? "" : "field " + field + ": ") + reason
            + (message == null ? "" : " (input: " + Python.inputExcerpt(message, EXCERPT_LIMIT) + ")");
    }
}
