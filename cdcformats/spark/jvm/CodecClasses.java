package cdcformats.spark.jvm;

import java.lang.reflect.InvocationTargetException;
import java.util.Map;

/** A Java codec of the jar, built by its class name from the settings its Python codec gives. */
final class CodecClasses {
    private CodecClasses() {
    }


    /** Whether the class {@code className} of the jar implements {@code type}. */
    static boolean implementing(Class<?> type, String className) {
        try {
            return type.isAssignableFrom(Class.forName(className));
        } catch (ClassNotFoundException error) {
            return false;
        }
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
