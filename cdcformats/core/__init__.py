"""What the contract, the envelopes and the formats share, below all of them: what a message or event that cannot be
converted does (``error_modes``).

The core imports nothing of cdcformats but the model and the errors.
"""
