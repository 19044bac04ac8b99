"""Write processors: WARCWriterProcessor (WARC files via warcio)."""

from processors.write.warc_writer import WARCWriterParams, WARCWriterProcessor

__all__ = ["WARCWriterParams", "WARCWriterProcessor"]
