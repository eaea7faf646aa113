package cdcformats.spark.jvm;

import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;

import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.util.MapData;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StringType$;
import org.apache.spark.unsafe.types.UTF8String;
import scala.Function1;
import scala.Option;
import scala.collection.immutable.Seq;
import scala.runtime.AbstractFunction1;

/**
 * Registers the SQL functions so that a call the JVM can run becomes a JVM expression: {@code cdc_decode} with a
 * literal format that has a JVM decoder ({@link DecodeExpression}), {@code cdc_encode} with a literal format that has
 * a JVM encoder ({@link EncodeExpression}), {@code cdc_convert} with both; each only with no options, or a literal
 * map of {@code errors} alone. Every other call is built by the Arrow UDF registered under another name, exactly as
 * if that UDF were the function. The choice is made when the call is resolved, so the plan holds one or the other,
 * never both.
 */
public final class Functions {
    private Functions() {
    }

    /**
     * @param decoders format name to its decoder's settings, the class name under the key "class"
     * @param errors the error mode of a call that gives none
     */
    public static void registerDecode(SparkSession session, String name, String arrowFunction,
                                      Map<String, Map<String, String>> decoders, String errors, String eventDdl) {
        Map<String, Map<String, String>> known = new HashMap<>(decoders);
        register(session, name, arrowFunction, arguments -> inJvm(arguments, known, errors, eventDdl));
    }

    /**
     * Registers {@code name} ({@code cdc_encode} or {@code cdc_encode_or_error}) so that a call whose format is a
     * literal with a JVM encoder, whose event is of the canonical event's type and whose options, if any, are a literal
     * map of an {@code errors} mode this form takes, becomes an {@link EncodeExpression}; every other call is built by
     * the Arrow UDF {@code arrowFunction}.
     *
     * @param encoders format name to its encoder's settings, the class name under the key "class" and the bytes each
     *     message starts with, in hex, under "prefix"
     * @param resultDdl the result type of an {@code _or_error} form, or null for the binary form
     */
    public static void registerEncode(SparkSession session, String name, String arrowFunction,
                                      Map<String, Map<String, String>> encoders, String errors, String resultDdl,
                                      String eventDdl) {
        Map<String, Map<String, String>> known = new HashMap<>(encoders);
        String eventType = DataType.fromDDL(eventDdl).catalogString();
        register(session, name, arrowFunction, arguments -> {
            if (arguments.size() < 2 || arguments.size() > 3) {
                return null;
            }
            Expression event = arguments.apply(1);
            // the type of every EVENT column, whatever the nullability of its fields (read from Parquet, say)
            if (!event.resolved() || !event.dataType().catalogString().equals(eventType)) {
                return null;
            }
            String mode = errorsOf(arguments, 2, errors, resultDdl);
            Map<String, String> settings = literal(arguments.apply(0), known);
            return mode == null || settings == null ? null : encode(event, literalText(arguments.apply(0)), settings,
                mode, resultDdl);
        });
    }

    /**
     * Registers {@code name} ({@code cdc_convert} or {@code cdc_convert_or_error}) so that a call whose source has a
     * JVM decoder and whose target has a JVM encoder, both literals, becomes an {@link EncodeExpression} over a
     * {@link DecodeExpression} that keeps each unreadable message as a dead letter for it; every other call is built
     * by the Arrow UDF {@code arrowFunction}.
     */
    public static void registerConvert(SparkSession session, String name, String arrowFunction,
                                       Map<String, Map<String, String>> decoders,
                                       Map<String, Map<String, String>> encoders, String errors, String resultDdl,
                                       String eventDdl) {
        Map<String, Map<String, String>> knownDecoders = new HashMap<>(decoders);
        Map<String, Map<String, String>> knownEncoders = new HashMap<>(encoders);
        register(session, name, arrowFunction, arguments -> {
            if (arguments.size() < 3 || arguments.size() > 4) {
                return null;
            }
            Expression value = arguments.apply(0);
            if (!value.resolved() || !(value.dataType() instanceof BinaryType
                    || value.dataType() instanceof StringType)) {
                return null;
            }
            String mode = errorsOf(arguments, 3, errors, resultDdl);
            Map<String, String> decoder = literal(arguments.apply(1), knownDecoders);
            Map<String, String> encoder = literal(arguments.apply(2), knownEncoders);
            if (mode == null || decoder == null || encoder == null) {
                return null;
            }
            Map<String, String> decoderSettings = new HashMap<>(decoder);
            String decoderClass = decoderSettings.remove("class");
            Expression decoded = new DecodeExpression(value, literalText(arguments.apply(1)), decoderClass,
                decoderSettings, "dead-letter", eventDdl);
            return encode(decoded, literalText(arguments.apply(2)), encoder, mode, resultDdl);
        });
    }

    private static Expression encode(Expression event, String format, Map<String, String> encoder, String errors,
                                     String resultDdl) {
        Map<String, String> settings = new HashMap<>(encoder);
        String encoderClass = settings.remove("class");
        byte[] prefix = HexFormat.of().parseHex(settings.remove("prefix"));
        return new EncodeExpression(event, format, encoderClass, settings, prefix, errors, resultDdl);
    }

    /** The settings of a literal format among {@code known}, or null. */
    private static Map<String, String> literal(Expression format, Map<String, Map<String, String>> known) {
        String name = literalText(format);
        return name == null ? null : known.get(name);
    }

    private static String literalText(Expression expression) {
        if (!expression.resolved() || !expression.foldable() || !(expression.dataType() instanceof StringType)) {
            return null;
        }
        Object text = expression.eval(null);
        return text == null ? null : text.toString();
    }

    /**
     * The error mode of a call whose options argument, at {@code ordinal} if given, is a literal map of {@code
     * errors} alone; null where the JVM does not take the call: other options, or a dead-letter mode for a binary
     * result, which the Arrow UDF refuses with its own error.
     */
    private static String errorsOf(Seq<Expression> arguments, int ordinal, String defaultErrors, String resultDdl) {
        String errors = arguments.size() > ordinal ? errorsOption(arguments.apply(ordinal), defaultErrors)
            : defaultErrors;
        return errors == null || resultDdl == null && errors.equals("dead-letter") ? null : errors;
    }

    /** Registers {@code name} as the JVM expression {@code inJvm} builds, or else as the Arrow UDF's call. */
    private static void register(SparkSession session, String name, String arrowFunction,
                                 java.util.function.Function<Seq<Expression>, Expression> inJvm) {
        FunctionRegistry registry = session.sessionState().functionRegistry();
        Function1<Seq<Expression>, Expression> builder = new AbstractFunction1<>() {
            @Override
            public Expression apply(Seq<Expression> arguments) {
                Expression jvm = inJvm.apply(arguments);
                if (jvm != null) {
                    return jvm;
                }
                Option<Function1<Seq<Expression>, Expression>> arrow = arrowBuilder(registry, arrowFunction);
                if (arrow.isEmpty()) {
                    throw new IllegalStateException(name + ": the Arrow function " + arrowFunction
                        + " is not registered; call cdcformats.spark.register(spark) again");
                }
                return arrow.get().apply(arguments);
            }
        };
        registry.createOrReplaceTempFunction(name, builder, "java_udf");
    }

    /** The builder of a temporary function, however this Spark version qualifies the names of those. */
    private static Option<Function1<Seq<Expression>, Expression>> arrowBuilder(FunctionRegistry registry,
                                                                                String name) {
        scala.collection.Iterator<FunctionIdentifier> functions = registry.listFunction().iterator();
        while (functions.hasNext()) {
            FunctionIdentifier function = functions.next();
            if (function.funcName().equals(name)) {
                return registry.lookupFunctionBuilder(function);
            }
        }
        return Option.empty();
    }

    private static Expression inJvm(Seq<Expression> arguments, Map<String, Map<String, String>> decoders,
                                    String defaultErrors, String eventDdl) {
        if (arguments.size() < 2 || arguments.size() > 3) {
            return null;
        }
        Expression format = arguments.apply(0);
        Expression value = arguments.apply(1);
        if (!format.resolved() || !value.resolved() || !format.foldable()
                || !(format.dataType() instanceof StringType)
                || !(value.dataType() instanceof BinaryType || value.dataType() instanceof StringType)) {
            return null;
        }
        Object name = format.eval(null);
        Map<String, String> settings = name == null ? null : decoders.get(name.toString());
        if (settings == null) {
            return null;
        }
        String errors = defaultErrors;
        if (arguments.size() == 3) {
            errors = errorsOption(arguments.apply(2), defaultErrors);
            if (errors == null) {
                return null;
            }
        }
        Map<String, String> decoderSettings = new HashMap<>(settings);
        String decoderClass = decoderSettings.remove("class");
        return new DecodeExpression(value, name.toString(), decoderClass, decoderSettings, errors, eventDdl);
    }

    /** The error mode of a literal options map that holds nothing else, or null. */
    private static String errorsOption(Expression options, String defaultErrors) {
        if (!options.resolved() || !options.foldable() || !(options.dataType() instanceof MapType)) {
            return null;
        }
        MapData map = (MapData) options.eval(null);
        if (map == null) {
            return defaultErrors;
        }
        String errors = defaultErrors;
        for (int i = 0; i < map.numElements(); i++) {
            Object key = map.keyArray().get(i, StringType$.MODULE$);
            Object mode = map.valueArray().get(i, StringType$.MODULE$);
            if (!(key instanceof UTF8String) || !key.toString().equals("errors") || !(mode instanceof UTF8String)) {
                return null;
            }
            errors = mode.toString();
        }
        return errors.equals("fail") || errors.equals("null") || errors.equals("dead-letter") ? errors : null;
    }
}
