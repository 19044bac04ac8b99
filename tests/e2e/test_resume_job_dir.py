"""``crawler resume JOB_DIR``, the command ``crawler crawl`` prints (and its order's comment):
it resumes the job's latest run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from crawler.demo import SampleSite

ROOT = Path(__file__).resolve().parents[2]
CRAWLER = str(ROOT / ".venv" / "bin" / "crawler")

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def crawler(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CRAWLER_CONTACT_URL"}
    return subprocess.run(
        [CRAWLER, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=100
    )


def test_the_resume_command_crawl_prints_resumes_the_latest_run(tmp_path: Path) -> None:
    with SampleSite(ports=(0,), pages_per_host=20) as site:
        crawl = crawler(
            "crawl",
            site.base_urls[0],
            "--contact",
            "https://example.org/about-our-crawler",
            "--no-display",
            "--set",
            "frontier.politeness={delay_factor: 0, min_delay_ms: 0, max_delay_ms: 0}",
            "--set",
            "logging.console=false",
            cwd=tmp_path,
        )
        assert crawl.returncode == 0, crawl.stderr
        printed = [line for line in crawl.stdout.splitlines() if line.startswith("resume: ")]
        assert len(printed) == 1
        command = printed[0].removeprefix("resume: crawler ").split()
        job = Path(command[1])
        order_text = (tmp_path / job / "order.yaml").read_text()
        assert f"crawler resume {job}" in order_text
        latest = (tmp_path / job / "latest").resolve()
        logged = (latest / "logs" / "crawl.log").read_text().count("\n")
        resumed = crawler(*command, "--no-display", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert Path(resumed.stdout.splitlines()[0]).resolve() == latest
    assert "Finished" in resumed.stdout
    assert not any(p != latest for p in (tmp_path / job / "runs").iterdir())  # no new run
    assert (latest / "logs" / "crawl.log").read_text().count("\n") == logged
