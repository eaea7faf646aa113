"""Deprecated: ``cdcformats.plugins`` is now ``cdcformats.registry`` (the plugin registry).

This name works until 0.3.
"""

import importlib
import warnings

_moved = importlib.import_module("cdcformats.registry")
globals().update({name: value for name, value in vars(_moved).items() if not name.startswith("__")})
warnings.warn("cdcformats.plugins is deprecated: import cdcformats.registry", DeprecationWarning, stacklevel=2)
