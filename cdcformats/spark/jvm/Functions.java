package cdcformats.spark.jvm;

import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import cdcformats.jvm.decoders.DecodeException;
import cdcformats.jvm.decoders.Json;
import cdcformats.jvm.encoders.RecordEncoder;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.util.MapData;
import org.apache.spark.sql.classic.SparkSession;
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
 * a JVM encoder ({@link EncodeExpression}), {@code cdc_convert} with both. Options, if given, must be a literal map:
 * one of {@code errors} alone runs with the codecs {@code register} set up; any other is read by Python
 * ({@link CodecSettings}), which gives the Java codecs' settings for it, or none. Every other call is built by the
 * Arrow UDF registered under another name, exactly as if that UDF were the function. The choice is made when the call
 * is resolved, so the plan holds one or the other, never both.
 */
public final class Functions {
    private Functions() {
    }

    private static final Set<String> ERROR_MODES = Set.of("fail", "null", "dead-letter");

    /**
     * @param decoders format name to its decoder's settings, the class name under the key "class"
     * @param errors the error mode of a call that gives none
     * @param settings what Python says of other options maps, or null to leave them to the Arrow UDF
     */
    public static void registerDecode(SparkSession session, String name, String arrowFunction,
                                      Map<String, Map<String, String>> decoders, String errors, String eventDdl,
                                      CodecSettings settings) {
        Codecs codecs = new Codecs(decoders, Map.of(), settings);
        register(session, name, arrowFunction, arguments -> {
            if (arguments.size() < 2 || arguments.size() > 3 || !arguments.apply(1).resolved()) {
                return null;
            }
            String format = literalText(arguments.apply(0));
            Call call = format == null ? null : codecs.call(format, null, arguments, 2, errors, true);
            return call == null || !call.reads(arguments.apply(1)) ? null
                : call.decode(arguments.apply(1), format, eventDdl);
        });
    }

    /**
     * Registers {@code name} ({@code cdc_encode} or {@code cdc_encode_or_error}) so that a call whose format is a
     * literal with a JVM encoder and whose event is of the canonical event's type becomes an {@link EncodeExpression}.
     *
     * @param encoders format name to its encoder's settings, the class name under the key "class" and the bytes each
     *     message starts with, in hex, under "prefix"
     * @param resultDdl the result type of an {@code _or_error} form, or null for the binary form
     */
    public static void registerEncode(SparkSession session, String name, String arrowFunction,
                                      Map<String, Map<String, String>> encoders, String errors, String resultDdl,
                                      String eventDdl, CodecSettings settings) {
        Codecs codecs = new Codecs(Map.of(), encoders, settings);
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
            String format = literalText(arguments.apply(0));
            Call call = format == null ? null : codecs.call(null, format, arguments, 2, errors, resultDdl != null);
            return call == null || !call.writesInto(resultDdl) ? null : call.encode(event, format, resultDdl);
        });
    }

    /**
     * Registers {@code name} ({@code cdc_convert} or {@code cdc_convert_or_error}) so that a call whose source has a
     * JVM decoder and whose target has a JVM encoder, both literals, becomes a {@link ConvertExpression}.
     */
    public static void registerConvert(SparkSession session, String name, String arrowFunction,
                                       Map<String, Map<String, String>> decoders,
                                       Map<String, Map<String, String>> encoders, String errors, String resultDdl,
                                       CodecSettings settings) {
        Codecs codecs = new Codecs(decoders, encoders, settings);
        register(session, name, arrowFunction, arguments -> {
            if (arguments.size() < 3 || arguments.size() > 4 || !arguments.apply(0).resolved()) {
                return null;
            }
            String source = literalText(arguments.apply(1));
            String target = literalText(arguments.apply(2));
            Call call = source == null || target == null ? null
                : codecs.call(source, target, arguments, 3, errors, resultDdl != null);
            return call == null || !call.reads(arguments.apply(0)) || !call.writesInto(resultDdl) ? null
                : call.convert(arguments.apply(0), source, target, resultDdl);
        });
    }

    /** The Java codecs of a call and its error mode. */
    private record Call(Map<String, String> decoder, Map<String, String> encoder, String errors) {
        /** Whether the decoder reads what {@code value} holds: messages, or Kafka records as a struct of them. */
        boolean reads(Expression value) {
            return EventReader.reads(decoder.get("class"), value.dataType());
        }

        /**
         * Whether the encoder's messages fit the result: a Kafka record's key has a place only in an {@code _or_error}
         * form's (the Arrow UDF refuses the binary forms for them, saying so).
         */
        boolean writesInto(String resultDdl) {
            return resultDdl != null || !CodecClasses.implementing(RecordEncoder.class, encoder.get("class"));
        }

        Expression decode(Expression value, String format, String eventDdl) {
            Map<String, String> settings = new HashMap<>(decoder);
            String decoderClass = settings.remove("class");
            return new DecodeExpression(value, format, decoderClass, settings, errors, eventDdl);
        }

        Expression encode(Expression event, String format, String resultDdl) {
            Map<String, String> settings = new HashMap<>(encoder);
            String encoderClass = settings.remove("class");
            return new EncodeExpression(event, format, encoderClass, settings, results(settings, resultDdl));
        }

        Expression convert(Expression value, String source, String target, String resultDdl) {
            Map<String, String> decoderSettings = new HashMap<>(decoder);
            String decoderClass = decoderSettings.remove("class");
            Map<String, String> encoderSettings = new HashMap<>(encoder);
            String encoderClass = encoderSettings.remove("class");
            return new ConvertExpression(value, source, decoderClass, decoderSettings, target, encoderClass,
                encoderSettings, results(encoderSettings, resultDdl));
        }

        /** What the call's rows give, with the prefix its encoder's settings hold (taken out of them). */
        private WrittenRows results(Map<String, String> encoderSettings, String resultDdl) {
            return new WrittenRows(HexFormat.of().parseHex(encoderSettings.remove("prefix")), errors, resultDdl);
        }
    }

    /** The codecs register set up, and Python for calls with other options. */
    private record Codecs(Map<String, Map<String, String>> decoders, Map<String, Map<String, String>> encoders,
                          CodecSettings settings) {
        Codecs {
            decoders = new HashMap<>(decoders);
            encoders = new HashMap<>(encoders);
        }

        /**
         * The Java codecs that run a call reading {@code source} and writing {@code target} (either null where the
         * function does not), with the options at {@code ordinal} if given; null where the call needs the Arrow UDF:
         * a format with no Java codec for the options, options that are not a literal map, or a dead-letter mode for
         * a result that cannot hold one (which the Arrow UDF refuses with its own error).
         */
        Call call(String source, String target, Seq<Expression> arguments, int ordinal, String defaultErrors,
                  boolean keepsErrors) {
            Map<String, String> options = arguments.size() > ordinal ? literalMap(arguments.apply(ordinal)) : Map.of();
            if (options == null) {
                return null;
            }
            String errors = options.getOrDefault("errors", defaultErrors);
            if (!ERROR_MODES.contains(errors) || !keepsErrors && errors.equals("dead-letter")) {
                return null;
            }
            Map<String, String> decoder = source == null ? Map.of() : decoders.get(source);
            Map<String, String> encoder = target == null ? Map.of() : encoders.get(target);
            // Python is asked for options other than errors, and for a format register left out: one without a Java
            // codec, or an envelope, whose framing (its schema id) is resolved once per query, not at registration.
            boolean otherOptions = options.keySet().stream().anyMatch(name -> !name.equals("errors"));
            if (decoder == null || encoder == null || otherOptions) {
                if (settings == null) {
                    return null;
                }
                Map<?, ?> given = told(settings.settings(source, target, Json.write(options)));
                if (given == null) {
                    return null;
                }
                decoder = source == null ? Map.of() : strings(given.get("decoder"));
                encoder = target == null ? Map.of() : strings(given.get("encoder"));
            }
            return decoder == null || encoder == null ? null : new Call(decoder, encoder, errors);
        }
    }

    private static Map<?, ?> told(String json) {
        if (json == null) {
            return null;
        }
        try {
            return (Map<?, ?>) Json.parse(json.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (DecodeException error) {
            throw new IllegalStateException("cdcformats: settings that are not JSON: " + json, error);
        }
    }

    /** A JSON object of strings as a map, or null for JSON's null. */
    private static Map<String, String> strings(Object object) {
        if (!(object instanceof Map)) {
            return null;
        }
        Map<String, String> strings = new HashMap<>();
        ((Map<?, ?>) object).forEach((name, value) -> strings.put((String) name, (String) value));
        return strings;
    }

    private static String literalText(Expression expression) {
        if (!expression.resolved() || !expression.foldable() || !(expression.dataType() instanceof StringType)) {
            return null;
        }
        Object text = expression.eval(null);
        return text == null ? null : text.toString();
    }

    /** A literal map of strings (empty for a null map), or null for anything else. */
    private static Map<String, String> literalMap(Expression options) {
        if (!options.resolved() || !options.foldable() || !(options.dataType() instanceof MapType)) {
            return null;
        }
        MapData map = (MapData) options.eval(null);
        Map<String, String> entries = new LinkedHashMap<>();
        for (int i = 0; map != null && i < map.numElements(); i++) {
            Object key = map.keyArray().get(i, StringType$.MODULE$);
            Object value = map.valueArray().get(i, StringType$.MODULE$);
            if (!(key instanceof UTF8String) || !(value instanceof UTF8String)) {
                return null;
            }
            entries.put(key.toString(), value.toString());
        }
        return entries;
    }

    /** Registers {@code name} as the JVM expression {@code inJvm} builds, or else as the Arrow UDF's call. */
    private static void register(SparkSession session, String name, String arrowFunction,
                                 Function<Seq<Expression>, Expression> inJvm) {
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
}
