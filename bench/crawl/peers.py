"""The command line of each peer in the crawl benchmark, all at concurrency 16, politeness off.

``command(peer, corpus, out_dir)`` gives the argv that crawls ``corpus`` (its start URLs) and
writes what it fetched under ``out_dir``. Every peer follows links and page requisites,
ignores robots.txt and stays on the corpus's origins:

* ``crawler`` — ``crawler run bench/crawl/order.yaml`` (WARC writing on, 16 toe threads); a
  single-host corpus is spread over 16 queues (``parallel_queues`` with random assignment), as
  one Heritrix queue per host would otherwise allow only one fetch at a time on it.
* ``scrapy`` / ``scrapy-jobdir`` — ``scrapy runspider bench/crawl/scrapy_spider.py``, the second
  with ``JOBDIR`` (Scrapy's disk-backed request queue and seen-set).
* ``wget2`` — ``--recursive --level=inf --page-requisites --max-threads=16 --robots=off``.
* ``wget`` — wget 1.x ``--recursive --level=inf --page-requisites --warc-file`` (one connection).

``--level=inf`` because both wgets stop at depth 5 by default; the ports of 127.0.0.1 are one
host to them, so no ``--span-hosts`` is needed to cover all 20 origins.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CRAWLER = ROOT / ".venv" / "bin" / "crawler"
BENCH_VENV = ROOT / ".bench-venv"
PEERS = ("crawler", "scrapy", "scrapy-jobdir", "wget2", "wget")
CONCURRENCY = 16


@dataclass(frozen=True)
class Corpus:
    """A served corpus: ``name``, start URLs, origin -> document root."""

    name: str
    starts: list[str]
    roots: dict[str, Path]

    @property
    def single_host(self) -> bool:
        return len(self.roots) == 1


def command(peer: str, corpus: Corpus, out_dir: Path) -> list[str]:
    """The argv of ``peer`` crawling ``corpus`` into ``out_dir`` (which exists and is empty)."""
    if peer == "crawler":
        argv = [
            str(CRAWLER),
            "run",
            str(HERE / "order.yaml"),
            "--set",
            f"seeds.urls={json.dumps(corpus.starts)}",
            "--set",
            f"toe_threads={CONCURRENCY}",
            # The corpus numbers its pages (/d000/p1.html): one URL template per host, which the
            # default trap budget would cut at 30 pages; the peers crawl everything.
            "--set",
            "scope.8.params.max_series_length=0",
            "--run-dir",
            str(out_dir / "run"),
        ]
        if corpus.single_host:
            argv += [
                "--set",
                f"frontier.queue_assignment.params.parallel_queues={CONCURRENCY}",
                "--set",
                "frontier.queue_assignment.params.parallel_queues_random_assignment=true",
            ]
        return argv
    if peer in ("scrapy", "scrapy-jobdir"):
        argv = [
            str(BENCH_VENV / "bin" / "scrapy"),
            "runspider",
            str(HERE / "scrapy_spider.py"),
            "-a",
            f"starts={','.join(corpus.starts)}",
            "-a",
            f"out={out_dir / 'bodies'}",
            "-s",
            f"CONCURRENT_REQUESTS={CONCURRENCY}",
        ]
        if peer == "scrapy-jobdir":
            argv += ["-s", f"JOBDIR={out_dir / 'jobdir'}"]
        return argv
    if peer == "wget2":
        return [
            "wget2",
            "--recursive",
            "--level=inf",
            "--page-requisites",
            f"--max-threads={CONCURRENCY}",
            "--robots=off",
            "--no-parent",
            "--no-verbose",
            "-P",
            str(out_dir / "files"),
            *corpus.starts,
        ]
    if peer == "wget":
        return [
            "wget",
            "--recursive",
            "--level=inf",
            "--page-requisites",
            "-e",
            "robots=off",
            "--no-parent",
            "--no-verbose",
            "-P",
            str(out_dir / "files"),
            f"--warc-file={out_dir / 'crawl'}",
            *corpus.starts,
        ]
    raise ValueError(f"unknown peer {peer!r}; known: {', '.join(PEERS)}")


def version(peer: str) -> str:
    """A one-line version string of the peer's program (for results.json)."""
    import subprocess

    argv = {
        "crawler": [
            str(ROOT / ".venv" / "bin" / "python"),
            "-c",
            "import crawler; print('crawler', getattr(crawler, '__version__', '?'))",
        ],
        "scrapy": [str(BENCH_VENV / "bin" / "scrapy"), "version"],
        "scrapy-jobdir": [str(BENCH_VENV / "bin" / "scrapy"), "version"],
        "wget2": ["wget2", "--version"],
        "wget": ["wget", "--version"],
    }[peer]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except OSError as error:
        return f"unavailable: {error}"
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[0].strip() if lines else "?"
