"""Helpers of the tests that run documented examples: a marked code block of a Markdown file, and
``crawler run`` of a job the way a reader runs it (from another directory, without PYTHONPATH)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CRAWLER = ROOT / ".venv" / "bin" / "crawler"
NO_POLITENESS = "frontier.politeness={delay_factor: 0, min_delay_ms: 0, max_delay_ms: 0}"


def marked_block(doc: Path, marker: str, lang: str) -> str:
    """The ``lang`` code block after ``<!-- example: marker -->`` in ``doc``."""
    text = doc.read_text(encoding="utf-8")
    match = re.search(rf"<!-- example: {marker} -->\s*```{lang}\n(.*?)```", text, flags=re.DOTALL)
    assert match, f"{doc.name} has no {marker} example"
    return match.group(1)


def run_job_elsewhere(order: Path, tmp_path: Path, *sets: str) -> subprocess.CompletedProcess[str]:
    """``crawler run ORDER --no-display`` (plus ``--set`` each of ``sets``, politeness off, no
    console logging) from an empty directory, without PYTHONPATH; asserts exit 0."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    args = [str(CRAWLER), "run", str(order), "--no-display"]
    for item in (*sets, NO_POLITENESS, "logging.console=false"):
        args += ["--set", item]
    proc = subprocess.run(args, cwd=elsewhere, env=env, capture_output=True, text=True, timeout=100)
    assert proc.returncode == 0, proc.stderr
    return proc
