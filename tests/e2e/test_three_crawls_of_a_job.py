"""Three crawls of one job share its digest index with no setting: the third crawl's revisits
refer to the first crawl's records (and the second's), also under a URI the first crawl never
saw, and one of them replays through pywb from the earlier run's WARC.

A local site changes between crawls: ``/a`` never changes, ``/b`` changes before crawl 2, and
crawl 3 finds ``/x``, a new URI serving ``/a``'s payload.
"""

from __future__ import annotations

import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from support.route_server import Answer, RouteServer
from support.warc_checks import warcio_check
from warcio.archiveiterator import ArchiveIterator

from crawler.archive import run_index
from crawler.archive.collection import collection_from_run, earlier_runs
from crawler.archive.replay import ReplayError, ReplayServer, find_wayback
from crawler.continuity import LevelDBDigestIndex
from crawler.control.controller import CrawlController, new_run_dir
from crawler.order.loader import load_order

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(180)]

A = b"<html><body>" + b"a page that never changes " * 40 + b"</body></html>"
B1 = b"<html><body>" + b"the first version of b " * 40 + b"</body></html>"
B2 = b"<html><body>" + b"the second version of b " * 40 + b"</body></html>"


class ChangingSite:
    """The site of crawl ``version`` (1, 2 or 3)."""

    def __init__(self) -> None:
        self.version = 1

    def route(self, host: str, path: str) -> Answer:
        links = ["/a", "/b"] + (["/x"] if self.version >= 3 else [])
        pages = {
            "/": "".join(f'<a href="{link}">{link}</a>' for link in links).encode(),
            "/a": A,
            "/b": B1 if self.version == 1 else B2,
        }
        if self.version >= 3:
            pages["/x"] = A
        body = pages.get(path)
        return (200, {}, body) if body is not None else (404, {}, b"not here")


@pytest.fixture
def site() -> Iterator[tuple[ChangingSite, RouteServer]]:
    changing = ChangingSite()
    with RouteServer(changing.route) as server:
        yield changing, server


def write_job(job: Path, origin: str) -> Path:
    job.mkdir()
    order = {
        "name": "digest-job",
        "operator": {"contact_url": "https://example.org/about"},
        "seeds": {"urls": [origin + "/"]},
        "toe_threads": 2,
        "robots": {"policy": "ignore"},
        "frontier": {"politeness": {"delay_factor": 0, "min_delay_ms": 0, "max_delay_ms": 0}},
        "logging": {"console": False, "display": False},
    }  # no digest_index key: the job's index is on by default
    path = job / "order.yaml"
    path.write_text(yaml.safe_dump(order), encoding="utf-8")
    return path


def crawl(order_path: Path, now_s: float) -> Path:
    run_dir = new_run_dir(order_path.parent, now_s)
    controller = CrawlController(load_order(order_path, []), run_dir, install_signals=False)
    assert controller.run() == 0
    return run_dir


def captures(run_dir: Path, origin: str) -> dict[str, dict[str, str]]:
    """Path -> headers of the run's response or revisit record of that URI."""
    out = {}
    for warc in sorted((run_dir / "warcs").glob("*.warc.gz")):
        warcio_check(warc)
        with warc.open("rb") as fh:
            for record in ArchiveIterator(fh):
                if record.rec_type in ("response", "revisit"):
                    headers = dict(record.rec_headers.headers)
                    path = headers["WARC-Target-URI"].removeprefix(origin)
                    if path in ("/", "/a", "/b", "/x"):  # not /favicon.ico
                        out[path] = headers
    return out


def test_the_third_crawl_of_a_job_revisits_the_first_two(
    site: tuple[ChangingSite, RouteServer], tmp_path: Path
) -> None:
    changing, server = site
    origin = server.origin()
    order = write_job(tmp_path / "job", origin)
    first = crawl(order, 1_800_000_000)
    changing.version = 2
    second = crawl(order, 1_800_086_400)
    changing.version = 3
    third = crawl(order, 1_800_172_800)
    one, two, three = (captures(run, origin) for run in (first, second, third))

    assert {p: h["WARC-Type"] for p, h in one.items()} == {
        "/": "response", "/a": "response", "/b": "response",
    }  # fmt: skip
    assert two["/a"]["WARC-Type"] == "revisit" and two["/b"]["WARC-Type"] == "response"
    for path, original in (("/a", one["/a"]), ("/x", one["/a"]), ("/b", two["/b"])):
        revisit = three[path]
        assert revisit["WARC-Type"] == "revisit", path
        assert revisit["WARC-Profile"].endswith("/revisit/identical-payload-digest")
        assert revisit["WARC-Refers-To-Target-URI"] == original["WARC-Target-URI"], path
        assert revisit["WARC-Refers-To-Date"] == original["WARC-Date"], path
        assert revisit["WARC-Refers-To"] == original["WARC-Record-ID"], path
        assert revisit["WARC-Payload-Digest"] == original["WARC-Payload-Digest"], path
    # Every run handed its payloads to the job's index and owes it nothing.
    assert not list((tmp_path / "job" / "runs").glob("*/state/digest-index.pending"))
    with LevelDBDigestIndex(tmp_path / "job" / "digest-index") as job_index:
        entry = job_index.lookup(one["/a"]["WARC-Payload-Digest"])
        assert entry is not None and entry.warc_record_id == one["/a"]["WARC-Record-ID"]
        # /, / with /x, /a, /b twice, the 404 page (/favicon.ico)
        assert len(job_index) == 6

    # Replay: the collection of crawl 3 holds the job's earlier runs; /x, a URI crawl 1 never
    # fetched, replays at crawl 3's time with crawl 1's payload of /a.
    try:
        find_wayback()
    except ReplayError as exc:
        pytest.fail(f"pywb is part of the set-up (make install): {exc}")
    for run in (first, second, third):
        run_index.index_run(run)
    assert sorted(earlier_runs(third)) == [first.resolve(), second.resolve()]
    collection = collection_from_run(third, tmp_path / "pywb")
    stamp = "".join(ch for ch in three["/x"]["WARC-Date"] if ch.isdigit())[:14]
    with ReplayServer(collection) as replay:
        url = f"{replay.prefix}{stamp}id_/{origin}/x"
        with urllib.request.urlopen(url, timeout=30) as response:
            assert response.read() == A
            memento = response.headers["Memento-Datetime"]
    assert memento is not None
    assert memento.endswith(f"{stamp[0:4]} {stamp[8:10]}:{stamp[10:12]}:{stamp[12:14]} GMT")


def test_a_job_index_that_cannot_be_opened_is_a_clear_error(
    site: tuple[ChangingSite, RouteServer], tmp_path: Path
) -> None:
    _, server = site
    order = write_job(tmp_path / "job", server.origin())
    (tmp_path / "job" / "not-a-directory").write_text("x")
    result = subprocess.run(
        [sys.executable, "-m", "crawler", "run", str(order),
         "--set", "digest_index.job_index=not-a-directory"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert result.stderr.startswith("invalid crawl order: 1 error")  # the order errors' format
    (line,) = [ln for ln in result.stderr.splitlines() if "not-a-directory" in ln]
    assert "- digest_index: cannot open the digest index" in line
