"""ExtractorPDF: the links of PDF documents (their URI link annotations).

Runs on successful (2xx) fetches whose Content-Type is ``application/pdf`` (or ``x-pdf``) or,
unless it is HTML, whose path ends in ``.pdf``, when the body starts with ``%PDF`` within its
first KiB. Reads ``curi.recording`` (content-encoding undone); a PDF larger than
``max_size_bytes`` is not parsed (its cross-reference table is at its end, so a prefix is of no
use) and is annotated ``pdfTooLarge``. The PDF is parsed by pypdf in a worker process
(:class:`~processors.extract.pdf_worker.PdfWorkerPool`, started on the first PDF) given
``timeout_s``; the URIs of its link annotations and of an ``/OpenAction`` become L links
(context ``pdf/URI``), resolved against the document's URI, appended to ``curi.outlinks`` up to
``max_outlinks`` per URI (extra ones counted in ``dol:<n>``).

A hostile or broken PDF is an annotation, never a hang or a crash of the thread: ``pdfTimeout``
(the worker took longer than ``timeout_s`` and was killed), ``pdfEncrypted`` (needs a password),
``pdfError`` (the parser gave up, the worker died, e.g. past ``max_memory_mb``); links read
before the trouble are kept.

Thread-safety: the pool serves all threads (``max_workers`` PDFs are parsed at once; more wait
for a worker). Heritrix counterpart: ``org.archive.modules.extractor.ExtractorPDF``
(``maxSizeToParse`` 5 MiB by default there too).
"""

from __future__ import annotations

from pydantic import Field

from crawler import CrawlURI, Hop, Params, Processor, ProcessorContext
from processors.extract.link_resolver import LinkResolver
from processors.extract.outlinks import RawLink, add_links, note_dropped, path_ends_with
from processors.extract.pdf_worker import PdfWorkerPool

_PDF_TYPES = ("application/pdf", "application/x-pdf")
_MAGIC = b"%PDF"
_SNIFF_BYTES = 1024


class ExtractorPDFParams(Params):
    """Parameters of :class:`ExtractorPDF`."""

    max_outlinks: int = Field(
        6000, ge=0, description="links kept per URI; extra ones are counted as dol:<n>"
    )
    max_size_bytes: int = Field(
        5 * 1024 * 1024,
        gt=0,
        description="larger PDFs are not parsed, annotated pdfTooLarge (Heritrix: maxSizeToParse)",
    )
    timeout_s: float = Field(
        10.0, gt=0, description="longest parse of one PDF; past it pdfTimeout (worker killed)"
    )
    max_workers: int = Field(
        2, ge=1, description="worker processes parsing PDFs at once (started on first use)"
    )
    max_memory_mb: int = Field(
        1024, ge=0, description="address-space cap of a worker (a bomb ends it); 0 = none"
    )


class ExtractorPDF(Processor[ExtractorPDFParams]):
    """Extracts URI links from PDFs (see the module docstring)."""

    _pool: PdfWorkerPool | None = None

    def start(self, ctx: ProcessorContext) -> None:
        super().start(ctx)
        p = self.params
        self._pool = PdfWorkerPool(p.max_workers, p.max_memory_mb)

    def stop(self) -> None:
        pool = self._pool
        if pool is not None:
            pool.close()

    def should_process(self, curi: CrawlURI) -> bool:
        rec = curi.recording
        if not 200 <= curi.payload_status < 300 or rec is None or rec.body_size <= 0:
            return False
        mime = curi.mime_type
        if mime in _PDF_TYPES:
            return True
        return "html" not in mime and path_ends_with(curi.uri, (".pdf",))

    def inner_process(self, curi: CrawlURI) -> None:
        params = self.params
        pool = self._pool
        if pool is None:
            raise RuntimeError(f"processor {self.name!r} used before start() or after stop()")
        data: bytes = curi.recording.decoded_body(
            curi.header("content-encoding"), params.max_size_bytes + 1
        )
        if _MAGIC not in data[:_SNIFF_BYTES]:
            return
        if len(data) > params.max_size_bytes:
            curi.annotate("pdfTooLarge")
            return
        room = max(0, params.max_outlinks - len(curi.outlinks))
        found = pool.parse(data, room, params.timeout_s)
        raw: list[RawLink] = [(uri, Hop.LINK, "pdf/URI") for uri in found.uris]
        if raw:
            add_links(curi, raw, LinkResolver(curi.uri), params.max_outlinks)
        if found.dropped:
            note_dropped(curi, found.dropped)
        if found.error == "timeout":
            curi.annotate("pdfTimeout")
        elif found.error == "encrypted":
            curi.annotate("pdfEncrypted")
        elif found.error is not None:
            curi.annotate("pdfError")

    def report(self) -> list[str]:
        lines = super().report()
        pool = self._pool
        if pool is not None:
            lines.append(f"  {pool.started} PDF workers started, {pool.killed} killed")
        return lines
