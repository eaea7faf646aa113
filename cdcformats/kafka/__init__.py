"""Kafka for every format: serializers and deserializers for confluent-kafka producers and consumers (``serdes``),
and the bridge that converts one topic into another (``bridge``, ``cdcformats bridge``).

    from cdcformats.kafka import ChangeEventKeySerializer, ChangeEventSerializer
"""

from .serdes import ChangeEventDeserializer, ChangeEventKeySerializer, ChangeEventSerializer, registry_options

__all__ = ["ChangeEventDeserializer", "ChangeEventKeySerializer", "ChangeEventSerializer", "registry_options"]
