"""Write processors: WARCWriterProcessor (WARC files via warcio) and MirrorWriterProcessor."""

from processors.write.mirror_path import MirrorPathMapper
from processors.write.mirror_writer import MirrorWriterParams, MirrorWriterProcessor
from processors.write.warc_writer import WARCWriterParams, WARCWriterProcessor

__all__ = [
    "MirrorPathMapper",
    "MirrorWriterParams",
    "MirrorWriterProcessor",
    "WARCWriterParams",
    "WARCWriterProcessor",
]
