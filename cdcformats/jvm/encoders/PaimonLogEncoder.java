package cdcformats.jvm.encoders;

import cdcformats.jvm.decoders.Events;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code codecs/paimon.py}'s encoder in Java: the Kafka log of a Paimon table, each event as one record, the key its
 * key cells as a JSON object (msgspec's spelling; none for a change without a key) and the value the debezium-json
 * envelope ({@link DebeziumJsonEncoder} without schemas), as {@code encode_exact(written(event))} writes it.
 *
 * <p>The normal form is the event as far as the log carries it ({@link NormalForm}) as debezium-json's
 * {@code envelope_form} gives it back; in {@code upsert} mode, a change that leaves a row is that row put (a {@code c}
 * without {@code before}), a delete a tombstone of its key, and a change without a key, a TRUNCATE or a change whose
 * new row is not known are refused.
 *
 * <p>Settings: {@code changelog_mode} ("all" or "upsert").
 */
public final class PaimonLogEncoder extends NormalForm implements RecordEncoder {
    private static final String NAME = "paimon-log";
    private static final List<Shape> UPSERT_SHAPES = List.of(new Shape("UPSERT", ABSENT, PRESENT),
        new Shape("DELETE", ABSENT, ABSENT));

    private final boolean upsert;
    private final DebeziumJsonEncoder values = new DebeziumJsonEncoder(Map.of()); // the format of the values

    public PaimonLogEncoder(Map<String, String> settings) {
        this(upsert(settings.get("changelog_mode")));
    }

    private PaimonLogEncoder(boolean upsert) {
        // In upsert mode: the row as it now is, or a delete of the key alone.
        super(NAME, upsert ? changed(DebeziumJsonEncoder.CARRIES, List.of("op.UPSERT"),
            List.of("op.INSERT", "op.UPDATE", "op.READ", "op.TRUNCATE")) : DebeziumJsonEncoder.CARRIES,
            DebeziumJsonEncoder.OWN_ATTRIBUTES, upsert ? UPSERT_SHAPES : null);
        this.upsert = upsert;
    }

    private static boolean upsert(String mode) {
        if (!"all".equals(mode) && !"upsert".equals(mode)) {
            throw new IllegalArgumentException("changelog_mode: expected all or upsert, got " + mode);
        }
        return mode.equals("upsert");
    }

    /**
     * {@code PaimonLogCodec.reshaped}, in upsert mode: a change that leaves a row is the new row, without the row
     * before; a delete is a tombstone of its key; a change whose new row is not known, and a TRUNCATE, have no record.
     */
    @Override
    protected Events.Event reshaped(Events.Event event) throws EncodeException {
        if (event.op().equals("DELETE")) {
            return new Events.Event("DELETE", event.table(), event.key(), null, null, event.source(),
                event.keyOnly(), event.attributes());
        }
        if (event.op().equals("TRUNCATE") || event.after() == null) {
            throw EncodeException.refused("op." + event.op(), "op",
                "an upsert log holds new rows and tombstones, and this " + event.op() + " has no row");
        }
        return new Events.Event("UPSERT", event.table(), event.key(), null, event.after(), event.source(),
            event.keyOnly(), event.attributes());
    }

    /** {@code PaimonLogCodec.normal_form}. */
    @Override
    public Events.Event normalForm(Events.Event event) throws EncodeException {
        Events.Event written = super.normalForm(event);
        if (!upsert) {
            if (written.op().equals("UPSERT")) { // with_op_code: the row as it now is, read back as an INSERT
                written = new Events.Event("INSERT", written.table(), written.key(), written.before(),
                    written.after(), written.source(), written.keyOnly(), written.attributes());
            }
            return values.envelopeForm(written);
        }
        if (written.key().isEmpty()) {
            throw EncodeException.refused("requires key", "key",
                "an upsert log is keyed by the primary key, and this change has none");
        }
        if (written.op().equals("DELETE")) { // a tombstone holds only the key
            return new Events.Event("DELETE", null, written.key(), written.before(), written.after(),
                new Events.Source(null, List.of(), null, null), false, List.of());
        }
        return values.envelopeForm(written);
    }

    @Override
    public KafkaRecord encode(Events.Event event) throws EncodeException {
        Events.Event written = normalForm(event);
        byte[] key = keyMessage(written.key());
        if (upsert && written.op().equals("DELETE")) {
            return new KafkaRecord(key, null);
        }
        return new KafkaRecord(key, values.write(written));
    }

    /** {@code paimon._key_message}: the key's columns as a JSON object; none for a change without a key. */
    private static byte[] keyMessage(List<Events.Cell> key) {
        if (key.isEmpty()) {
            return null;
        }
        Map<String, Object> columns = new LinkedHashMap<>();
        for (Events.Cell cell : key) {
            columns.put(cell.name(), Values.jsonForm(cell.value()));
        }
        return JsonOut.msgspec(columns).getBytes(StandardCharsets.UTF_8);
    }
}
