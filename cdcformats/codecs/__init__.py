"""The built-in formats, one module each, plus ``base`` (what every format plugin is).

The package is named ``codecs`` rather than ``formats`` so that it never shadows the public ``cdcformats.formats()``.
"""
