package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.decoders.Json;
import cdcformats.jvm.decoders.Numbers;
import cdcformats.jvm.decoders.PythonDecimal;
import cdcformats.jvm.decoders.TypedText;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * What the encoders ask of a value of an {@link cdcformats.jvm.decoders.Events} event, as {@code core/typed_text.py}
 * and {@code losses.VALUE_FEATURE} answer it in Python: its feature, its JSON form and its text.
 */
public final class Values {
    private Values() {
    }

    /** {@code losses.VALUE_FEATURE}: the feature of a kind of value ("value.int"). */
    public static String feature(Object value) {
        if (Json.isNull(value)) {
            return "value.null";
        }
        if (value instanceof Boolean) {
            return "value.bool";
        }
        if (value instanceof Long) {
            return "value.int";
        }
        if (value instanceof Double) {
            return "value.float";
        }
        if (value instanceof String) {
            return "value.str";
        }
        if (value instanceof byte[]) {
            return "value.bytes";
        }
        if (value instanceof TypedText.DecimalText) {
            return "value.decimal";
        }
        return "value.nested";
    }

    /** {@code model.is_nested}: an array (a {@code List}) or a Struct (a {@code Map}). */
    public static boolean isNested(Object value) {
        return value instanceof List || value instanceof Map;
    }

    public static boolean isNonFinite(Object value) {
        return value instanceof Double && !Double.isFinite((Double) value);
    }

    /**
     * {@code typed_text.json_form}: a value as the JSON formats without a schema write it, an array as a JSON array
     * and a Struct as an object; bytes as base64 text; a decimal, NaN or an infinity as its text.
     */
    public static Object jsonForm(Object value) {
        return membersMapped(value, Values::jsonFormOfScalar);
    }

    /**
     * A nested value with each of its members that is no nested value, at any depth, as {@code scalar} writes it (an
     * array as a {@code List}, a Struct as a {@code Map}, in order); a value that is not nested as it writes it.
     */
    public static Object membersMapped(Object value, UnaryOperator<Object> scalar) {
        if (value instanceof List) {
            List<Object> items = new ArrayList<>();
            for (Object item : (List<?>) value) {
                items.add(membersMapped(item, scalar));
            }
            return items;
        }
        if (value instanceof Map) {
            Map<String, Object> fields = new LinkedHashMap<>();
            for (Map.Entry<?, ?> field : ((Map<?, ?>) value).entrySet()) {
                fields.put((String) field.getKey(), membersMapped(field.getValue(), scalar));
            }
            return fields;
        }
        return scalar.apply(value);
    }

    private static Object jsonFormOfScalar(Object value) {
        if (value instanceof byte[]) {
            return Base64.getEncoder().encodeToString((byte[]) value);
        }
        if (value instanceof TypedText.DecimalText || isNonFinite(value)) {
            return render(value);
        }
        return Json.isNull(value) ? null : value;
    }

    /** {@code typed_text.is_json}: whether {@link #jsonForm} writes the value as it is. */
    public static boolean isJson(Object value) {
        if (value instanceof List) {
            for (Object item : (List<?>) value) {
                if (!isJson(item)) {
                    return false;
                }
            }
            return true;
        }
        if (value instanceof Map) {
            for (Object item : ((Map<?, ?>) value).values()) {
                if (!isJson(item)) {
                    return false;
                }
            }
            return true;
        }
        return !(value instanceof byte[] || value instanceof TypedText.DecimalText || isNonFinite(value));
    }

    /**
     * {@code typed_text.render}: the text of a value; a nested value's is its JSON (msgspec's), a double's Python's
     * {@code repr}, NaN and the infinities by their names, null Python's {@code str(None)}.
     */
    public static String render(Object value) {
        if (isNested(value)) {
            return JsonOut.msgspec(jsonForm(value));
        }
        if (value instanceof Boolean) {
            return (Boolean) value ? "true" : "false";
        }
        if (value instanceof Double) {
            double number = (Double) value;
            if (Double.isNaN(number)) {
                return "NaN";
            }
            if (Double.isInfinite(number)) {
                return number > 0 ? "Infinity" : "-Infinity";
            }
            return Numbers.pythonRepr(number);
        }
        if (value instanceof TypedText.DecimalText) {
            return ((TypedText.DecimalText) value).text;
        }
        if (value instanceof byte[]) {
            throw new IllegalArgumentException("bytes have no typed text: as_text writes them as base64");
        }
        return Json.isNull(value) ? "None" : value.toString();
    }

    /** {@code contract.as_text}: a value as text, for a format with no form for its kind (bytes as base64). */
    public static String asText(Object value) {
        return value instanceof byte[] ? Base64.getEncoder().encodeToString((byte[]) value) : render(value);
    }

    /** {@code Cell.__eq__}: name, kind, type, version and value alike (the value as {@link #same}). */
    public static boolean sameCell(Events.Cell left, Events.Cell right) {
        if (left == null || right == null) {
            return left == right;
        }
        return left.name().equals(right.name()) && left.kind().equals(right.kind())
            && Objects.equals(left.type(), right.type()) && Objects.equals(left.version(), right.version())
            && same(left.value(), right.value());
    }

    /**
     * {@code model.same_value}: whether the model holds two values the same: of one kind, doubles by their bits (NaN
     * as NaN, -0.0 apart from 0.0), decimals by their digits, exponent and sign, bytes and nested values by their
     * items.
     */
    public static boolean same(Object left, Object right) {
        if (Json.isNull(left) || Json.isNull(right)) {
            return Json.isNull(left) && Json.isNull(right);
        }
        if (left.getClass() != right.getClass() && !(left instanceof List && right instanceof List)
                && !(left instanceof Map && right instanceof Map)) {
            return false;
        }
        if (left instanceof Double) {
            return Double.doubleToLongBits((Double) left) == Double.doubleToLongBits((Double) right);
        }
        if (left instanceof TypedText.DecimalText) {
            return sameDecimal(((TypedText.DecimalText) left).text, ((TypedText.DecimalText) right).text);
        }
        if (left instanceof byte[]) {
            return Arrays.equals((byte[]) left, (byte[]) right);
        }
        if (left instanceof List) {
            List<?> leftItems = (List<?>) left;
            List<?> rightItems = (List<?>) right;
            if (leftItems.size() != rightItems.size()) {
                return false;
            }
            for (int index = 0; index < leftItems.size(); index++) {
                if (!same(leftItems.get(index), rightItems.get(index))) {
                    return false;
                }
            }
            return true;
        }
        if (left instanceof Map) {
            List<Map.Entry<?, ?>> leftFields = new ArrayList<>(((Map<?, ?>) left).entrySet());
            List<Map.Entry<?, ?>> rightFields = new ArrayList<>(((Map<?, ?>) right).entrySet());
            if (leftFields.size() != rightFields.size()) {
                return false;
            }
            for (int index = 0; index < leftFields.size(); index++) {
                if (!leftFields.get(index).getKey().equals(rightFields.get(index).getKey())
                        || !same(leftFields.get(index).getValue(), rightFields.get(index).getValue())) {
                    return false;
                }
            }
            return true;
        }
        return left.equals(right);
    }

    /**
     * Whether two decimals' texts are one Python {@code Decimal}: the same digits, exponent and sign (a decimal read
     * back in plain digits, "0.000000000001", is the decimal Python writes "1E-12"); NaN and the infinities by name.
     */
    private static boolean sameDecimal(String left, String right) {
        String leftDecimal = PythonDecimal.str(left);
        return leftDecimal != null ? leftDecimal.equals(PythonDecimal.str(right)) : left.equals(right);
    }
}
