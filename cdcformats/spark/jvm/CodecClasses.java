package cdcformats.spark.jvm;

import java.lang.reflect.InvocationTargetException;
import java.util.Map;
import java.util.TreeMap;

import cdcformats.jvm.encoders.MessageEncoder;
import cdcformats.jvm.encoders.Strict;

/** A Java codec of the jar, built by its class name from the settings its Python codec gives. */
final class CodecClasses {
    private CodecClasses() {
    }

    /**
     * The encoder of {@code format}: of {@code className}, built from {@code settings}, and checking each event as
     * the option {@code strict} does where the setting {@code strict} is {@code true} (which Python adds to the
     * codec's own settings for a call under {@code strict}).
     */
    static MessageEncoder encoder(String className, Map<String, String> settings, String format) {
        Map<String, String> own = new TreeMap<>(settings);
        boolean strict = Boolean.parseBoolean(own.remove("strict"));
        MessageEncoder encoder = instance(MessageEncoder.class, className, own, format, "JVM encoder");
        return strict ? Strict.checking(encoder, format) : encoder;
    }

    /** @param what what the instance is, for errors: "JVM decoder", "JVM encoder" */
    static <T> T instance(Class<T> type, String className, Map<String, String> settings, String format, String what) {
        try {
            return type.cast(Class.forName(className).getConstructor(Map.class).newInstance(settings));
        } catch (InvocationTargetException error) {
            throw new IllegalStateException(format + ": bad " + what + " settings " + settings, error.getCause());
        } catch (ReflectiveOperationException error) {
            throw new IllegalStateException(format + ": no " + what + " " + className, error);
        }
    }
}
