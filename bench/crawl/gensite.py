"""Deterministic generated corpus for the crawl benchmark: N pages over H hosts (= ports).

Layout on disk (one nginx ``root`` per host)::

    OUT/h00/index.html              page 0 of host 0, linked as "/" (never as /index.html)
    OUT/h00/d000/p1.html ...        page i lives in directory d{i // 100:03d}
    OUT/h00/d000/banner.png         one image per directory (an embed of every page in it)
    OUT/h00/static/site.css|site.js|logo.png   requisites shared by every page of the host
    OUT/.complete                   JSON of the parameters, written last

Each page has ``LINKS_PER_PAGE`` anchors: its children in an 8-ary tree over the host's pages
(so every page is reachable from "/" of its host within ~log8(N/H) hops), its parent, and
pseudo-random pages, about 1 in 5 of them on another host (absolute ``http://127.0.0.1:PORT``
URLs); link forms mix directory-relative, ``../``-relative, root-relative and absolute, some with
``#fragments``. Filler paragraphs bring a page to ~``PAGE_BYTES``. Everything is a pure function
of (pages, hosts, port_base, scheme): the same arguments write byte-identical files; ``scheme``
"https" (the TLS benchmark, ``tls_bench.py``) writes the other-host links as ``https://``.

Run: ``python bench/crawl/gensite.py OUT [--pages 100000] [--hosts 20] [--port-base 18101]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

LINKS_PER_PAGE = 40
TREE_FANOUT = 8
PAGE_BYTES = 15_000
PAGES_PER_DIR = 100
CROSS_HOST_PERCENT = 20
_WORDS_TEXT = (
    "archive crawler frontier queue harbor cedar river market signal garden winter copper "
    "field lantern quiet north bridge orchard silver paper morning stone valley ember meadow "
    "island canyon atlas beacon record capture replay digest budget politeness robots scope "
    "seed host thread writer extractor processor chain disposition candidate revisit payload "
    "header"
)
_WORDS = tuple(_WORDS_TEXT.split())
# A 1x1 transparent PNG: the bytes do not matter to a crawler, only that the URL resolves.
_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)
_CSS = "body{font:16px/1.5 serif;margin:0 auto;max-width:50em}nav a{margin-right:.5em}\n"
_JS = "document.documentElement.className='js';\n"


def _paragraphs() -> list[str]:
    """A fixed pool of filler paragraphs (~600 bytes each)."""
    rng = random.Random(20240601)
    pool = []
    for _ in range(64):
        words = [rng.choice(_WORDS) for _ in range(85)]
        pool.append("<p>" + " ".join(words).capitalize() + ".</p>\n")
    return pool


_POOL = _paragraphs()


def page_path(i: int) -> str:
    """URL path of page ``i`` of a host ("/" for the home page)."""
    return "/" if i == 0 else f"/d{i // PAGES_PER_DIR:03d}/p{i}.html"


def _file_path(i: int) -> str:
    return "index.html" if i == 0 else f"d{i // PAGES_PER_DIR:03d}/p{i}.html"


def _href(src: int, dst: int, form: int) -> str:
    """A same-host link from page ``src`` to page ``dst`` in one of several forms."""
    path = page_path(dst)
    if dst == 0 or form == 0:
        return path
    src_dir = "" if src == 0 else f"d{src // PAGES_PER_DIR:03d}"
    dst_dir, name = path[1:].split("/")
    if form == 1 and src_dir == dst_dir:
        return name
    if form == 2 and src_dir:
        return f"../{dst_dir}/{name}"
    return path


def render_page(
    host: int, i: int, per_host: int, hosts: int, port_base: int, scheme: str = "http"
) -> str:
    """The HTML of page ``i`` of ``host``: a pure function of its arguments."""
    rng = random.Random(host * 10_000_019 + i)
    links: list[str] = []
    first_child = i * TREE_FANOUT + 1
    targets = [c for c in range(first_child, first_child + TREE_FANOUT) if c < per_host]
    if i > 0:
        targets.append((i - 1) // TREE_FANOUT)
    for dst in targets:
        links.append(_href(i, dst, rng.randrange(3)))
    while len(links) < LINKS_PER_PAGE:
        dst = rng.randrange(per_host)
        if rng.randrange(100) < CROSS_HOST_PERCENT:
            other = rng.randrange(hosts)
            links.append(f"{scheme}://127.0.0.1:{port_base + other}{page_path(dst)}")
        else:
            href = _href(i, dst, rng.randrange(3))
            if rng.randrange(10) == 0:
                href += f"#s{rng.randrange(5)}"
            links.append(href)
    banner = "" if i == 0 else '<img src="banner.png" alt="">'
    parts = [
        "<!DOCTYPE html>\n<html><head><meta charset=utf-8>\n",
        f"<title>Host {host} page {i}</title>\n",
        '<link rel="stylesheet" href="/static/site.css">\n',
        '<script src="/static/site.js"></script>\n',
        f'</head><body>\n<img src="/static/logo.png" alt="logo">{banner}\n<h1>Page {i}</h1>\n',
        "<nav><ul>\n",
    ]
    parts.extend(f'<li><a href="{href}">link {n}</a></li>\n' for n, href in enumerate(links))
    parts.append("</ul></nav>\n<main>\n")
    size = sum(map(len, parts))
    while size < PAGE_BYTES - 400:
        para = _POOL[rng.randrange(len(_POOL))]
        parts.append(para)
        size += len(para)
    parts.append("</main></body></html>\n")
    return "".join(parts)


def _write_host(
    out: Path, host: int, per_host: int, hosts: int, port_base: int, scheme: str = "http"
) -> int:
    root = out / f"h{host:02d}"
    (root / "static").mkdir(parents=True, exist_ok=True)
    (root / "static" / "site.css").write_text(_CSS)
    (root / "static" / "site.js").write_text(_JS)
    (root / "static" / "logo.png").write_bytes(_PNG)
    written = 0
    for d in range((per_host + PAGES_PER_DIR - 1) // PAGES_PER_DIR):
        (root / f"d{d:03d}").mkdir(exist_ok=True)
        (root / f"d{d:03d}" / "banner.png").write_bytes(_PNG)
    for i in range(per_host):
        data = render_page(host, i, per_host, hosts, port_base, scheme).encode()
        with open(root / _file_path(i), "wb") as fh:
            fh.write(data)
        written += len(data)
    return written


def params_of(pages: int, hosts: int, port_base: int, scheme: str = "http") -> dict[str, Any]:
    params: dict[str, Any] = {"pages": pages, "hosts": hosts, "port_base": port_base, "version": 1}
    if scheme != "http":
        params["scheme"] = scheme
    return params


def is_generated(out: Path, pages: int, hosts: int, port_base: int, scheme: str = "http") -> bool:
    marker = out / ".complete"
    try:
        return bool(json.loads(marker.read_text()) == params_of(pages, hosts, port_base, scheme))
    except (OSError, ValueError):
        return False


def generate(
    out: Path, pages: int, hosts: int, port_base: int, workers: int = 0, scheme: str = "http"
) -> float:
    """Write the site under ``out`` unless it is there with the same parameters; seconds spent."""
    if is_generated(out, pages, hosts, port_base, scheme):
        return 0.0
    started = time.monotonic()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    per_host = pages // hosts
    with ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        futures = [
            pool.submit(_write_host, out, h, per_host, hosts, port_base, scheme)
            for h in range(hosts)
        ]
        total = sum(f.result() for f in futures)
    (out / ".complete").write_text(json.dumps(params_of(pages, hosts, port_base, scheme)))
    elapsed = time.monotonic() - started
    print(
        f"gensite: {per_host * hosts} pages, {total / 1e6:.0f} MB in {elapsed:.1f}s -> {out}",
        file=sys.stderr,
    )
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--port-base", type=int, default=18101)
    args = parser.parse_args()
    generate(args.out, args.pages, args.hosts, args.port_base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
