"""What the formats share, each piece written once: JSON messages and their values (``json_message``), fields kept
as attributes (``kept_fields``), key columns (``keys``), Kafka Connect schemas (``connect_schema``), Debezium's
envelope (``debezium_envelope``), and the codec of formats whose message is a Kafka record (``kafka_records``). What
the contract and the envelopes share with the formats (typed text, time units) is ``cdcformats.core``.

Private to ``cdcformats.codecs``: a format module imports the kit and the contract (``cdcformats.contract``), never
another format module, and nothing outside the formats imports the kit.
"""
