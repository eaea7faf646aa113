package cdcformats.jvm.encoders;

/**
 * {@link cdcformats.jvm.decoders.PythonDecimal}, where {@code cdcformats.spark.jvm.EventRows} still imports it from:
 * the decoders of the envelopes read decimals with it too, and the decoders compile without the encoders.
 */
public final class PythonDecimal {
    private PythonDecimal() {
    }

    public static String str(String text) {
        return cdcformats.jvm.decoders.PythonDecimal.str(text);
    }
}
