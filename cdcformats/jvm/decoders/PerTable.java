package cdcformats.jvm.decoders;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * An option given for every table or per table ({@code KeyColumns}, arcion's {@code ColumnTypes}): a table is looked
 * up by its qualified name first ("tpch.region"), then by its bare name, and falls back to the value for every table.
 * Both come as JSON settings, already read by the codec.
 */
public final class PerTable {
    private final Object everywhere;
    private final Map<String, Object> perTable;

    @SuppressWarnings("unchecked")
    public PerTable(String everywhere, String perTable, Object none) throws DecodeException {
        this.everywhere = everywhere == null ? none : Json.parse(everywhere.getBytes(StandardCharsets.UTF_8));
        this.perTable = perTable == null ? new HashMap<>()
            : (Map<String, Object>) Json.parse(perTable.getBytes(StandardCharsets.UTF_8));
    }

    /** The value for a table (null: no table). */
    public Object forTable(String catalog, String schema, String name) {
        if (name == null || perTable.isEmpty()) {
            return everywhere;
        }
        StringBuilder qualified = new StringBuilder();
        for (String part : new String[] {catalog, schema, name}) {
            if (part != null) {
                qualified.append(qualified.length() == 0 ? "" : ".").append(part);
            }
        }
        Object found = perTable.get(qualified.toString());
        if (found == null) {
            found = perTable.get(name);
        }
        return found == null ? everywhere : found;
    }
}
