"""The canonical envelopes and the canonical event's other containers: the ``avro`` and ``protobuf`` formats (with
``avro_body`` and ``protobuf_body``, their bodies written and read straight from and into the model, and ``varint``,
the base-128 integers both frame with), and ``arrow``, the event as Arrow data for Spark and batch decoders.

The adapters (``kafka``, ``spark``, ``schema_registry``) may import these: they are the event's own forms, not
another format's.
"""
