"""EarlierPayload: a 304's recording filled with the payload the earlier capture stored.

A 304 has no body, so without help a recrawl extracts no links from an unchanged page and
stops at its seed. The crawl history names the record holding the page's payload (the earlier
``response``, never a revisit: revisits do not chain), by WARC file name and offset.
:meth:`EarlierPayload.load` reads that record back (warcio is the reader) and:

* appends its payload, as stored (content-encoding kept), to the 304's
  :class:`~crawler.recording.Recording`, whose request and response heads stay the 304
  exchange's: the WARC writer still writes a ``server-not-modified`` revisit of the 304 head,
  never the old payload again, and crawl.log still shows status 304, size 0 and
  ``duplicate:server-not-modified``;
* sets ``curi.response_headers`` to the stored response's headers updated by the 304's, as a
  cache freshens a stored response (RFC 9111 4.3.4; Content-Length and hop-by-hop headers are
  kept from the stored response), and ``content_type`` from them;
* sets ``curi.earlier_status`` to the stored status, so extractors that want a 2xx payload read
  ``curi.payload_status``;
* with ``with_outlinks`` (the order's browser is on), for an HTML page also adds the outlinks
  of the earlier capture's ``metadata`` record (when the capture is the URI's own), which hold
  the rendered DOM's links of a browser-captured page (the browser does not load a 304 again).
  The extractors then find the document's own links a second time: harmless (the frontier
  drops the repeats) but counted twice against an extractor's ``max_outlinks``.

Then the extract chain runs unchanged, so hop paths, scope, trap budgets and quotas decide as
in the earlier crawl. Nothing is stored per URI beyond the history entry the crawl keeps anyway.

A record that cannot be read (file gone, damaged, another record at that offset) leaves the
304 as it was, annotated ``earlierPayload:missing`` or ``earlierPayload:unreadable``, logged once
per WARC file (``earlier_payload_unread``); the crawl goes on.

Thread-safe: each call reads its own file handle; counters and the set of files reported
change under a lock held for no I/O.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crawler.continuity.warc_locator import WarcLocator, earlier_runs, warc_directories
from crawler.crawler_error import CrawlerError
from crawler.curi import CrawlURI, Hop, Link

if TYPE_CHECKING:
    from crawler.history import CrawlHistory, FetchHistoryEntry
    from crawler.recording import Recording

MISSING = "earlierPayload:missing"
UNREADABLE = "earlierPayload:unreadable"
_BROWSER_TYPES = ("text/html", "application/xhtml+xml")  # what FetchBrowser loads
_CHUNK_BYTES = 64 * 1024
_MAX_METADATA_BYTES = 8 * 1024 * 1024
_RECORDS_AFTER_RESPONSE = 3  # request, metadata, and one spare
_NOT_FRESHENED = frozenset(
    {
        "content-length",
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "x-crawler-transfer-encoding",
    }
)


class UnreadableCaptureError(CrawlerError):
    """The record at the history entry's offset is not the capture it names."""


def freshened(stored: list[tuple[str, str]], fresh: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``stored`` response headers updated by a 304's ``fresh`` ones (each name the 304 sends
    replaces all stored ones of that name, except Content-Length and hop-by-hop headers)."""
    replaced = {name.lower() for name, _ in fresh} - _NOT_FRESHENED
    kept = [(name, value) for name, value in stored if name.lower() not in replaced]
    return kept + [(name, value) for name, value in fresh if name.lower() in replaced]


def outlinks_of(block: bytes) -> Iterator[Link]:
    """The ``outlink: URI HOP CONTEXT`` lines of a metadata record's block."""
    for raw in block.split(b"\n"):
        if not raw.startswith(b"outlink: "):
            continue
        parts = raw[9:].rstrip(b"\r").decode("utf-8", "replace").split(" ", 2)
        if len(parts) < 2 or len(parts[1]) != 1 or parts[1] not in Hop.ALL:
            continue
        if not parts[0].startswith(("http://", "https://")):
            continue
        context = parts[2] if len(parts) > 2 and parts[2] != "-" else ""
        yield Link(parts[0], parts[1], context)


class EarlierPayload:
    """Loads earlier captures into 304 recordings (see the module docstring)."""

    def __init__(self, locator: WarcLocator, logger: Any = None, with_outlinks: bool = False):
        self.locator = locator
        self.with_outlinks = with_outlinks
        self._logger = logger
        self._lock = threading.Lock()
        self._reported: set[str] = set()
        self.loaded = 0
        self.unread = 0

    @classmethod
    def for_crawl(
        cls, run_dir: Path, history: CrawlHistory | None, logger: Any, with_outlinks: bool
    ) -> EarlierPayload:
        """For a crawl in ``run_dir``: its own WARCs, then those of the runs whose histories
        ``history`` imported, then those of the runs they had imported, and so on back."""
        runs = [run_dir]
        if history is not None:
            runs += earlier_runs(history.imported_from)
        return cls(WarcLocator(warc_directories(runs)), logger, with_outlinks)

    def load(self, curi: CrawlURI, rec: Recording, entry: FetchHistoryEntry) -> bool:
        """Fill ``rec`` (the 304's, still without body) and ``curi`` from the capture ``entry``
        names; False (annotated, logged) if it cannot be read."""
        if rec.body_size or not entry.warc_filename or entry.warc_offset is None:
            return False
        path = self.locator.find(entry.warc_filename)
        if path is None:
            self._unread(curi, MISSING, entry.warc_filename, "file not found")
            return False
        try:
            self._read(curi, rec, entry, path)
        except Exception as exc:  # noqa: BLE001 - any damage to the old file: note it, go on
            self._unread(curi, UNREADABLE, entry.warc_filename, f"{type(exc).__name__}: {exc}")
            return False
        with self._lock:
            self.loaded += 1
        return True

    def report(self) -> list[str]:
        """Lines for processors-report.txt."""
        with self._lock:
            return [f"  earlier payloads loaded for 304s: {self.loaded} (unread: {self.unread})"]

    # ----------------------------------------------------------------- reading
    def _read(self, curi: CrawlURI, rec: Recording, entry: FetchHistoryEntry, path: Path) -> None:
        from warcio.archiveiterator import ArchiveIterator

        target = entry.warc_target_uri or curi.uri
        with path.open("rb") as fh:
            fh.seek(entry.warc_offset or 0)
            records = iter(ArchiveIterator(fh, check_digests=False))
            record = next(records)
            headers = record.rec_headers
            if record.rec_type != "response" or headers.get_header("WARC-Target-URI") != target:
                raise UnreadableCaptureError(f"no response record of {target} at that offset")
            record_id = headers.get_header("WARC-Record-ID")
            if entry.warc_record_id and record_id != entry.warc_record_id:
                raise UnreadableCaptureError(f"record {record_id} is not {entry.warc_record_id}")
            http = record.http_headers
            if http is None:
                raise UnreadableCaptureError("the response record has no HTTP head")
            status = int(http.get_statuscode() or 0)
            stream = record.raw_stream
            while chunk := stream.read(_CHUNK_BYTES):
                rec.write_body(chunk)
            curi.earlier_status = status
            curi.response_headers = freshened(list(http.headers), curi.response_headers)
            curi.content_type = curi.header("content-type")
            # Another URI's metadata (its payload held this one's) lists links of another base.
            own = target == curi.uri
            if self.with_outlinks and own and curi.mime_type in _BROWSER_TYPES:
                self._add_outlinks(curi, records, record_id)

    @staticmethod
    def _add_outlinks(curi: CrawlURI, records: Iterator[Any], record_id: str) -> None:
        """The outlinks of the metadata record concurrent to ``record_id`` (written just after
        it), each URI once."""
        for _, record in zip(range(_RECORDS_AFTER_RESPONSE), records, strict=False):
            if record.rec_headers.get_header("WARC-Concurrent-To") != record_id:
                return
            if record.rec_type != "metadata":
                continue
            block = record.content_stream().read(_MAX_METADATA_BYTES)
            seen = {link.uri for link in curi.outlinks}
            for link in outlinks_of(block):
                if link.uri not in seen:
                    seen.add(link.uri)
                    curi.outlinks.append(link)
            return

    def _unread(self, curi: CrawlURI, note: str, filename: str, reason: str) -> None:
        curi.annotate(note)
        with self._lock:
            self.unread += 1
            first = filename not in self._reported
            self._reported.add(filename)
        if first and self._logger is not None:
            self._logger.warning(
                "earlier_payload_unread", uri=curi.uri, warc=filename, reason=reason
            )
