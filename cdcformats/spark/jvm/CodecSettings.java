package cdcformats.spark.jvm;

/**
 * What Python says of a call whose options the JVM cannot read alone (a literal options map holding more than
 * {@code errors}): the settings of the Java codecs that run it with those options, as the Arrow path would read them.
 * {@code cdcformats.spark.register} hands the JVM one, through Py4J's callback server.
 */
public interface CodecSettings {
    /**
     * @param source the format read, or null for {@code cdc_encode}
     * @param target the format written, or null for {@code cdc_decode}
     * @param options the call's options map, as a JSON object of strings
     * @return a JSON object {@code {"decoder": settings, "encoder": settings}}, each null where that format has no
     *     Java codec for these options (the settings as {@link Functions} takes them), or null where the options are
     *     not valid, for the Arrow path to say why
     */
    String settings(String source, String target, String options);
}
