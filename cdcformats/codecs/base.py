"""Deprecated: ``cdcformats.codecs.base`` is now ``cdcformats.contract`` (the codec contract).

This name works until 0.3.
"""

import importlib
import warnings

_moved = importlib.import_module("cdcformats.contract")
globals().update({name: value for name, value in vars(_moved).items() if not name.startswith("__")})
warnings.warn("cdcformats.codecs.base is deprecated: import cdcformats.contract", DeprecationWarning, stacklevel=2)
