package cdcformats.jvm.decoders;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Lindorm Streams JSON ({@code lindorm.py}, whose docstring is the format's description) decoded inside Spark's JVM,
 * rule for rule as {@code LindormCodec.decode_message}. Settings: {@code max_message_bytes}, and
 * {@code key_columns} and {@code key_columns_per_table} (see {@link JsonDecoder}).
 */
public final class LindormDecoder extends JsonDecoder {
    // The attributes and fields of the format, which its encoder writes back too.
    public static final String OP_ATTRIBUTE = "lindorm.op";
    public static final String BLANK_TS_ATTRIBUTE = "lindorm.blank_ts";
    public static final String FIELD_PREFIX = "lindorm.field.";
    public static final Set<String> DOCUMENTED_FIELDS = Set.of("op", "table", "ts", "keyOnly", "data");
    private static final Set<String> ENTRY_FIELDS = Set.of("type", "name", "ts", "value");
    private static final List<String> OP_NAMES =
        List.of("Put", "Delete", "DeleteColumn", "DeleteFamily", "DeleteFamilyVersion");
    private static final String[] CANONICAL_OPS = {"UPSERT", "UPDATE", "UPDATE", "DELETE", "UPDATE"};
    private static final String[] CELL_KINDS =
        {Events.PUT, Events.DELETE_VERSION, Events.DELETE_ALL_VERSIONS, Events.PUT, Events.DELETE_VERSION};
    private static final Pattern INTEGER_TEXT = Pattern.compile("-?[0-9]{1,19}");

    public LindormDecoder(Map<String, String> settings) throws DecodeException {
        super(settings);
    }

    @Override
    protected Events.Event decode(Map<String, Object> document) throws DecodeException {
        Object opName = document.get("op");
        int op = opName instanceof String ? OP_NAMES.indexOf(opName) : -1;
        if (op < 0) {
            throw new DecodeException("unknown op " + Python.repr(opName) + "; expected one of "
                + String.join(", ", OP_NAMES), "op");
        }
        Object tableName = document.get("table");
        if (!Json.isNull(tableName) && !(tableName instanceof String)) {
            throw new DecodeException("expected a string, got " + Json.typeName(tableName), "table");
        }
        Events.Table table = tableName instanceof String ? Events.table(null, null, (String) tableName) : null;
        String[] bareTable = tableName instanceof String ? new String[] {null, null, (String) tableName} : null;
        List<?> keyColumns = keyColumns(bareTable);
        Long defaultVersion = version(document.get("ts"), "ts");
        Long commitTimeUs = null;
        if (defaultVersion != null) {
            commitTimeUs = Messages.toMicroseconds(defaultVersion, 1000);
            if (commitTimeUs == null) {
                throw new DecodeException(defaultVersion + " ms is too far from 1970 to hold in microseconds", "ts");
            }
        }
        Object keyOnlyField = document.containsKey("keyOnly") ? document.get("keyOnly") : "false";
        Boolean keyOnly = keyOnly(keyOnlyField);
        if (keyOnly == null) {
            throw new DecodeException("expected \"true\" or \"false\", got " + Python.repr(keyOnlyField), "keyOnly");
        }
        Object data = document.containsKey("data") ? document.get("data") : List.of();
        List<String> names = new ArrayList<>();
        List<String> kinds = new ArrayList<>();
        List<String> blankTs = new ArrayList<>();
        List<Events.Cell> image = cells(data, CELL_KINDS[op], keyColumns, names, kinds, blankTs);
        List<Map.Entry<String, Object>> attributes = Messages.keptFields(FIELD_PREFIX, document, DOCUMENTED_FIELDS);
        if (!blankTs.isEmpty()) {
            attributes.add(0, Messages.pair(BLANK_TS_ATTRIBUTE, "[" + String.join(",", blankTs) + "]"));
        }
        String canonicalOp = CANONICAL_OPS[op];
        if (!derivedOp(canonicalOp, keyColumns, names, kinds).equals(opName)) {
            attributes.add(0, Messages.pair(OP_ATTRIBUTE, opName));
        }
        boolean isBefore = canonicalOp.equals("DELETE");
        return Events.event(canonicalOp, table, keyOf(bareTable, image),
            isBefore ? image : null, isBefore ? null : image, null, List.of(), commitTimeUs, null, keyOnly,
            attributes);
    }

    /** The Lindorm op that writes the event (lindorm.py's _derived_op), from its cells' names and kinds. */
    private static String derivedOp(String canonicalOp, List<?> keyColumns, List<String> names, List<String> kinds) {
        if (canonicalOp.equals("DELETE")) {
            return "DeleteFamily";
        }
        if (canonicalOp.equals("UPDATE")) {
            boolean versions = false;
            boolean columns = false;
            boolean puts = false;
            for (int i = 0; i < names.size(); i++) {
                if (keyColumns.contains(names.get(i))) {
                    continue;
                }
                String kind = kinds.get(i);
                versions |= kind.equals(Events.DELETE_VERSION);
                columns |= kind.equals(Events.DELETE_ALL_VERSIONS);
                puts |= kind.equals(Events.PUT);
            }
            if (!columns && !puts) {
                return "Delete";
            }
            if (columns && !versions && !puts) {
                return "DeleteColumn";
            }
        }
        return "Put";
    }

    private static Boolean keyOnly(Object value) {
        if (value instanceof String) {
            String lower = ((String) value).toLowerCase(Locale.ROOT);
            return lower.equals("true") ? Boolean.TRUE : lower.equals("false") ? Boolean.FALSE : null;
        }
        if (value instanceof Boolean) {
            return (Boolean) value;
        }
        if (value instanceof Long) { // 1 and 0 read as true and false, as Python's 1 == True
            long number = (Long) value;
            return number == 1 ? Boolean.TRUE : number == 0 ? Boolean.FALSE : null;
        }
        return null;
    }

    /** A version or timestamp: a JSON string of digits (documented) or a JSON integer; blank or absent is none. */
    private static Long version(Object value, String field) throws DecodeException {
        if (Json.isNull(value) || "".equals(value)) {
            return null;
        }
        Object number = value;
        if (value instanceof String && INTEGER_TEXT.matcher((String) value).matches()) {
            BigInteger parsed = new BigInteger((String) value);
            number = parsed.bitLength() < 64 ? (Object) parsed.longValue() : parsed;
        }
        if (number instanceof BigInteger) {
            throw new DecodeException(number + " is outside the signed 64-bit range", field);
        }
        if (!(number instanceof Long)) {
            throw new DecodeException("expected a millisecond timestamp, got " + Python.repr(value), field);
        }
        return (Long) number;
    }

    /**
     * The cells of {@code data}; the name and kind of each go into {@code names} and {@code kinds}, and the position
     * of each entry whose ts is blank into {@code blankTs}.
     */
    private static List<Events.Cell> cells(Object data, String kind, List<?> keyColumns, List<String> names,
                                           List<String> kinds, List<String> blankTs)
            throws DecodeException {
        if (!(data instanceof List)) {
            throw new DecodeException("expected an array, got " + Json.typeName(data), "data");
        }
        List<?> entries = (List<?>) data;
        List<Events.Cell> cells = new ArrayList<>(entries.size());
        for (int index = 0; index < entries.size(); index++) {
            String path = "data[" + index + "]";
            Object item = entries.get(index);
            if (!(item instanceof Map)) {
                throw new DecodeException("expected an object, got " + Json.typeName(item), path);
            }
            Map<?, ?> entry = (Map<?, ?>) item;
            if (!ENTRY_FIELDS.containsAll(entry.keySet())) {
                TreeSet<String> unknown = new TreeSet<>(Python.CODE_POINT_ORDER);
                for (Object name : entry.keySet()) {
                    if (!ENTRY_FIELDS.contains(name)) {
                        unknown.add((String) name);
                    }
                }
                throw new DecodeException("unknown field (an entry has name, ts, type, value)",
                    path + "." + unknown.first());
            }
            Object name = entry.get("name");
            if (!(name instanceof String)) {
                throw new DecodeException("expected a string, got " + Json.typeName(name), path + ".name");
            }
            Object typeName = entry.get("type");
            if (typeName == Json.NULL) {
                typeName = null;
            }
            if (typeName != null && !(typeName instanceof String)) {
                throw new DecodeException("expected a string, got " + Json.typeName(typeName), path + ".type");
            }
            Object value = entry.get("value");
            if (value instanceof String) {
                value = TypedText.parse((String) value, (String) typeName);
            } else if (value instanceof Map || value instanceof List) {
                throw new DecodeException("expected a scalar value, got " + Json.typeName(value), path + ".value");
            } else if (value instanceof BigInteger) {
                throw new DecodeException("cell " + Python.repr(name) + " value: integer " + value
                    + " is outside the signed 64-bit range", path + ".value");
            }
            Long version = version(entry.get("ts"), path + ".ts");
            if ("".equals(entry.get("ts"))) {
                blankTs.add(Integer.toString(index));
            }
            String cellKind = keyColumns.contains(name) ? Events.PUT : kind;
            names.add((String) name);
            kinds.add(cellKind);
            cells.add(Events.cell((String) name, value, (String) typeName, version, cellKind));
        }
        return cells;
    }
}
