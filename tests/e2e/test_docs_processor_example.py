"""The custom Processor example of docs/processors.md, run the way a reader runs it: the module
and the order copied from the page into a job directory, ``crawler run`` started from another
directory, without PYTHONPATH, against the sample site."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml
from support.crawllog_parser import parse_file
from support.doc_examples import CRAWLER, ROOT, marked_block, run_job_elsewhere

from crawler.demo import SampleSite

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def docs_block(marker: str, lang: str) -> str:
    return marked_block(ROOT / "docs" / "processors.md", marker, lang)


def test_docs_processor_records_the_title_of_every_2xx_html_page(tmp_path: Path) -> None:
    job = tmp_path / "jobs" / "mycrawl"
    job.mkdir(parents=True)
    (job / "myprocessors.py").write_text(docs_block("processor", "python"))
    (job / "order.yaml").write_text("name: mycrawl\n" + docs_block("order", "yaml"))
    with SampleSite(pages_per_host=20) as site:
        run_job_elsewhere(
            job / "order.yaml",
            tmp_path,
            "operator.contact_url=https://example.org/about-our-crawler",
            f"seeds.urls={site.base_urls!r}",
        )
    run_dir = (job / "latest").resolve()

    # the processor joined the default extract chain, which keeps every extractor
    effective = yaml.safe_load((run_dir / "order.effective.yaml").read_text())
    default = yaml.safe_load((ROOT / "conf" / "default-order.yaml").read_text())
    names = [spec["name"] for spec in default["chains"]["extract"]]
    at = names.index("extractor_html") + 1
    assert [spec["name"] for spec in effective["chains"]["extract"]] == [
        *names[:at],
        "titles",
        *names[at:],
    ]
    kept = {spec["name"]: spec for spec in effective["chains"]["extract"]}
    for spec in default["chains"]["extract"]:
        assert kept[spec["name"]]["enabled"] == spec.get("enabled", True)

    lines = parse_file(run_dir / "logs" / "crawl.log")
    html_2xx = {line.uri for line in lines if 200 <= line.status < 300 and line.mime == "text/html"}
    html_other = {line.uri for line in lines if line.status >= 300 and line.mime == "text/html"}
    assert html_2xx and html_other  # the site has error pages and redirects too
    rows = [row.split("\t") for row in (run_dir / "titles.tsv").read_text().splitlines()]
    assert {uri for uri, _ in rows} == html_2xx and len(rows) == len(html_2xx)
    assert all(0 < len(title) <= 80 and "<" not in title for _, title in rows)

    # as docs/processors.md says, show-processor finds the module when run in the job's directory
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    shown = subprocess.run(
        [str(CRAWLER), "show-processor", "myprocessors.TitleRecorder"],
        cwd=job,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert "max_length" in shown.stdout and "file_name" in shown.stdout
