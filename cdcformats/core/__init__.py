"""What the contract, the envelopes and the formats share, below all of them: the SQL type names sources send and the
column types they declare (``sql_types``), values as typed text (``typed_text``), times in the units formats write
them (``time_units``), and what a message or event that cannot be converted does (``error_modes``).

The core imports nothing of cdcformats but the model and the errors.
"""
