package cdcformats.jvm.decoders;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * An option given for every table or per table ({@code KeyColumns}, arcion's {@code ColumnTypes}): a table is looked
 * up by its qualified name first ("tpch.region"), then by its bare name, and falls back to the value for every table.
 * Both come as JSON settings, already read by the codec: {@code <option>} and {@code <option>_per_table}.
 */
public final class PerTable {
    private final Object everywhere;
    private final Map<String, Object> perTable;

    /** The option {@code option} of a decoder's settings; {@code none} for every table where it is not given. */
    @SuppressWarnings("unchecked")
    public PerTable(Map<String, String> settings, String option, Object none) throws DecodeException {
        String everywhere = settings.get(option);
        String perTable = settings.get(option + "_per_table");
        this.everywhere = everywhere == null ? none : Json.parse(everywhere.getBytes(StandardCharsets.UTF_8));
        this.perTable = perTable == null ? new HashMap<>()
            : (Map<String, Object>) Json.parse(perTable.getBytes(StandardCharsets.UTF_8));
    }

    /** Whether the option names a value for some table of its own ({@code <option>_per_table} not empty). */
    public boolean givesPerTable() {
        return !perTable.isEmpty();
    }

    /** The value for a table: catalog, schema and name, each null where it has none (null: no table). */
    public Object forTable(String[] table) {
        if (table == null || table[2] == null || perTable.isEmpty()) {
            return everywhere;
        }
        StringBuilder qualified = new StringBuilder();
        for (String part : table) {
            if (part != null) {
                qualified.append(qualified.length() == 0 ? "" : ".").append(part);
            }
        }
        Object found = perTable.get(qualified.toString());
        if (found == null) {
            found = perTable.get(table[2]);
        }
        return found == null ? everywhere : found;
    }
}
