"""What the formats share, each piece written once: JSON messages and their values (``json_message``), fields kept
as attributes (``kept_fields``), key columns (``keys``), Kafka Connect schemas (``connect_schema``), Debezium's
envelope (``debezium_envelope``), and the codec of formats whose message is a Kafka record (``kafka_records``). What
the contract and the envelopes share with the formats (typed text, time units) is ``cdcformats.core``.

It also holds the parts of a format too large to be read in its module, each part one concern, so that the format's
module reads as its spec: debezium-avro's Avro form of column types and values (``avro_columns``), its cells as
Connect types them (``connect_cells``), its records read back (``avro_records``) and its tables' versions in the
schema registry (``avro_tables``).

Private to ``cdcformats.codecs``: a format module imports the kit and the contract (``cdcformats.contract``), never
another format module, and nothing outside the formats imports the kit.
"""
