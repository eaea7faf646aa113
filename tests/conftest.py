"""Test settings shared by every suite.

Hypothesis runs 500 examples per property by default (the project's bar for CI); set HYPOTHESIS_PROFILE=dev for a
quick local run.

``make test`` runs the tests on two processes (pytest-xdist). The integration tests share one of them, in order: they
start brokers, Spark and servers, and wait on them with timeouts that a second one competing for the cores would make
flaky.
"""

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

INTEGRATION = Path(__file__).parent / "integration"


# First: pytest-xdist's worker registers its own hook after this file, so it runs earlier unless told otherwise, and
# reads the xdist_group marks into the test ids it schedules by before they are here. (pytest 9.2 makes that renaming
# ineffective, pytest-xdist issue #1386, so pyproject.toml keeps pytest below 9.2.)
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if INTEGRATION in item.path.parents:
            item.add_marker(pytest.mark.xdist_group("integration"))


settings.register_profile("ci", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=50, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
