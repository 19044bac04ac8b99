"""Helpers of the recrawl tests: crawl.log lines by URI, WARC records by type, the 304s."""

from __future__ import annotations

from pathlib import Path

from support.crawllog_parser import CrawlLogLine, parse_file
from support.warc_checks import warcio_check
from warcio.archiveiterator import ArchiveIterator

NOT_MODIFIED = "duplicate:server-not-modified"
REVISIT_304 = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
"""The profile of a 304's revisit once its earlier payload was read back (replays in pywb)."""
HERITRIX_304 = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"


def crawl_log(run_dir: Path) -> dict[str, CrawlLogLine]:
    """The last crawl.log line of each http(s) URI of the run (and of its workers)."""
    logs = [run_dir / "logs" / "crawl.log"]
    logs += sorted(run_dir.glob("workers/*/logs/crawl.log"))
    out: dict[str, CrawlLogLine] = {}
    for log in logs:
        if log.is_file():
            for line in parse_file(log):
                if line.uri.startswith(("http://", "https://")):
                    out[line.uri] = line
    return out


def reached(run_dir: Path) -> set[str]:
    """The http(s) URIs the run fetched (any status the server gave, 304 included)."""
    return {uri for uri, line in crawl_log(run_dir).items() if line.status > 0}


def warc_records(run_dir: Path) -> list[tuple[str, dict[str, str]]]:
    """(type, WARC headers) of every record of every WARC of the run and of its workers,
    each file checked with ``warcio check``."""
    out = []
    paths = sorted(run_dir.glob("warcs/*.warc.gz*")) + sorted(
        run_dir.glob("workers/*/warcs/*.warc.gz*")
    )
    for path in paths:
        if path.name.endswith(".warc.gz"):
            warcio_check(path)
        with path.open("rb") as fh:
            for record in ArchiveIterator(fh):
                out.append((record.rec_type, dict(record.rec_headers.headers)))
    return out


def warc_bytes(run_dir: Path) -> int:
    """Bytes of the run's WARC files (its workers' too)."""
    paths = list(run_dir.glob("warcs/*.warc.gz*")) + list(run_dir.glob("workers/*/warcs/*"))
    return sum(p.stat().st_size for p in paths)


def not_modified(run_dir: Path) -> set[str]:
    """URIs whose crawl.log line is a 304 annotated as a revisit."""
    return {
        uri
        for uri, line in crawl_log(run_dir).items()
        if line.status == 304 and NOT_MODIFIED in line.annotations
    }
