package cdcformats.jvm.decoders;

/** A message that is not valid in its format: the reason, and the field where it is known (as DecodeError). */
public final class DecodeException extends Exception {
    private static final long serialVersionUID = 1L;

    public final String reason;
    public final String field;

    public DecodeException(String reason, String field) {
        super(reason, null, false, false); // no stack trace: bad input is common and reported by its reason
        this.reason = reason;
        this.field = field;
    }
}
