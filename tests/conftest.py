"""Test settings shared by every suite.

Hypothesis runs 300 examples per property by default (the project's bar for CI, which keeps ``make test`` within
10 minutes on two cores); set HYPOTHESIS_PROFILE=dev for a quick local run, or HYPOTHESIS_PROFILE=thorough for 2,000.

``make test`` runs the tests on three processes (pytest-xdist). The integration tests keep to two of them, the Spark
ones to one and the others to another, each in order: they start brokers, Spark and servers, and wait on them.

No test touches the user's own files: before anything is imported, ``CDCFORMATS_SCHEMA_REGISTRY`` and the XDG data
directory point into a temporary directory of this run, and the run fails if the user's default registry file changed
all the same.
"""

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# The user's default registry file, as cdcformats would find it without the settings below (platformdirs' rule on
# Linux), and how it stood before the tests ran.
USER_REGISTRY = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "cdcformats" / \
    "schema-registry.sqlite"


def standing(path: Path) -> tuple[int, int] | None:
    try:
        status = path.stat()
    except FileNotFoundError:
        return None
    return status.st_size, status.st_mtime_ns


USER_REGISTRY_BEFORE = standing(USER_REGISTRY)
_ISOLATED = Path(tempfile.mkdtemp(prefix="cdcformats-tests-"))
os.environ["CDCFORMATS_SCHEMA_REGISTRY"] = str(_ISOLATED / "schema-registry.sqlite")
os.environ["XDG_DATA_HOME"] = str(_ISOLATED / "data")

INTEGRATION = Path(__file__).parent / "integration"


# First: pytest-xdist's worker registers its own hook after this file, so it runs earlier unless told otherwise, and
# reads the xdist_group marks into the test ids it schedules by before they are here. (pytest 9.2 makes that renaming
# ineffective, pytest-xdist issue #1386, so pyproject.toml keeps pytest below 9.2.)
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Integration tests share services, so each file stays on one worker; the Spark files, each with a session of its
    # own, go to one worker and the others (Kafka, the command line, the demo, the README) to another, so that the
    # two halves run side by side rather than one after the other. --dist loadgroup hands a worker each group first
    # (the largest units), and the other tests one by one to whichever worker is free: with `make test`'s three
    # workers, the third runs them while the groups wait on their services.
    for item in items:
        if INTEGRATION in item.path.parents:
            group = "integration-spark" if "spark" in item.path.stem else "integration"
            item.add_marker(pytest.mark.xdist_group(group))


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist registers its mark only when it is loaded: with -p no:xdist (one process) --strict-markers would
    # refuse the marks above.
    config.addinivalue_line("markers", "xdist_group(name): run every test of the group on one pytest-xdist worker")


settings.register_profile("ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=2_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=50, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when the user's default registry file changed while the tests ran."""
    if standing(USER_REGISTRY) != USER_REGISTRY_BEFORE:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        print(f"\nFAILED: the tests changed the user's schema registry file {USER_REGISTRY}; a test must use "
              "CDCFORMATS_SCHEMA_REGISTRY (tests/conftest.py sets it)")
