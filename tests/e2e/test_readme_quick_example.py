"""The README's order and processor, run the way a newcomer runs them: both blocks copied into a
job directory, ``crawler run`` from another directory without PYTHONPATH, against the sample site.
The order's politeness and size are overridden on the command line, as the README shows."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from support.crawllog_parser import parse_file
from support.doc_examples import ROOT, marked_block, run_job_elsewhere

from crawler.demo import SampleSite

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def readme_block(marker: str, lang: str) -> str:
    return marked_block(ROOT / "README.md", marker, lang)


def test_readme_processor_annotates_big_responses_in_the_default_chain(tmp_path: Path) -> None:
    job = tmp_path / "jobs" / "news"
    job.mkdir(parents=True)
    (job / "myprocessors.py").write_text(readme_block("readme-processor", "python"))
    order = yaml.safe_load(readme_block("readme-order", "yaml"))
    order["chains"]["extract"][0]["params"] = {"min_bytes": 2000}
    (job / "order.yaml").write_text(yaml.safe_dump(order))
    with SampleSite(pages_per_host=20) as site:
        (job / "seeds.txt").write_text("\n".join(site.base_urls) + "\n")
        run_job_elsewhere(job / "order.yaml", tmp_path)
    run_dir = (job / "latest").resolve()
    effective = yaml.safe_load((run_dir / "order.effective.yaml").read_text())
    extract = [spec["name"] for spec in effective["chains"]["extract"]]
    assert extract.index("big_pages") == extract.index("extractor_html") + 1
    assert len(extract) > 2  # added to the default chain, not replacing it

    lines = parse_file(run_dir / "logs" / "crawl.log")
    fetched = [line for line in lines if line.status > 0 and not line.uri.startswith("dns:")]
    big = [line for line in fetched if line.size is not None and line.size >= 2000]
    small = [line for line in fetched if line.size is not None and line.size < 2000]
    assert big and small
    for line in big:
        assert f"big:{line.size}" in line.annotations, line.uri
    for line in small:
        assert not any(a.startswith("big:") for a in line.annotations), line.uri
