"""Services shared by the integration tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cdcformats.kafka.broker import LocalBroker, local_broker


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[LocalBroker]:
    """A real Apache Kafka broker (KRaft, one node, cdcformats.kafka.broker) for the whole session: its
    ``bootstrap_servers`` reach it. Tests share it, so each uses topics and groups of its own (a uuid in the name).
    Under pytest-xdist each worker that asks for it starts its own. Its jars come from ``make kafka``'s cache (or are
    fetched by the first start)."""
    with local_broker() as broker:
        yield broker
