package cdcformats.jvm.decoders;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the decoders of the JSON formats read alike: {@code max_message_bytes}, beyond which a message is refused
 * unparsed ({@code json_message.load_object}), and the key columns of each table ({@code key_columns},
 * {@code key_columns_per_table}: {@code _kit/keys.KeyColumns}), none where the codec gives neither (canal-json,
 * whose messages name their keys).
 */
public abstract class JsonDecoder implements MessageDecoder {
    private final long maxMessageBytes;
    private final PerTable keyColumns;

    protected JsonDecoder(Map<String, String> settings) throws DecodeException {
        this.maxMessageBytes = Long.parseLong(settings.get("max_message_bytes"));
        this.keyColumns = new PerTable(settings, "key_columns", List.of());
    }

    @Override
    public final Events.Event decode(byte[] message) throws DecodeException {
        return decode(Messages.loadObject(message, maxMessageBytes));
    }

    /** The one event of a message, parsed: a JSON object. */
    protected abstract Events.Event decode(Map<String, Object> document) throws DecodeException;

    /** {@code KeyColumns.for_table}: the key columns of a table (catalog, schema, name; null: no table). */
    protected List<?> keyColumns(String[] table) {
        return (List<?>) keyColumns.forTable(table);
    }

    /** {@code KeyColumns.key_of}: the first cell of each key column of the table that the image has, in key order. */
    protected List<Events.Cell> keyOf(String[] table, List<Events.Cell> image) {
        List<Events.Cell> key = new ArrayList<>();
        if (image == null) {
            return key;
        }
        for (Object column : keyColumns(table)) {
            for (Events.Cell cell : image) {
                if (cell.name().equals(column)) {
                    key.add(cell);
                    break;
                }
            }
        }
        return key;
    }

    /**
     * {@code KeyedByColumns.with_key_read}: the key of a change, read out of its before image for a DELETE or a change
     * without an after image, else out of its after image.
     */
    protected List<Events.Cell> keyRead(String[] table, String op, List<Events.Cell> before,
                                        List<Events.Cell> after) {
        return keyOf(table, op.equals("DELETE") || after == null ? before : after);
    }
}
