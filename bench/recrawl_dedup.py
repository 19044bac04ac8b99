"""Recrawl benchmark (``make bench-dedup``): WARC bytes a recrawl stores when it deduplicates
against the first crawl's CDXJ index (order key ``dedup.collections``).

1. Crawls a generated site (``--corpus sample``: the bundled sample site of
   crawler/demo/site_generator.py, small pages; ``--corpus gensite``: bench/crawl/gensite.py's
   ~15 KB pages served by nginx; ``--hosts`` hosts of ``--pages`` pages each, on 127.0.0.1,
   politeness off) with the default order,
   has its WARCs indexed (``crawler index``), then recrawls it naming that run directory: unchanged
   (with the default order, and with ``revisit_extra_records: false``: no request and metadata
   records beside a revisit), and with every tenth HTML page edited (10%). Prints, per crawl,
   the URIs fetched, the records written by type (compressed bytes) and the WARC bytes against
   the first crawl's.
2. Lookup cost in a large index (``--lines``, a synthetic sorted CDXJ file): binary search in
   the file as the crawler does, the one-time unpacking of a ``.gz`` index, and, for
   comparison, building and asking a LevelDB of the same entries.

Run: ``python bench/recrawl_dedup.py [--corpus sample|gensite] [--pages 1000] [--hosts 3]
[--lines 1000000] [--skip-lookups]``.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from warcio.archiveiterator import ArchiveIterator  # noqa: E402

from crawler.archive.cdxj_file import CdxjFileIndex  # noqa: E402
from crawler.archive.collection_set import surt_urlkey  # noqa: E402
from crawler.demo import SampleSite  # noqa: E402

ORDER = ROOT / "jobs" / "example" / "order.yaml"
ALONE = "unchanged, revisits alone"
GENSITE_PORT = 18361


def run_crawl(seeds: list[str], run_dir: Path, *sets: str) -> float:
    """One crawl with the CLI (default order, politeness off); returns its wall time."""
    args = [
        sys.executable, "-m", "crawler", "run", str(ORDER), "--run-dir", str(run_dir),
        "--no-display", "--set", f"seeds.urls={seeds!r}", "--set", "seeds.file=null",
        "--set", "frontier.politeness.delay_factor=0",
        "--set", "frontier.politeness.min_delay_ms=0",
        "--set", "frontier.politeness.max_delay_ms=0", "--set", "logging.console=false",
    ]  # fmt: skip
    for value in sets:
        args += ["--set", value]
    started = time.monotonic()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.monotonic() - started


def index_run(run_dir: Path) -> Path:
    """The run's CDXJ indexes (``crawler index``: one per WARC, in ``indexes/``, brought up to
    date); the run directory is what ``dedup.collections[].cdxj`` names."""
    from crawler.archive.run_index import index_run as crawler_index

    report = crawler_index(run_dir)
    if report.problems:
        raise SystemExit(f"indexing {run_dir}: {report.problems}")
    return run_dir


def warc_stats(run_dir: Path) -> tuple[int, Counter[str], Counter[str]]:
    """Total WARC bytes, records by type and compressed bytes by record type."""
    counts: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    total = 0
    for path in sorted((run_dir / "warcs").glob("*.warc.gz")):
        total += path.stat().st_size
        with path.open("rb") as fh:
            records = ArchiveIterator(fh)
            for record in records:
                kind = record.rec_type
                records.read_to_end()
                counts[kind] += 1
                sizes[kind] += records.get_record_length()
    return total, counts, sizes


def uris_fetched(run_dir: Path) -> int:
    with (run_dir / "logs" / "crawl.log").open(encoding="utf-8") as fh:
        return sum(1 for line in fh if int(line.split()[1]) > 0)


def change_tenth_files(root: Path) -> int:
    """Edit every tenth HTML file under ``root`` (sorted by path); returns how many."""
    changed = 0
    for path in sorted(root.rglob("*.html"))[::10]:
        path.write_bytes(path.read_bytes().replace(b"</body>", b"<p>Edited.</p></body>"))
        changed += 1
    return changed


def change_tenth(site: SampleSite) -> int:
    """Edit every tenth HTML page of the site (sorted by URL); returns how many."""
    changed = 0
    for origin in site.content.origins:
        pages = sorted(
            path
            for path, res in site.content.hosts[origin].items()
            if res.status == 200 and res.content_type.startswith("text/html")
        )
        for path in pages[::10]:
            body = site.content.hosts[origin][path].body
            site.change(origin + path, body.replace(b"</body>", b"<p>Edited.</p></body>"))
            changed += 1
    return changed


def recrawls(
    seeds: list[str], change: Callable[[], int], tmp: Path
) -> tuple[dict[str, float], int]:
    """The first crawl and the three recrawls (see the module docstring); wall times."""
    times = {"first": run_crawl(seeds, tmp / "first")}
    index = index_run(tmp / "first")
    dedup = f"dedup.collections=[{{cdxj: {json.dumps(str(index))}}}]"
    times["unchanged"] = run_crawl(seeds, tmp / "unchanged", dedup)
    alone = "chains.write.warc_writer.params.revisit_extra_records=false"
    times[ALONE] = run_crawl(seeds, tmp / ALONE, dedup, alone)
    changed = change()
    times["10% changed"] = run_crawl(seeds, tmp / "10% changed", dedup)
    return times, changed


def recrawl_table(corpus: str, pages: int, hosts: int, tmp: Path) -> None:
    if corpus == "sample":
        with SampleSite(ports=(0,) * hosts, pages_per_host=pages) as site:
            times, changed = recrawls(site.base_urls, lambda: change_tenth(site), tmp)
        title = f"the sample site (crawler/demo/site_generator.py; {hosts} hosts x {pages} pages"
    else:
        sys.path.insert(0, str(ROOT / "bench" / "crawl"))
        from gensite import generate
        from nginx_server import NginxServer

        site_dir = tmp / "gensite"
        generate(site_dir, pages * hosts, hosts, GENSITE_PORT)
        roots = {GENSITE_PORT + h: site_dir / f"h{h:02d}" for h in range(hosts)}
        server = NginxServer(tmp / "nginx", roots)
        server.start()
        try:
            seeds = [f"http://127.0.0.1:{port}/" for port in roots]
            times, changed = recrawls(seeds, lambda: change_tenth_files(site_dir), tmp)
        finally:
            server.stop()
        title = f"bench/crawl/gensite.py's site (~15 KB pages; {hosts} hosts x {pages} pages"
    index = tmp / "first"
    files = list((index / "indexes").glob("*.cdxj"))
    print(
        f"\nRecrawl of {title}; {changed} HTML pages "
        f"edited for the 10% run); first crawl's index: {len(files)} file(s), "
        f"{sum(p.stat().st_size for p in files):,} bytes, "
        f"{sum(1 for p in files for _ in p.open())} lines\n"
    )
    kinds = ("response", "revisit", "request", "metadata")
    head = "| crawl | URIs | " + " | ".join(f"{k} (n, bytes)" for k in kinds)
    print(head + " | WARC bytes | vs first | wall s |")
    print("|---" * (len(kinds) + 5) + "|")
    base = 0
    for name in ("first", "unchanged", ALONE, "10% changed"):
        run_dir = tmp / name
        total, counts, sizes = warc_stats(run_dir)
        base = base or total
        cells = " | ".join(f"{counts[k]:,}, {sizes[k]:,}" for k in kinds)
        print(
            f"| {name} | {uris_fetched(run_dir):,} | {cells} | {total:,} | "
            f"{total / base:.1%} | {times[name]:.1f} |"
        )


def lookup_table(lines: int, tmp: Path) -> None:
    """Binary search in a sorted CDXJ file against a LevelDB built from it."""
    import plyvel

    def url_of(n: int) -> str:
        return f"http://site{n % 997}.example.org/section{n % 13}/page-{n}.html?id={n * 7}"

    def digest_of(n: int) -> str:
        return base64.b32encode(hashlib.sha1(str(n).encode()).digest()).decode()

    path = tmp / "big.cdxj"
    entries = []
    for n in range(lines):
        fields = {"url": url_of(n), "mime": "text/html", "status": "200",
                  "digest": "sha1:" + digest_of(n), "length": "4321", "offset": str(n * 5000),
                  "filename": "WEB-20260101000000000-00000-1~host.warc.gz"}  # fmt: skip
        entries.append(f"{surt_urlkey(url_of(n))} 2026010100{n % 10000:04d} {json.dumps(fields)}\n")
    entries.sort()
    path.write_text("".join(entries))
    del entries
    rng = random.Random(1)
    asks = [rng.randrange(lines) for _ in range(20_000)]
    queries = [(url_of(n), surt_urlkey(url_of(n)), digest_of(n)) for n in asks]

    started = time.perf_counter()
    keys = [surt_urlkey(url) for url, _, _ in queries]
    surt_us = (time.perf_counter() - started) / len(queries) * 1e6
    started = time.perf_counter()
    index = CdxjFileIndex(path)
    open_ms = (time.perf_counter() - started) * 1e3
    started = time.perf_counter()
    hits = sum(index.find(u, k, d) is not None for u, k, d in queries)
    search_us = (time.perf_counter() - started) / len(queries) * 1e6
    started = time.perf_counter()
    misses = sum(index.find(u, k, "0" + d[1:]) is not None for u, k, d in queries)
    miss_us = (time.perf_counter() - started) / len(queries) * 1e6
    index.close()
    assert hits == len(queries) and misses == 0 and len(keys) == len(queries)

    packed = tmp / "big.cdxj.gz"
    with path.open("rb") as src, gzip.open(packed, "wb", compresslevel=6) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    started = time.perf_counter()
    CdxjFileIndex.open(packed, tmp / "state").close()
    unpack_s = time.perf_counter() - started

    started = time.perf_counter()
    db = plyvel.DB(str(tmp / "ldb"), create_if_missing=True)
    with path.open("rb") as fh, db.write_batch() as batch:
        for line in fh:
            key, _, rest = line.partition(b" ")
            stamp, _, raw = rest.partition(b" ")
            fields = json.loads(raw)
            value = [fields["url"], stamp.decode(), fields["filename"], fields["offset"]]
            batch.put(key + b" " + fields["digest"][5:].encode(), json.dumps(value).encode())
    build_s = time.perf_counter() - started
    started = time.perf_counter()
    found = sum(db.get(k.encode() + b" " + d.encode()) is not None for _, k, d in queries)
    ldb_us = (time.perf_counter() - started) / len(queries) * 1e6
    db.close()
    ldb_bytes = sum(p.stat().st_size for p in (tmp / "ldb").iterdir())
    assert found == len(queries)

    print(f"\nLookups in a sorted CDXJ of {lines:,} lines ({path.stat().st_size:,} bytes):\n")
    print("| method | set-up | per lookup (found) | per lookup (absent) | extra disk |")
    print("|---|---|---|---|---|")
    print(
        f"| binary search in the file (mmap) | {open_ms:.1f} ms (open, sort check) | "
        f"{search_us:.1f} µs | {miss_us:.1f} µs | 0 |"
    )
    print(
        f"| same, from .gz ({packed.stat().st_size:,} bytes) | {unpack_s:.1f} s unpack once | "
        f"same | same | {path.stat().st_size:,} |"
    )
    print(
        f"| LevelDB built from it | {build_s:.1f} s build | {ldb_us:.1f} µs | - | {ldb_bytes:,} |"
    )
    print(f"\nSURT key of the URI (needed by both): {surt_us:.1f} µs per lookup.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus",
        choices=["sample", "gensite"],
        default="sample",
        help="sample: the bundled sample site; gensite: bench/crawl's ~15 KB pages, nginx-served",
    )
    parser.add_argument("--pages", type=int, default=1000, help="pages per host")
    parser.add_argument("--hosts", type=int, default=3)
    parser.add_argument("--lines", type=int, default=1_000_000, help="lines of the lookup test")
    parser.add_argument("--skip-lookups", action="store_true", help="only the recrawl table")
    parser.add_argument("--lookups-only", action="store_true", help="only the lookup table")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-dedup-") as tmp:
        if not args.lookups_only:
            recrawl_table(args.corpus, args.pages, args.hosts, Path(tmp))
        if not args.skip_lookups:
            lookup_table(args.lines, Path(tmp))


if __name__ == "__main__":
    main()
