"""Deprecated: ``cdcformats.arrow`` is now ``cdcformats.envelopes.arrow`` (the canonical event as Arrow data).

This name works until 0.3.
"""

import importlib
import warnings

_moved = importlib.import_module("cdcformats.envelopes.arrow")
globals().update({name: value for name, value in vars(_moved).items() if not name.startswith("__")})
warnings.warn("cdcformats.arrow is deprecated: import cdcformats.envelopes.arrow", DeprecationWarning, stacklevel=2)
