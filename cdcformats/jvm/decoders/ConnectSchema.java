package cdcformats.jvm.decoders;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * {@code _kit/connect_schema.py}'s reading half for the JVM decoders: a JSON value read through its Kafka Connect
 * field schema, and the type name its cell gets (see that module for the rules), whether a JSON value agrees with a
 * schema ({@link #holds}), and the schemas generated for values that both halves compare with what a message has
 * (the writing half, for the encoders, is {@code cdcformats.jvm.encoders.ConnectSchemas}). Values are as
 * {@link Events} takes them.
 */
public final class ConnectSchema {
    private ConnectSchema() {
    }

    public static final String DECIMAL = "org.apache.kafka.connect.data.Decimal";
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
    // _DEFAULT_OF_KIND by a value's class (each final, so its class is its kind); any other value is a decimal.
    private static final Map<Class<?>, String> DEFAULT_OF_KIND = Map.of(Boolean.class, "boolean", Long.class, "int64",
        Double.class, "double", String.class, "string", byte[].class, "bytes");

    /** A read value and its cell's type name. */
    public static final class Read {
        public final Object value;
        public final String typeName;

        Read(Object value, String typeName) {
            this.value = value;
            this.typeName = typeName;
        }
    }

    /**
     * {@code kept_schema}: the field schema a cell's type keeps, a type that is a JSON object with a text
     * {@code type} and no {@code field}; null for any other type name.
     */
    static Map<?, ?> keptSchema(String typeName) {
        if (typeName == null || !typeName.startsWith("{")) {
            return null;
        }
        Object schema;
        try {
            schema = Json.parse(typeName.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } catch (DecodeException error) {
            return null;
        }
        return schema instanceof Map && ((Map<?, ?>) schema).get("type") instanceof String
            && !((Map<?, ?>) schema).containsKey("field") ? (Map<?, ?>) schema : null;
    }

    /**
     * {@code json_value}: a change-event value as JsonConverter writes it: bytes as base64, a decimal as the base64 of
     * its unscaled value's big-endian two's complement (a Connect Decimal's bytes), NaN and the infinities as Jackson's
     * text, nested values member by member.
     */
    public static Object jsonValue(Object value) {
        if (value instanceof byte[]) {
            return Base64.getEncoder().encodeToString((byte[]) value);
        }
        if (value instanceof TypedText.DecimalText) {
            return Base64.getEncoder().encodeToString(unscaled(((TypedText.DecimalText) value).text).toByteArray());
        }
        if (value instanceof Double && !Double.isFinite((Double) value)) {
            double number = (Double) value;
            return Double.isNaN(number) ? "NaN" : number > 0 ? "Infinity" : "-Infinity";
        }
        if (value instanceof List) {
            List<Object> items = new ArrayList<>();
            for (Object item : (List<?>) value) {
                items.add(jsonValue(item));
            }
            return items;
        }
        if (value instanceof Map) {
            Map<Object, Object> members = new LinkedHashMap<>();
            for (Map.Entry<?, ?> member : ((Map<?, ?>) value).entrySet()) {
                members.put(member.getKey(), jsonValue(member.getValue()));
            }
            return members;
        }
        return value;
    }

    /**
     * The unscaled value of a decimal's text as {@code json_value} makes it from Python's {@code Decimal.as_tuple()}:
     * its digits with its sign; an infinity's digits are 0, a NaN's its payload. A NaN without a payload has no digits
     * (where Python's {@code int("")} fails): {@link IllegalArgumentException}.
     */
    private static BigInteger unscaled(String text) {
        boolean negative = text.startsWith("-");
        String unsigned = negative ? text.substring(1) : text;
        BigInteger digits;
        if (unsigned.equals("Infinity")) {
            digits = BigInteger.ZERO;
        } else if (unsigned.startsWith("NaN") || unsigned.startsWith("sNaN")) {
            String payload = unsigned.replaceFirst("^s?NaN", "");
            if (payload.isEmpty()) {
                throw new IllegalArgumentException(text + " has no digits, and no Connect Decimal holds it");
            }
            digits = new BigInteger(payload);
        } else { // the coefficient's digits, read off the text: BigDecimal refuses an exponent beyond the 32-bit limit
            int exponentAt = unsigned.indexOf('E');
            digits = new BigInteger((exponentAt < 0 ? unsigned : unsigned.substring(0, exponentAt)).replace(".", ""));
        }
        return negative ? digits.negate() : digits;
    }

    /** A value that disagrees with its schema ({@code _OffType}): it is read as it was sent. */
    private static final class OffType extends Exception {
        private static final long serialVersionUID = 1L;

        OffType() {
            super(null, null, false, false);
        }
    }

    private static final OffType OFF_TYPE = new OffType();
    private static final List<String> NESTED_TYPES = List.of("array", "map", "struct");

    /**
     * {@code read_value}: a JSON value read through its field schema. A value that disagrees with its schema is read
     * as it was sent ({@link Messages#valueOf}), its cell keeping the whole schema as its type.
     */
    public static Read readValue(Object value, Map<?, ?> field, String path) throws DecodeException {
        return readValue(value, field, path, 0);
    }

    /** {@code read_value} at {@code depth} levels of nested values (a member of a nested value). */
    private static Read readValue(Object value, Map<?, ?> field, String path, int depth) throws DecodeException {
        Object primitive = field.get("type");
        Object name = field.get("name");
        if (!(primitive instanceof String) || (!Json.isNull(name) && !(name instanceof String))) {
            throw new DecodeException("a field schema's type and name are text", path);
        }
        String kind = name instanceof String && primitive.equals(PRIMITIVE_OF.get(name)) ? (String) name : (String) primitive;
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
        Map<Object, Object> given = new LinkedHashMap<>(field);
        given.remove("field");
        Object result;
        try {
            result = Json.isNull(value) ? null : typed(value, kind, field, parameters, path, depth);
        } catch (OffType offType) {
            return new Read(Messages.valueOf(value, path, depth), Json.write(given));
        }
        String typeName;
        if (parameters.containsKey(SOURCE_TYPE)) {
            typeName = (String) parameters.get(SOURCE_TYPE);
        } else {
            typeName = NESTED_TYPES.contains(kind) ? null : impliedType(kind, result);
        }
        Map<Object, Object> expected = new LinkedHashMap<>(given);
        expected.put("field", "");
        if ((isNested(result) && nestedSchema(result) == null)
                || !Python.equal(generatedSchema(result, typeName), expected)) {
            typeName = Json.write(given); // the schema is more than its type: the cell keeps all of it
        }
        return new Read(result, typeName);
    }

    static boolean isNested(Object value) {
        return value instanceof List || value instanceof Map;
    }

    /**
     * {@code holds}: whether a JSON value agrees with a field schema, so that a Connect reader reads it through that
     * schema: null only in an optional field; a value of the field's type; a struct's members exactly the fields its
     * schema names, each agreeing with its own; an array's items, a map's keys and values with theirs.
     */
    public static boolean holds(Object schema, Object value) {
        if (!(schema instanceof Map)) {
            return false;
        }
        Map<?, ?> field = (Map<?, ?>) schema;
        if (Json.isNull(value)) {
            return Boolean.TRUE.equals(field.get("optional"));
        }
        Object primitive = field.get("type");
        Object name = field.get("name");
        Object parameters = Python.isTruthy(field.get("parameters")) ? field.get("parameters") : Map.of();
        if (!(primitive instanceof String) || (!Json.isNull(name) && !(name instanceof String))
                || !(parameters instanceof Map)) {
            return false;
        }
        String kind = name instanceof String && primitive.equals(PRIMITIVE_OF.get(name)) ? (String) name : (String) primitive;
        if (kind.equals("string")) {
            return value instanceof String;
        }
        if (INT_BITS.containsKey(kind)) {
            return fits(value, kind);
        }
        if (kind.equals("struct")) {
            Object fields = field.get("fields");
            if (!(value instanceof Map) || !(fields instanceof List)) {
                return false;
            }
            Map<Object, Object> byName = new java.util.HashMap<>();
            for (Object member : (List<?>) fields) {
                if (!(member instanceof Map)) {
                    return false;
                }
                Object memberName = ((Map<?, ?>) member).get("field");
                byName.put(Json.isNull(memberName) ? null : memberName, member);
            }
            Map<?, ?> members = (Map<?, ?>) value;
            if (byName.size() != ((List<?>) fields).size() || !byName.keySet().equals(members.keySet())) {
                return false;
            }
            for (Map.Entry<?, ?> member : members.entrySet()) {
                if (!holds(byName.get(member.getKey()), member.getValue())) {
                    return false;
                }
            }
            return true;
        }
        if (kind.equals("array")) {
            if (!(value instanceof List)) {
                return false;
            }
            for (Object item : (List<?>) value) {
                if (!holds(field.get("items"), item)) {
                    return false;
                }
            }
            return true;
        }
        if (kind.equals("map")) {
            List<List<?>> pairs = new ArrayList<>();
            if (value instanceof Map) {
                for (Map.Entry<?, ?> pair : ((Map<?, ?>) value).entrySet()) {
                    pairs.add(Arrays.asList(pair.getKey(), pair.getValue()));
                }
            } else if (value instanceof List) {
                for (Object pair : (List<?>) value) {
                    if (!(pair instanceof List) || ((List<?>) pair).size() != 2) {
                        return false;
                    }
                    pairs.add((List<?>) pair);
                }
            } else {
                return false;
            }
            for (List<?> pair : pairs) {
                if (!holds(field.get("keys"), pair.get(0)) || !holds(field.get("values"), pair.get(1))) {
                    return false;
                }
            }
            return true;
        }
        for (Object text : ((Map<?, ?>) parameters).values()) {
            if (!(text instanceof String)) {
                return false;
            }
        }
        try {
            typed(value, kind, field, (Map<?, ?>) parameters, "", 0);
        } catch (OffType offType) {
            return false;
        } catch (DecodeException nestedTooDeeply) { // only nested kinds raise it, told apart above
            throw new IllegalStateException(nestedTooDeeply);
        }
        return true;
    }

    /** {@code _member}: a member of a nested value read through its schema. */
    private static Object member(Object value, Object schema, String path, int depth)
            throws DecodeException, OffType {
        if (!(schema instanceof Map)) {
            throw OFF_TYPE;
        }
        return readValue(value, (Map<?, ?>) schema, path, depth).value;
    }

    /**
     * {@code _nested}: an array, a map (an object, or an array of [key, value] pairs) or a struct (its schema's fields
     * in order, then any the payload adds), {@code depth} levels deep.
     */
    private static Object nested(Object value, String kind, Map<?, ?> field, String path, int depth)
            throws DecodeException, OffType {
        if ((value instanceof List || value instanceof Map) && depth == Messages.MAX_NESTING) {
            throw new DecodeException(path + ": nested deeper than " + Messages.MAX_NESTING + " levels", path);
        }
        if (kind.equals("array") && value instanceof List) {
            List<?> items = (List<?>) value;
            List<Object> result = new ArrayList<>(items.size());
            for (int index = 0; index < items.size(); index++) {
                result.add(member(items.get(index), field.get("items"), path + "[" + index + "]", depth + 1));
            }
            return result;
        }
        if (kind.equals("map") && value instanceof Map) {
            Map<String, Object> result = new LinkedHashMap<>();
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                String key = (String) entry.getKey();
                result.put(key, member(entry.getValue(), field.get("values"), path + "." + key, depth + 1));
            }
            return result;
        }
        if (kind.equals("map") && value instanceof List && pairs((List<?>) value)) {
            List<?> pairs = (List<?>) value;
            if (!pairs.isEmpty() && depth + 1 == Messages.MAX_NESTING) { // each pair is a level of its own
                throw new DecodeException(path + "[0]: nested deeper than " + Messages.MAX_NESTING + " levels", path);
            }
            List<Object> result = new ArrayList<>(pairs.size());
            for (int index = 0; index < pairs.size(); index++) {
                List<?> pair = (List<?>) pairs.get(index);
                Object key = member(pair.get(0), field.get("keys"), path + "[" + index + "][0]", depth + 2);
                Object item = member(pair.get(1), field.get("values"), path + "[" + index + "][1]", depth + 2);
                result.add(new ArrayList<>(Arrays.asList(key, item)));
            }
            return result;
        }
        if (kind.equals("struct") && value instanceof Map && field.get("fields") instanceof List) {
            Map<?, ?> payload = (Map<?, ?>) value;
            List<Map<?, ?>> members = new ArrayList<>();
            Set<String> names = new HashSet<>();
            for (Object member : (List<?>) field.get("fields")) {
                if (member instanceof Map && ((Map<?, ?>) member).get("field") instanceof String) {
                    members.add((Map<?, ?>) member);
                    if (!names.add((String) ((Map<?, ?>) member).get("field"))) {
                        throw OFF_TYPE;
                    }
                }
            }
            Map<String, Object> result = new LinkedHashMap<>();
            for (Map<?, ?> member : members) {
                String name = (String) member.get("field");
                result.put(name, member(payload.get(name), member, path + "." + name, depth + 1));
            }
            for (Map.Entry<?, ?> entry : payload.entrySet()) {
                String name = (String) entry.getKey();
                if (!names.contains(name)) {
                    result.put(name, Messages.valueOf(entry.getValue(), path + "." + name, depth + 1));
                }
            }
            return result;
        }
        throw OFF_TYPE;
    }

    private static boolean pairs(List<?> value) {
        for (Object pair : value) {
            if (!(pair instanceof List) || ((List<?>) pair).size() != 2) {
                return false;
            }
        }
        return true;
    }

    /** {@code _typed}: the value of a JSON value of a Connect type; {@link OffType} when it disagrees. */
    private static Object typed(Object value, String kind, Map<?, ?> field, Map<?, ?> parameters, String path,
            int depth) throws DecodeException, OffType {
        if (NESTED_TYPES.contains(kind)) {
            return nested(value, kind, field, path, depth);
        }
        if (!PRIMITIVE_OF.containsKey(kind)) {
            throw OFF_TYPE;
        }
        String primitive = PRIMITIVE_OF.get(kind);
        if (INT_BITS.containsKey(primitive)) {
            if (!fits(value, primitive)) {
                throw OFF_TYPE;
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
                    throw OFF_TYPE;
                }
            } else {
                throw OFF_TYPE;
            }
            return primitive.equals("float") ? float32(number) : number;
        }
        if (primitive.equals("boolean")) {
            if (!(value instanceof Boolean)) {
                throw OFF_TYPE;
            }
            return value;
        }
        if (primitive.equals("string")) {
            if (!(value instanceof String)) {
                throw OFF_TYPE;
            }
            return value;
        }
        byte[] data = value instanceof String ? base64((String) value) : null;
        if (data == null) {
            throw OFF_TYPE;
        }
        if (!kind.equals(DECIMAL)) {
            return data;
        }
        Object scale = parameters.get("scale");
        if (!(scale instanceof String) || !SCALE.matcher((String) scale).matches()
                || Math.abs(Long.parseLong((String) scale)) > Integer.MAX_VALUE || data.length == 0) {
            throw OFF_TYPE; // a Decimal needs its unscaled bytes and its scale as a parameter
        }
        return new TypedText.DecimalText(new BigDecimal(new BigInteger(data), Integer.parseInt((String) scale))
            .toString());
    }

    /**
     * {@code base64.b64decode(text, validate=True)} as Python 3.11 decodes (binascii's strict mode), or null where it
     * raises: only the alphabet and '='; no leading padding, nothing but '=' once padding started, nothing after
     * the padding that completes a quad; padding in excess at a quad's start is passed over ("eAIA=" is 3 bytes).
     */
    static byte[] base64(String text) {
        if (!text.isEmpty() && text.charAt(0) == '=') {
            return null;
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(text.length() * 3 / 4);
        int quadPos = 0;
        int leftChar = 0;
        int pads = 0;
        boolean paddingStarted = false;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '=') {
                paddingStarted = true;
                if (quadPos >= 2 && quadPos + ++pads >= 4) {
                    return i + 1 < text.length() ? null : out.toByteArray();
                }
                continue;
            }
            int digit = c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26
                : c >= '0' && c <= '9' ? c - '0' + 52 : c == '+' ? 62 : c == '/' ? 63 : -1;
            if (digit < 0 || paddingStarted) {
                return null;
            }
            pads = 0;
            switch (quadPos) {
                case 0:
                    quadPos = 1;
                    leftChar = digit;
                    break;
                case 1:
                    quadPos = 2;
                    out.write((leftChar << 2) | (digit >> 4));
                    leftChar = digit & 0x0f;
                    break;
                case 2:
                    quadPos = 3;
                    out.write((leftChar << 4) | (digit >> 2));
                    leftChar = digit & 0x03;
                    break;
                default:
                    quadPos = 0;
                    out.write((leftChar << 6) | digit);
                    leftChar = 0;
            }
        }
        return quadPos == 0 ? out.toByteArray() : null;
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

    /** {@code _DEFAULT_OF_KIND}: the Connect type of a value whose type name asks for none; a null's is string. */
    private static String defaultOfKind(Object value) {
        return value == null ? "string" : DEFAULT_OF_KIND.getOrDefault(value.getClass(), DECIMAL);
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

    /**
     * {@code generated_schema} of a cell named "": the field schema generated from its value and type name, for a
     * value that is not nested or whose nested value has a schema ({@link #nestedSchema}).
     */
    public static Map<Object, Object> generatedSchema(Object value, String typeName) {
        if (isNested(value)) {
            Map<Object, Object> schema = nestedSchema(value); // readValue: only for a nested value that has one
            if (typeName != null) {
                Map<Object, Object> parameters = new LinkedHashMap<>();
                parameters.put(SOURCE_TYPE, typeName);
                schema.put("parameters", parameters);
            }
            schema.put("field", "");
            return schema;
        }
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
     * {@code nested_schema}: the schema generated for a nested value, without {@code field}: a Struct a struct of its
     * fields, an array an array of its items' one schema (optional when one is null; an optional string when there is
     * none); null when Connect has none, for an array whose items differ in schema.
     */
    public static Map<Object, Object> nestedSchema(Object value) {
        if (value instanceof Map) {
            List<Object> fields = new ArrayList<>();
            for (Map.Entry<?, ?> field : ((Map<?, ?>) value).entrySet()) {
                Map<Object, Object> schema = memberSchema(field.getValue());
                if (schema == null) {
                    return null;
                }
                schema.put("field", field.getKey());
                fields.add(schema);
            }
            Map<Object, Object> schema = new LinkedHashMap<>();
            schema.put("type", "struct");
            schema.put("fields", fields);
            schema.put("optional", false);
            return schema;
        }
        Map<Object, Object> items = null;
        String itemsText = null;
        boolean hasNull = false;
        for (Object item : (List<?>) value) {
            if (Json.isNull(item)) {
                hasNull = true;
                continue;
            }
            Map<Object, Object> schema = memberSchema(item);
            if (schema == null) {
                return null;
            }
            String text = Json.write(schema);
            if (items == null) {
                items = schema;
                itemsText = text;
            } else if (!text.equals(itemsText)) {
                return null;
            }
        }
        if (items == null) {
            items = new LinkedHashMap<>();
            items.put("type", "string");
            items.put("optional", true);
        }
        items.put("optional", Boolean.TRUE.equals(items.get("optional")) || hasNull);
        Map<Object, Object> schema = new LinkedHashMap<>();
        schema.put("type", "array");
        schema.put("items", items);
        schema.put("optional", false);
        return schema;
    }

    /** {@code _member_schema}: a cell's generated schema for a member, without a type (null: a decimal no Connect Decimal holds). */
    private static Map<Object, Object> memberSchema(Object value) {
        if (isNested(value)) {
            return nestedSchema(value);
        }
        if (value instanceof TypedText.DecimalText && !carriesDecimal(((TypedText.DecimalText) value).text)) {
            return null;
        }
        Map<Object, Object> schema = generatedSchema(Json.isNull(value) ? null : value, null);
        schema.remove("field");
        return schema;
    }

    /**
     * {@code json_field_schema}: the schema of a field holding a JSON value that is no cell (Debezium's
     * {@code source} and {@code transaction}), typed from the value.
     */
    public static Map<Object, Object> jsonFieldSchema(String name, Object value) {
        if (value instanceof List || value instanceof Map) {
            Map<Object, Object> schema = nestedSchema(value);
            if (schema != null) {
                schema.put("field", name);
                return schema;
            }
        }
        String kind = value instanceof Boolean ? "boolean" : value instanceof Long ? "int64"
            : value instanceof Double ? "double" : "string";
        Map<Object, Object> schema = new LinkedHashMap<>();
        schema.put("type", kind);
        schema.put("optional", Json.isNull(value));
        schema.put("field", name);
        return schema;
    }

    /** {@code struct_schema}: a struct of {@code fields}, named where {@code name} is not null. */
    public static Map<Object, Object> structSchema(List<?> fields, boolean optional, String name) {
        Map<Object, Object> schema = new LinkedHashMap<>();
        schema.put("type", "struct");
        schema.put("fields", fields);
        schema.put("optional", optional);
        if (name != null) {
            schema.put("name", name);
        }
        return schema;
    }

    /** {@code carries_decimal}: finite, not negative zero, a scale within 32 bits. */
    public static boolean carriesDecimal(String text) {
        if (text.contains("N") || text.contains("I")) {
            return false;
        }
        int exponentAt = text.indexOf('E');
        String digits = exponentAt < 0 ? text : text.substring(0, exponentAt);
        if (digits.startsWith("-") && digits.replaceAll("[-.0]", "").isEmpty()) {
            return false;
        }
        return Math.abs(scale(text)) <= Integer.MAX_VALUE;
    }

    /**
     * {@code -_exponent}: the scale of a finite decimal's text, read off the text, since BigDecimal refuses the text
     * of a scale near the 32-bit limit with more than one digit ("1.23E+2147483649").
     */
    public static long scale(String text) {
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
        if (Json.isNull(schema)) { // a null schema describes no column: the payload reads as without the wrapper
            return Map.of();
        }
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
