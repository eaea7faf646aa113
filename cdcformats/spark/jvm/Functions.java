package cdcformats.spark.jvm;

import java.util.HashMap;
import java.util.Map;

import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.analysis.FunctionRegistry;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.util.MapData;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StringType$;
import org.apache.spark.unsafe.types.UTF8String;
import scala.Function1;
import scala.Option;
import scala.collection.immutable.Seq;
import scala.runtime.AbstractFunction1;

/**
 * Registers {@code cdc_decode} so that a call whose format is a literal with a JVM decoder (and whose options, if
 * any, are a literal map of {@code errors} alone) becomes a {@link DecodeExpression}; every other call is built by
 * the Arrow UDF registered under another name, exactly as if that UDF were {@code cdc_decode}. The choice is made
 * when the call is resolved, so the plan holds one or the other, never both.
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
        FunctionRegistry registry = session.sessionState().functionRegistry();
        Map<String, Map<String, String>> known = new HashMap<>(decoders);
        Function1<Seq<Expression>, Expression> builder = new AbstractFunction1<>() {
            @Override
            public Expression apply(Seq<Expression> arguments) {
                Expression jvm = inJvm(arguments, known, errors, eventDdl);
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
