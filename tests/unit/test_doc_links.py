"""The link check of ``make docs`` (tests/support/doc_links.py): it finds a link to a missing
file or heading and passes what GitHub and the MkDocs site both resolve; this checkout's README
and docs/ pass it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.doc_links import check, slug

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(60)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_headings_get_the_anchors_github_gives_them() -> None:
    redirects = "Redirects, robots.txt and seeds that move"
    assert slug(redirects) == "redirects-robotstxt-and-seeds-that-move"
    assert slug("Many hosts over TLS (`make bench-web`)") == "many-hosts-over-tls-make-bench-web"
    assert slug("A seed's own `max_hops`") == "a-seeds-own-max_hops"
    assert slug("[Replay](replay.md) of a job") == "replay-of-a-job"


def test_broken_files_and_anchors_are_reported_and_good_links_pass(tmp_path: Path) -> None:
    write(tmp_path / "bench" / "RESULTS.md", "# Results\n\n## The digest index (`make x`)\n")
    write(
        tmp_path / "docs" / "order.md",
        "# The crawl order\n\n## Sheets: settings per site\n\n## Sheets: settings per site\n\n"
        "[up](#the-crawl-order) [second](#sheets-settings-per-site-1)\n",
    )
    write(
        tmp_path / "README.md",
        "# crawler\n\n"
        "[ok](docs/order.md#sheets-settings-per-site) ![img](docs/order.md)\n"
        "[bench](bench/RESULTS.md#the-digest-index-make-x) [web](https://example.org/#x)\n"
        "`[in a code span](docs/missing.md)`\n"
        "```\n[in a code block](docs/missing.md)\n```\n"
        "[gone](docs/replay.md) [no heading](docs/order.md#sheets)\n"
        "[self](#crawler) [no self heading](#quick-start) [outside](../elsewhere.md)\n",
    )
    found = [(str(bad.file), bad.line, bad.target) for bad in check(tmp_path)]
    assert found == [
        ("README.md", 9, "docs/replay.md"),
        ("README.md", 9, "docs/order.md#sheets"),
        ("README.md", 10, "#quick-start"),
        ("README.md", 10, "../elsewhere.md"),
    ]


def test_this_checkouts_readme_and_docs_have_no_broken_link() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "support" / "doc_links.py"), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert ", 0 broken link(s)" in proc.stderr


def test_the_readme_stays_a_first_read_with_the_command_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300, "README.md over 300 lines: move reference to docs/"
    ci_commands = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith(("#", "set ", "cd "))
    ]
    assert ci_commands == ["make test"]
    assert "\nmake test   #" in readme  # the README's test command is the one CI runs
