"""The README's custom Processor example, run exactly as printed there, in a real crawl."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from crawllog_parser import parse_file

from crawler.control.controller import CrawlController
from crawler.demo import SampleSite
from crawler.order.loader import load_order

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def readme_block(marker: str, lang: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"<!-- example: {marker} -->\s*```{lang}\n(.*?)```", text, flags=re.DOTALL)
    assert match, f"README has no {marker} example"
    return match.group(1)


def test_readme_processor_records_every_html_title(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "myprocessors.py").write_text(readme_block("processor", "python"))
    monkeypatch.syspath_prepend(str(tmp_path))
    order_file = tmp_path / "order.yaml"
    order_file.write_text(
        f"extends: {ROOT / 'jobs' / 'example' / 'order.yaml'}\n"
        "name: readme\n" + readme_block("order", "yaml")
    )
    with SampleSite(pages_per_host=20) as site:
        order = load_order(
            order_file,
            [
                f"seeds.urls={site.base_urls!r}",
                "seeds.file=null",
                "logging.console=false",
            ],
        )
        run_dir = tmp_path / "run"
        assert CrawlController(order, run_dir, install_signals=False).run() == 0
    lines = parse_file(run_dir / "logs" / "crawl.log")
    pages = {line.uri for line in lines if line.status == 200 and line.mime == "text/html"}
    html = {line.uri for line in lines if line.status > 0 and line.mime == "text/html"}
    rows = [row.split("\t") for row in (run_dir / "titles.tsv").read_text().splitlines()]
    titled = {uri for uri, _ in rows}
    assert len(titled) == len(rows)
    assert pages <= titled <= html
    assert all(0 < len(title) <= 80 for _, title in rows)
    assert all("<" not in title for _, title in rows)
