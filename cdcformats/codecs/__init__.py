"""The built-in formats, one module each, read as that format's spec; ``_kit`` holds what they share.

The package is named ``codecs`` rather than ``formats`` so that it never shadows the public ``cdcformats.formats()``.
What every format is (the contract) lives in ``cdcformats.contract``; the canonical envelopes in
``cdcformats.envelopes``; what the contract, the envelopes and the formats share in ``cdcformats.core``.
"""
