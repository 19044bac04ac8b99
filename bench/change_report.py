"""Change-report benchmark: how long ``reports/changes-report.*`` takes for a recrawl of N URIs
(default 10^6 over 1,000 hosts), and the peak memory of the process that writes it.

Two crawl histories are written first (the earlier crawl's N URIs; the recrawl keeps 85% of
them — 70% 304 or the same digest, 10% changed, 5% 404 — drops 15% as no longer reached and
adds 5% new), then a fresh process writes the report from the two run directories alone, as the
end of a crawl does, and prints its time, peak RSS and the counts.

Usage: ``python bench/change_report.py [--uris 1000000] [--hosts 1000] [--dir DIR]``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crawler.continuity.change_report import write_change_report  # noqa: E402
from crawler.curi import CrawlURI  # noqa: E402
from crawler.history import CrawlHistory  # noqa: E402


def _record(history: CrawlHistory, uri: str, status: int, digest: str, at_s: float) -> None:
    curi = CrawlURI(uri)
    curi.status, curi.payload_digest, curi.fetch_start_ms = status, digest, int(at_s * 1000)
    history.record_fetch(curi, None, None)


def build(base: Path, uris: int, hosts: int) -> Path:
    """Write both runs' histories; the recrawl's run directory."""
    earlier, now = base / "earlier", base / "now"
    for run in (earlier, now):
        (run / "logs").mkdir(parents=True)
    (now / "order.effective.yaml").write_text(
        f"history:\n  import_from: {json.dumps(str(earlier))}\n", encoding="utf-8"
    )
    started = time.monotonic()
    with CrawlHistory.open(earlier / "state") as old, CrawlHistory.open(now / "state") as new:
        for n in range(uris):
            uri = f"http://host{n % hosts}.test/page/{n}.html"
            digest = f"sha1:{n:032d}"
            _record(old, uri, 200, digest, 0.0)
            kind = n % 20
            if kind < 14:
                _record(new, uri, 304 if kind % 2 else 200, digest, 1.0)
            elif kind < 16:
                _record(new, uri, 200, f"sha1:{n:031d}X", 1.0)
            elif kind == 16:
                _record(new, uri, 404, "sha1:NOTFOUND", 1.0)
            if kind == 19:
                _record(new, f"http://host{n % hosts}.test/new/{n}.html", 200, digest, 1.0)
    print(f"histories of {uris:,} URIs written in {time.monotonic() - started:.1f} s")
    return now


def report_only(run: Path) -> None:
    started = time.monotonic()
    summary = write_change_report(run)
    elapsed = time.monotonic() - started
    assert summary is not None
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size_mb = (summary.text_path.stat().st_size + summary.json_path.stat().st_size) / 1e6
    print(
        f"change report: {elapsed:.2f} s, peak RSS {rss_mb:.0f} MB, files {size_mb:.0f} MB; "
        f"{summary.counts}; {len(summary.hosts)} hosts"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uris", type=int, default=1_000_000)
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--dir", type=Path, default=None, help="keep the histories here")
    parser.add_argument("--report-only", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.report_only is not None:
        report_only(args.report_only)
        return
    with tempfile.TemporaryDirectory() as tmp:
        base = args.dir or Path(tmp)
        run = build(base, args.uris, args.hosts)
        baseline = subprocess.run(
            [sys.executable, "-c", "import crawler.continuity.change_report, resource; "
             "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        print(f"peak RSS of a process that only imports the module: {baseline.stdout.strip()} MB")
        subprocess.run([sys.executable, __file__, "--report-only", str(run)], check=True)


if __name__ == "__main__":
    main()
