"""cdcformats: convert change-data-capture streams between formats through one canonical change event.

    import cdcformats as cf
    cf.formats()                                   # the registered formats
    codec = cf.codec("avro")                       # a configured codec; unknown names and options are errors
    events = codec.decode(messages)                # a lazy iterator of ChangeEvent
    cf.convert(messages, "protobuf", "avro")       # a lazy iterator of target messages
    cf.loss("protobuf", "avro")                    # the canonical features such a conversion drops

Importing this package is cheap: formats and adapters (Spark, Kafka) load when first asked for.
"""

from .contract import FEATURES, Codec, KafkaRecord, Option
from .convert import convert, convert_file, loss
from .errors import CdcFormatsError, CodecError, ConfigurationError, DecodeError, EncodeError, LossyConversionError
from .losses import REFUSED, Loss, without
from .model import Cell, CellKind, ChangeEvent, Op, Source, Struct, Table, Value
from .pipeline import ConversionStats
from .registry import codec, formats, register
from .tables import Column, ColumnType, SchemaConflict, TableSchema

__version__ = "0.1.0"

__all__ = [
    "FEATURES", "Cell", "CellKind", "ChangeEvent", "CdcFormatsError", "Codec", "CodecError", "Column", "ColumnType",
    "ConfigurationError", "ConversionStats", "DecodeError", "EncodeError", "KafkaRecord", "Loss",
    "LossyConversionError", "Op", "Option", "REFUSED", "SchemaConflict", "Source", "Struct", "Table", "TableSchema",
    "Value", "codec", "convert", "convert_file", "formats", "loss", "register", "without",
]
