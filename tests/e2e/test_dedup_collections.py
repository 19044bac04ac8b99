"""A recrawl deduplicated against the first crawl's CDXJ index (file or CDX server).

The sample site is crawled, the crawl's WARCs are indexed into a sorted CDXJ file, a few pages
change, and a second crawl names the index in ``dedup.collections``: unchanged payloads become
``identical-payload-digest`` revisits referring to the first crawl's captures (URI, date,
digest), changed pages are written in full, and warcio reads every record.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from support.crawllog_parser import CrawlLogLine, parse_file
from support.sample_crawl import crawl_sample_site
from support.warc_checks import warcio_check
from warcio.archiveiterator import ArchiveIterator

from crawler.archive import run_index
from crawler.control.controller import CrawlController
from crawler.demo import SampleSite
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"


def crawl(site: SampleSite, run_dir: Path, *extra: str) -> CrawlController:
    return crawl_sample_site(site, run_dir, "toe_threads=4", *extra)


def index_run(run_dir: Path) -> Path:
    """The run's CDXJ indexes brought up to date (``crawler index``); the run directory,
    which ``dedup.collections[].cdxj`` may name as it is."""
    report = run_index.index_run(run_dir)
    assert not report.problems and list((run_dir / "indexes").glob("*.cdxj"))
    return run_dir


def records(run_dir: Path) -> list[tuple[str, dict[str, str]]]:
    """(type, headers) of every record of every WARC of the run, each file warcio-checked."""
    out = []
    for path in sorted((run_dir / "warcs").glob("*.warc.gz")):
        warcio_check(path)
        with path.open("rb") as fh:
            for record in ArchiveIterator(fh):
                out.append((record.rec_type, dict(record.rec_headers.headers)))
    return out


def warc_bytes(run_dir: Path) -> int:
    return sum(p.stat().st_size for p in (run_dir / "warcs").glob("*.warc.gz"))


def fetched(run_dir: Path) -> dict[str, CrawlLogLine]:
    return {
        line.uri: line
        for line in parse_file(run_dir / "logs" / "crawl.log")
        if line.status > 0 and not line.uri.startswith("dns:")
    }


@pytest.fixture
def first_crawl(tmp_path: Path) -> Iterator[tuple[SampleSite, Path]]:
    with SampleSite(ports=(0,), pages_per_host=30) as site:
        crawl(site, tmp_path / "first")
        yield site, tmp_path / "first"


def captures_by_key(run_dir: Path) -> dict[tuple[str, str, str], str]:
    """(URI, WARC date to the second, digest) -> record type, for the run's responses."""
    out = {}
    for kind, h in records(run_dir):
        if kind == "response" and not h["WARC-Target-URI"].startswith("dns:"):
            date = h["WARC-Date"][:19] + "Z"
            out[(h["WARC-Target-URI"], date, h["WARC-Payload-Digest"])] = kind
    return out


def check_recrawl(first: Path, second: Path, changed: set[str]) -> None:
    """Revisits refer to a capture of the same payload (in the first crawl, or earlier in this
    one: URL-agnostic dedup); changed pages and new payloads are responses; every page that
    the first crawl wrote in full and that did not change is a revisit of the first crawl."""
    first_captures = captures_by_key(first)
    originals = first_captures | captures_by_key(second)
    first_kinds = {
        h["WARC-Target-URI"]: k for k, h in records(first) if k in ("response", "revisit")
    }
    logged = fetched(second)
    seen: dict[str, str] = {}
    refers_to_first = 0
    for kind, h in records(second):
        uri = h.get("WARC-Target-URI", "")
        if kind not in ("response", "revisit") or uri.startswith("dns:"):
            continue
        seen[uri] = kind
        if kind == "revisit":
            assert h["WARC-Profile"] == PROFILE
            date = h["WARC-Refers-To-Date"][:19] + "Z"
            key = (h["WARC-Refers-To-Target-URI"], date, logged[uri].digest)
            assert key in originals, (uri, key)  # a capture of this very payload
            refers_to_first += key in first_captures
            assert h["WARC-Payload-Digest"] == logged[uri].digest
            assert "duplicate:digest" in logged[uri].annotations
    assert set(seen) == set(logged)
    for uri in changed:
        assert seen[uri] == "response", uri
        assert "duplicate:digest" not in logged[uri].annotations
    unchanged = {u for u in seen if u not in changed and first_kinds.get(u) == "response"}
    unchanged = {u for u in unchanged if logged[u].size > 0}
    assert unchanged and all(seen[u] == "revisit" for u in unchanged), {
        u: seen[u] for u in unchanged if seen[u] != "revisit"
    }
    assert refers_to_first >= len(unchanged)


def test_a_recrawl_against_the_first_crawls_cdxj_writes_revisits(
    first_crawl: tuple[SampleSite, Path], tmp_path: Path
) -> None:
    site, first = first_crawl
    index = index_run(first)
    pages = sorted(u for u, line in fetched(first).items() if line.mime == "text/html")
    changed = set(pages[1:4])
    origin = site.content.origins[0]
    for url in changed:
        site.change(url, site.content.hosts[origin][url[len(origin) :]].body + b"<!-- edited -->")
    second = tmp_path / "second"
    controller = crawl(site, second, f"dedup.collections=[{{cdxj: {json.dumps(str(index))}}}]")
    check_recrawl(first, second, changed)
    assert warc_bytes(second) < warc_bytes(first)
    report = (second / "reports" / "processors-report.txt").read_text()
    assert f"{index}: " in report and "earlier collections:" in report
    assert controller.exit_status == "Finished"


class IndexServer(ThreadingHTTPServer):
    """A CDX server over a CDXJ file: ``/coll/cdx?url=…&output=json`` answers every line whose
    ``url`` is the one asked, one JSON object per line, as pywb does."""

    daemon_threads = True

    def __init__(self, index: Path) -> None:
        super().__init__(("127.0.0.1", 0), IndexHandler)
        self.by_url: dict[str, list[bytes]] = {}
        lines = [
            ln for p in (index / "indexes").glob("*.cdxj") for ln in p.read_text().splitlines()
        ]
        for line in lines:
            _, ts, fields = line.split(" ", 2)
            entry = {**json.loads(fields), "timestamp": ts}
            self.by_url.setdefault(entry["url"], []).append(json.dumps(entry).encode() + b"\n")
        self.queries = 0


class IndexHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        server: IndexServer = self.server  # type: ignore[assignment]
        server.queries += 1
        url = parse_qs(urlsplit(self.path).query)["url"][0]
        body = b"".join(server.by_url.get(url, []))
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_recrawl_against_a_cdx_server(
    first_crawl: tuple[SampleSite, Path], tmp_path: Path
) -> None:
    site, first = first_crawl
    server = IndexServer(index_run(first))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}/coll/cdx"
        second = tmp_path / "second"
        crawl(site, second, f"dedup.collections=[{{cdx_server: '{endpoint}'}}]")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    assert server.queries > 0
    check_recrawl(first, second, set())
    assert "dedup_cdx_server_down" not in (second / "logs" / "alerts.log").read_text()


def test_a_cdx_server_that_is_down_means_full_records_and_an_alert(
    first_crawl: tuple[SampleSite, Path], tmp_path: Path, free_port: int
) -> None:
    site, first = first_crawl
    second = tmp_path / "second"
    endpoint = f"http://127.0.0.1:{free_port}/coll/cdx"
    controller = crawl(site, second, f"dedup.collections=[{{cdx_server: '{endpoint}'}}]")
    assert controller.exit_status == "Finished"
    assert set(fetched(second)) == set(fetched(first))  # every fetch went on
    own = captures_by_key(second)
    for kind, h in records(second):  # revisits only of this crawl's own captures: no dedup
        if kind == "revisit":  # against the collection, as in a first crawl
            date = h["WARC-Refers-To-Date"][:19] + "Z"
            key = (h["WARC-Refers-To-Target-URI"], date, h["WARC-Payload-Digest"])
            assert key in own
    alerts = (second / "logs" / "alerts.log").read_text()
    assert alerts.count("dedup_cdx_server_down") == 1 and endpoint in alerts


def test_a_missing_index_file_is_an_order_error(tmp_path: Path) -> None:
    with SampleSite(ports=(0,), pages_per_host=20) as site:
        order = load_order(
            EXAMPLE,
            [f"seeds.urls={site.base_urls!r}", "dedup.collections=[{cdxj: no/such.cdxj}]"],
        )
        from crawler.order.errors import OrderError

        with pytest.raises(OrderError, match=r"dedup\.collections\[0\]\.cdxj.*no such index"):
            CrawlController(order, tmp_path / "run", install_signals=False).run()
