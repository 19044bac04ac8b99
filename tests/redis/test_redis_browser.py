"""A browser crawl shared through Redis: two worker processes crawl the JavaScript test site,
the page's sub-resources are fetched by the browser and claimed crawl-wide, so no worker's HTTP
path fetches them again — every resource is in the crawl.logs and the WARCs once."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import pytest
from support.crawllog_parser import parse_file
from support.redis_servers import RedisServer
from warcio.archiveiterator import ArchiveIterator

from crawler.demo.js_site import JsSite, item_uris
from crawler.distributed import run_workers

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
STORE = "crawler.frontier.redis.redis_store.RedisQueueStore"
CHROMIUM = Path("/usr/bin/chromium")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(180),
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no {CHROMIUM}: `make test` installs it"),
]


def test_two_workers_capture_and_log_every_resource_once(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    store = {"class": STORE, "params": {"url": redis_server.url, "shards": 4}}
    with JsSite() as site:
        base = site.base
        sets = [
            f"seeds.urls=['{site.url('/')}']",
            "seeds.file=null",
            "name=redis-browser",
            "toe_threads=3",
            "logging.console=false",
            f"frontier.store={json.dumps(store)}",
            "browser.enabled=true",
        ]
        out, err = io.StringIO(), io.StringIO()
        assert run_workers(EXAMPLE, sets, 2, out, err, run_dir=run) == 0, err.getvalue()
    lines = [line for p in run.glob("workers/*/logs/crawl.log") for line in parse_file(p)]
    logged = Counter(line.uri for line in lines)
    assert [uri for uri, n in logged.items() if n > 1] == []
    by_uri = {line.uri: line for line in lines}
    # The browser fetched the script-built resources (they exist only for a script) ...
    browsed = [base + p for p in ("/js/app.js", "/css/theme.css", "/api/items?page=3")]
    browsed += [base + "/fonts/demo.woff2", base + "/img/lazy.png"]
    for uri in browsed:
        assert by_uri[uri].status == 200 and "browser" in by_uri[uri].annotations, uri
    # ... and the links found in its rendered DOM were crawled by the workers' HTTP path.
    assert all(by_uri[uri].status == 200 for uri in item_uris(base))
    # The shell's static links (its stylesheet and script) were fetched by the browser first:
    # claimed crawl-wide, the HTTP path of neither worker fetched them again.
    assert "browser" in by_uri[base + "/css/main.css"].annotations
    captured: Counter[str] = Counter()
    for path in run.glob("workers/*/warcs/*.warc.gz"):
        with path.open("rb") as fh:
            for record in ArchiveIterator(fh):
                uri = record.rec_headers.get_header("WARC-Target-URI") or ""
                if record.rec_type in ("response", "revisit") and uri.startswith("http"):
                    captured[uri] += 1
    assert [uri for uri, n in captured.items() if n > 1] == []
    assert set(browsed) <= set(captured)
