package cdcformats.jvm.encoders;

/**
 * An event that the target format cannot write at all: the reason, and the field where it is known (EncodeError);
 * for a change the format has no form for (Python's {@code Refusal}), also the feature it lacks, which {@code strict}
 * names.
 */
public final class EncodeException extends Exception {
    private static final long serialVersionUID = 1L;

    public final String reason;
    public final String field;
    public final String feature;

    public EncodeException(String reason, String field) {
        this(reason, field, null);
    }

    private EncodeException(String reason, String field, String feature) {
        super(reason, null, false, false); // no stack trace: a refusal is reported by its reason
        this.reason = reason;
        this.field = field;
        this.feature = feature;
    }

    /** {@code Refusal(Loss(feature, field, REFUSED, why))}: a change with no form in the format. */
    public static EncodeException refused(String feature, String field, String why) {
        return new EncodeException(why, field, feature);
    }

    /**
     * The one-line error in {@code format}, as {@code EncodeError} renders it with no position and no raw input (as
     * a dead-letter row's {@code message} holds it): {@code <format>: field <field>: <reason>}.
     */
    public String render(String format) {
        return format + ": " + (field == null || field.isEmpty() ? "" : "field " + field + ": ") + reason;
    }
}
