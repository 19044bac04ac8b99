"""The README's order and processor, run the way a newcomer runs them: both blocks copied into a
job directory, ``crawler run`` from another directory without PYTHONPATH, against the sample site.
The order's politeness and size are overridden on the command line, as the README shows."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from support.crawllog_parser import parse_file

from crawler.demo import SampleSite

ROOT = Path(__file__).resolve().parents[2]
CRAWLER = ROOT / ".venv" / "bin" / "crawler"

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def readme_block(marker: str, lang: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(rf"<!-- example: {marker} -->\s*```{lang}\n(.*?)```", text, flags=re.DOTALL)
    assert match, f"README.md has no {marker} example"
    return match.group(1)


def test_readme_processor_annotates_big_responses_in_the_default_chain(tmp_path: Path) -> None:
    job = tmp_path / "jobs" / "news"
    job.mkdir(parents=True)
    (job / "myprocessors.py").write_text(readme_block("readme-processor", "python"))
    order = yaml.safe_load(readme_block("readme-order", "yaml"))
    order["chains"]["extract"][0]["params"] = {"min_bytes": 2000}
    (job / "order.yaml").write_text(yaml.safe_dump(order))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with SampleSite(pages_per_host=20) as site:
        (job / "seeds.txt").write_text("\n".join(site.base_urls) + "\n")
        proc = subprocess.run(
            [
                str(CRAWLER),
                "run",
                str(job / "order.yaml"),
                "--no-display",
                "--set",
                "frontier.politeness={delay_factor: 0, min_delay_ms: 0, max_delay_ms: 0}",
                "--set",
                "logging.console=false",
            ],
            cwd=elsewhere,
            env=env,
            capture_output=True,
            text=True,
            timeout=100,
        )
    assert proc.returncode == 0, proc.stderr
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
