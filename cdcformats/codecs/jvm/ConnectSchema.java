package cdcformats.codecs.jvm;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * {@code _kit/connect_schema.py}'s reading half for the JVM decoders: a JSON value read through its Kafka Connect
 * field schema, and the type name its cell gets (see that module for the rules). Values are as {@link Events} takes
 * them.
 */
public final class ConnectSchema {
    private ConnectSchema() {
    }

    static final String DECIMAL = "org.apache.kafka.connect.data.Decimal";
    private static final String SOURCE_TYPE = "__debezium.source.column.type";
    private static final Map<String, String> PRIMITIVE_OF = Map.ofEntries(
        Map.entry("boolean", "boolean"), Map.entry("int8", "int8"), Map.entry("int16", "int16"),
        Map.entry("int32", "int32"), Map.entry("int64", "int64"), Map.entry("float", "float"),
        Map.entry("double", "double"), Map.entry("string", "string"), Map.entry("bytes", "bytes"),
        Map.entry(DECIMAL, "bytes"), Map.entry("org.apache.kafka.connect.data.Date", "int32"),
        Map.entry("org.apache.kafka.connect.data.Time", "int32"),
        Map.entry("org.apache.kafka.connect.data.Timestamp", "int64"));
    private static final Map<String, Integer> INT_BITS = Map.of("int8", 8, "int16", 16, "int32", 32, "int64", 64);
    private static final Map<String, String> SQL_TYPES = Map.ofEntries(
        Map.entry("TINYINT", "int8"), Map.entry("SMALLINT", "int16"), Map.entry("INT", "int32"),
        Map.entry("INTEGER", "int32"), Map.entry("BIGINT", "int64"), Map.entry("LONG", "int64"),
        Map.entry("FLOAT", "float"), Map.entry("REAL", "float"), Map.entry("DOUBLE", "double"),
        Map.entry("BOOLEAN", "boolean"), Map.entry("BOOL", "boolean"), Map.entry("DECIMAL", DECIMAL),
        Map.entry("NUMERIC", DECIMAL), Map.entry("VARCHAR", "string"), Map.entry("CHAR", "string"),
        Map.entry("TEXT", "string"), Map.entry("BINARY", "bytes"), Map.entry("VARBINARY", "bytes"));
    private static final Pattern SCALE = Pattern.compile("-?[0-9]{1,10}");
    // What base64.b64decode(validate=True) takes: the alphabet, whole quads, padding only at the end.
    private static final Pattern BASE64 =
        Pattern.compile("([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?");

    /** A read value and its cell's type name. */
    public static final class Read {
        public final Object value;
        public final String typeName;

        Read(Object value, String typeName) {
            this.value = value;
            this.typeName = typeName;
        }
    }

    /** {@code read_value}: a JSON value read through its field schema. */
    public static Read readValue(Object value, Map<?, ?> field, String path) throws DecodeException {
        Object primitive = field.get("type");
        Object name = field.get("name");
        if (!(primitive instanceof String) || (!Json.isNull(name) && !(name instanceof String))) {
            throw new DecodeException("a field schema's type and name are text", path);
        }
        String kind = name instanceof String && primitive.equals(PRIMITIVE_OF.get(name)) ? (String) name : (String) primitive;
        if (!PRIMITIVE_OF.containsKey(kind)) {
            throw new DecodeException(primitive.equals("struct") || primitive.equals("array") || primitive.equals("map")
                ? "nested values are not carried" : "unknown Connect type " + Python.repr(primitive), path);
        }
        Object parametersField = field.get("parameters");
        Map<?, ?> parameters = Python.isTruthy(parametersField) ? null : Map.of();
        if (parameters == null) {
            if (!(parametersField instanceof Map)) {
                throw new DecodeException("schema parameters must be text", path);
            }
            parameters = (Map<?, ?>) parametersField;
            for (Object text : parameters.values()) {
                if (!(text instanceof String)) {
                    throw new DecodeException("schema parameters must be text", path);
                }
            }
        }
        Object result = Json.isNull(value) ? null : typed(value, kind, parameters, path);
        String typeName = parameters.containsKey(SOURCE_TYPE) ? (String) parameters.get(SOURCE_TYPE)
            : impliedType(kind, result);
        Map<Object, Object> given = new LinkedHashMap<>(field);
        given.remove("field");
        Map<Object, Object> expected = new LinkedHashMap<>(given);
        expected.put("field", "");
        if (!Python.equal(generatedSchema(result, typeName), expected)) {
            typeName = Json.write(given); // the schema is more than its type: the cell keeps all of it
        }
        return new Read(result, typeName);
    }

    private static Object typed(Object value, String kind, Map<?, ?> parameters, String path)
            throws DecodeException {
        String primitive = PRIMITIVE_OF.get(kind);
        if (INT_BITS.containsKey(primitive)) {
            if (!fits(value, primitive)) {
                throw refuse("an integer of " + INT_BITS.get(primitive) + " bits", kind, value, path);
            }
            return value;
        }
        if (primitive.equals("float") || primitive.equals("double")) {
            if ("NaN".equals(value)) {
                return Double.NaN;
            }
            if ("Infinity".equals(value)) {
                return Double.POSITIVE_INFINITY;
            }
            if ("-Infinity".equals(value)) {
                return Double.NEGATIVE_INFINITY;
            }
            double number;
            if (value instanceof Double) {
                number = (Double) value;
            } else if (value instanceof Long) {
                number = (double) (Long) value;
            } else if (value instanceof BigInteger) {
                number = ((BigInteger) value).doubleValue();
                if (Double.isInfinite(number)) {
                    throw refuse("a number within a double's range", kind, value, path);
                }
            } else {
                throw refuse("a number", kind, value, path);
            }
            return primitive.equals("float") ? float32(number) : number;
        }
        if (primitive.equals("boolean")) {
            if (!(value instanceof Boolean)) {
                throw refuse("a boolean", kind, value, path);
            }
            return value;
        }
        if (primitive.equals("string")) {
            if (!(value instanceof String)) {
                throw refuse("text", kind, value, path);
            }
            return value;
        }
        if (!(value instanceof String)) {
            throw refuse("base64 text", kind, value, path);
        }
        if (!BASE64.matcher((String) value).matches()) {
            throw new DecodeException("not base64 text", path);
        }
        byte[] data = Base64.getDecoder().decode((String) value);
        if (!kind.equals(DECIMAL)) {
            return data;
        }
        Object scale = parameters.get("scale");
        if (!(scale instanceof String) || !SCALE.matcher((String) scale).matches()
                || Math.abs(Long.parseLong((String) scale)) > Integer.MAX_VALUE || data.length == 0) {
            throw new DecodeException("a Decimal needs its unscaled bytes and its scale as a parameter, got scale "
                + Python.repr(scale), path);
        }
        return new TypedText.DecimalText(new BigDecimal(new BigInteger(data), Integer.parseInt((String) scale))
            .toString());
    }

    private static DecodeException refuse(String expected, String kind, Object value, String path) {
        return new DecodeException("expected " + expected + " for a " + kind + " field, got " + Json.typeName(value),
            path);
    }

    /** {@code _fits}: whether a value is written as {@code kind} and read back unchanged. */
    private static boolean fits(Object value, String kind) {
        if (value == null) {
            return true;
        }
        String primitive = PRIMITIVE_OF.get(kind);
        if (INT_BITS.containsKey(primitive)) {
            if (!(value instanceof Long)) {
                return false;
            }
            int bits = INT_BITS.get(primitive);
            long number = (Long) value;
            return bits == 64 || (number >= -(1L << (bits - 1)) && number < (1L << (bits - 1)));
        }
        if (kind.equals("float")) {
            return value instanceof Double && (!Double.isFinite((Double) value) || float32((Double) value) == (Double) value);
        }
        return defaultOfKind(value).equals(kind);
    }

    private static String defaultOfKind(Object value) {
        if (value == null) {
            return "string";
        }
        if (value instanceof Boolean) {
            return "boolean";
        }
        if (value instanceof Long) {
            return "int64";
        }
        if (value instanceof Double) {
            return "double";
        }
        if (value instanceof String) {
            return "string";
        }
        if (value instanceof byte[]) {
            return "bytes";
        }
        return DECIMAL;
    }

    private static String impliedType(String kind, Object value) {
        return kind.equals(defaultOfKind(value)) ? null : kind;
    }

    private static String sqlType(String typeName) {
        if (typeName == null || typeName.isEmpty()) {
            return null;
        }
        int parenthesis = typeName.indexOf('(');
        return SQL_TYPES.get(TypedText.pythonStrip(parenthesis < 0 ? typeName : typeName.substring(0, parenthesis))
            .toUpperCase(Locale.ROOT));
    }

    /** {@code generated_schema} of a cell named "": the field schema generated from its value and type name. */
    private static Map<Object, Object> generatedSchema(Object value, String typeName) {
        String wanted = typeName != null && PRIMITIVE_OF.containsKey(typeName) ? typeName : sqlType(typeName);
        String kind = wanted != null && fits(value, wanted) ? wanted : defaultOfKind(value);
        Map<Object, Object> schema = new LinkedHashMap<>();
        schema.put("type", PRIMITIVE_OF.get(kind));
        schema.put("optional", value == null);
        Map<Object, Object> parameters = new LinkedHashMap<>();
        if (!kind.equals(PRIMITIVE_OF.get(kind))) {
            schema.put("name", kind);
            schema.put("version", 1L);
            if (kind.equals(DECIMAL)) {
                parameters.put("scale",
                    value == null ? "0" : String.valueOf(scale(((TypedText.DecimalText) value).text)));
            }
        }
        if (typeName != null && !typeName.equals(impliedType(kind, value))) {
            parameters.put(SOURCE_TYPE, typeName);
        }
        if (!parameters.isEmpty()) {
            schema.put("parameters", parameters);
        }
        schema.put("field", "");
        return schema;
    }

    /**
     * {@code -_exponent}: the scale of a finite decimal's text, read off the text, since BigDecimal refuses the text
     * of a scale near the 32-bit limit with more than one digit ("1.23E+2147483649").
     */
    private static long scale(String text) {
        int exponentAt = text.indexOf('E');
        String digits = exponentAt < 0 ? text : text.substring(0, exponentAt);
        long exponent = exponentAt < 0 ? 0 : Long.parseLong(text.substring(exponentAt + 1));
        int point = digits.indexOf('.');
        return (point < 0 ? 0 : digits.length() - point - 1) - exponent;
    }

    /** {@code _float32}: a double as a Connect float holds it, the double of the shortest text of its single. */
    static double float32(double value) {
        float single = (float) value;
        if (!Float.isFinite(single) || single == 0) {
            return single;
        }
        BigDecimal exact = new BigDecimal((double) single);
        for (int digits = 1; digits < 10; digits++) {
            double shortest = exact.round(new MathContext(digits, RoundingMode.HALF_EVEN)).doubleValue();
            if ((float) shortest == single) {
                return shortest;
            }
        }
        return single;
    }

    /** The struct-schema check of {@code column_schemas}: the field schemas of before and after, by column name. */
    public static Map<String, Map<String, Map<?, ?>>> columnSchemas(Object schema) throws DecodeException {
        if (!(schema instanceof Map) || !(((Map<?, ?>) schema).get("fields") instanceof List)) {
            throw new DecodeException("expected a struct schema with fields", "schema");
        }
        Map<String, Map<String, Map<?, ?>>> columns = new LinkedHashMap<>();
        for (Object image : (List<?>) ((Map<?, ?>) schema).get("fields")) {
            if (!(image instanceof Map)) {
                continue;
            }
            Object imageName = ((Map<?, ?>) image).get("field");
            Object fields = ((Map<?, ?>) image).get("fields");
            if (("before".equals(imageName) || "after".equals(imageName)) && fields instanceof List) {
                Map<String, Map<?, ?>> byName = new LinkedHashMap<>();
                for (Object column : (List<?>) fields) {
                    if (column instanceof Map && ((Map<?, ?>) column).get("field") instanceof String) {
                        byName.put((String) ((Map<?, ?>) column).get("field"), (Map<?, ?>) column);
                    }
                }
                columns.put((String) imageName, byName);
            }
        }
        return columns;
    }
}
