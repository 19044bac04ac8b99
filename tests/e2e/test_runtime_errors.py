"""A processor that raises: its URIs end with -5, tracebacks are logged, threads carry on."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.crawllog_parser import parse_file

from crawler.control.controller import CrawlController
from crawler.demo import SampleSite
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

FAULTY = """
from crawler import CrawlURI, Processor, NoParams


class Faulty(Processor[NoParams]):
    def should_process(self, curi: CrawlURI) -> bool:
        return "/static/img/" in curi.uri

    def inner_process(self, curi: CrawlURI) -> None:
        raise RuntimeError(f"cannot handle {curi.uri}")
"""


def test_exceptions_become_status_minus_5_and_threads_survive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "faulty_mod.py").write_text(FAULTY)
    monkeypatch.syspath_prepend(str(tmp_path))
    with SampleSite(pages_per_host=20) as site:
        order = load_order(
            ROOT / "jobs" / "example" / "order.yaml",
            [
                f"seeds.urls={site.base_urls!r}",
                "seeds.file=null",
                "logging.console=false",
                "toe_threads=2",
                "chains.extract=[{name: faulty, class: faulty_mod.Faulty},"
                " {name: extractor_html, class: processors.extract.ExtractorHTML}]",
            ],
        )
        run_dir = tmp_path / "run"
        controller = CrawlController(order, run_dir, install_signals=False)
        assert controller.run() == 0
        expected = site.expected_urls()
    lines = parse_file(run_dir / "logs" / "crawl.log")
    failed = {line.uri for line in lines if line.status == -5}
    images = {uri for uri in expected if "/static/img/" in uri}
    assert len(images) > 2 and failed == images
    assert all("err=RuntimeError" in line.annotations for line in lines if line.status == -5)
    assert {line.uri for line in lines if line.status > 0} == expected - images
    runtime = (run_dir / "logs" / "runtime-errors.log").read_text()
    assert runtime.count("Traceback (most recent call last)") == len(images)
    assert all(f"cannot handle {uri}" in runtime for uri in images)
    assert controller.exit_status == "Finished"
