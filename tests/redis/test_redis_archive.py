"""A `--workers` crawl indexes every worker's WARCs as they close and, when the order asks,
packages all of them into one WACZ at the end (the workers do not package their own)."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from support.redis_servers import RedisServer

from crawler.archive.run_layout import warc_dirs
from crawler.demo import SampleSite
from crawler.distributed import run_workers

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
STORE = "crawler.frontier.redis.redis_store.RedisQueueStore"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def test_every_workers_warcs_are_indexed_and_packaged(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    store = {"class": STORE, "params": {"url": redis_server.url, "shards": 8}}
    sets = [
        "seeds.file=null",
        "name=archive-test",
        "toe_threads=4",
        "logging.console=false",
        f"frontier.store={json.dumps(store)}",
        "archive.wacz=true",
    ]
    run_dir = tmp_path / "run"
    out, err = io.StringIO(), io.StringIO()
    with SampleSite(pages_per_host=30) as site:
        sets.append(f"seeds.urls={site.base_urls!r}")
        assert run_workers(EXAMPLE, sets, 2, out, err, run_dir=run_dir) == 0, err.getvalue()
    dirs = warc_dirs(run_dir)
    assert [d.warcs.parent.name for d in dirs] == ["w01", "w02"]
    html = 0
    for wdir in dirs:  # how the work splits over the workers is not up to the test
        warcs = wdir.warc_files()
        assert not any(w.name.endswith(".open") for w in warcs)
        assert [i.name for i in wdir.index_files()] == [w.name + ".cdxj" for w in warcs]
        lines = [ln for i in wdir.index_files() for ln in i.read_text().splitlines()]
        html += sum('"mime": "text/html", "status": "200"' in ln for ln in lines)
    assert html >= 30
    assert not list(run_dir.glob("workers/*/*.wacz"))
    package = run_dir / "archive-test.wacz"
    assert f"WACZ: {package}" in out.getvalue()
    with zipfile.ZipFile(package) as wacz:
        archived = [n for n in wacz.namelist() if n.startswith("archive/")]
        pages = wacz.read("pages/pages.jsonl").decode().splitlines()[1:]
    assert len(archived) == sum(len(d.warc_files()) for d in dirs)
    assert len(pages) == html
