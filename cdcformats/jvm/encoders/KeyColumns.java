package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.DecodeException;
import cdcformats.jvm.decoders.Events;
import cdcformats.jvm.decoders.PerTable;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The option {@code key_columns} of a format whose messages do not mark the key ({@code _kit/keys.py}), as the
 * settings {@code KeyColumns.settings()} gives, and the key cells an encoder reads out of a row or puts in front of
 * it.
 */
public final class KeyColumns {
    private final PerTable columns;
    private final boolean any;

    public KeyColumns(Map<String, String> settings) {
        try {
            columns = new PerTable(settings, "key_columns", List.of());
            any = !((List<?>) columns.forTable(null)).isEmpty() || columns.givesPerTable();
        } catch (DecodeException error) {
            throw new IllegalArgumentException("key_columns: " + error.reason, error);
        }
    }

    /** Whether the option names key columns for some table ({@code bool(KeyColumns)}). */
    public boolean any() {
        return any;
    }

    /** {@code KeyColumns.for_table}: the names of the key columns of {@code table}, none where it names none. */
    public List<?> forTable(Events.Table table) {
        return (List<?>) columns.forTable(
            table == null ? null : new String[] {table.catalog(), table.schema(), table.name()});
    }

    /** {@code KeyColumns.key_of}: the key cells of {@code image}, the first of each name, in key order. */
    public List<Events.Cell> keyOf(Events.Table table, List<Events.Cell> image) {
        List<?> names = forTable(table);
        List<Events.Cell> key = new ArrayList<>();
        if (names.isEmpty() || image == null) {
            return key;
        }
        Map<String, Events.Cell> firstByName = new LinkedHashMap<>();
        for (Events.Cell cell : image) {
            firstByName.putIfAbsent(cell.name(), cell);
        }
        for (Object name : names) {
            Events.Cell cell = firstByName.get(name);
            if (cell != null) {
                key.add(cell);
            }
        }
        return key;
    }

    /**
     * {@code keys.key_cells_outside}: the key cells whose column {@code row} lacks, the first of each name, which a
     * format that reads the key out of the row puts in front of it.
     */
    public static List<Events.Cell> outside(List<Events.Cell> key, List<Events.Cell> row) {
        if (key.isEmpty()) { // most events of formats that read the key out of the row
            return List.of();
        }
        Map<String, Events.Cell> outside = new LinkedHashMap<>();
        Set<String> inRow = new HashSet<>();
        if (row != null) {
            for (Events.Cell cell : row) {
                inRow.add(cell.name());
            }
        }
        for (Events.Cell cell : key) {
            if (!inRow.contains(cell.name())) {
                outside.putIfAbsent(cell.name(), cell);
            }
        }
        return new ArrayList<>(outside.values());
    }
}
