"""Test settings shared by every suite.

Hypothesis runs 500 examples per property by default (the project's bar for CI); set HYPOTHESIS_PROFILE=dev for a
quick local run.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=50, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
