"""The synthetic web: N hosts ``h00000.web.test`` ... over HTTPS, generated deterministically.

Design (why not 10^6 files): every host has the same ``pages_per_host`` page paths (``/`` and
``/p1.html`` ... ``/pP-1.html``). Page ``/pN.html`` of any host is template ``t/tN.html`` (nginx
``rewrite`` in an ``internal`` location, so the URL stays ``/pN.html``), and the templates are the
only HTML files on disk (``pages_per_host`` of them, ~5 MB in all). What differs from host to host
is the other-host links: a template writes them as ``https://<!--# echo var="x3" -->.web.test...``
(nginx SSI), and ``x0`` ... ``x15`` are nginx ``map``s from ``$host`` to another host's label,
drawn at generation time. So nginx serves 10^6 distinct pages from ~100 files with C code only
(SSI, gzip, TLS), and the ground truth is exact and small: the same URL set on every host.

A template (seeded ``random.Random``): an HTML size from a log-normal with a median of 34 KB (30 KB
once generated) (sigma 0.9, 4 KB to 2 MB; the largest template is 2 MB), 40 to 100 links of which
~20% to another host (``/pM.html`` there), ~2% to a missing page (``/gone/...``: 404), 1% to
``/err/...`` (500), 2% to ``/old/pM.html`` (301 to ``/pM.html``), 1% to ``/private/...``
(disallowed by robots.txt), the rest to ``/pM.html`` on the same host; template N also links
``/pN+1.html``, so every page of every host is reachable from ``/``; 3 to 8 images (``/img/iK.png``
of 20, 200 B to 20 KB) and the style sheet ``/css/site.css``. ``robots.txt``: ``Disallow:
/private/``.

``generate(out, hosts, pages_per_host, port)`` writes ``site/`` (templates, images, css,
robots.txt), ``nginx-maps.conf`` and ``truth.json`` (per-host URL sets by expected status, the
BFS depth of the page graph) and returns the truth.
"""

from __future__ import annotations

import json
import math
import random
import zlib
from pathlib import Path
from typing import Any

CROSS_MAPS = 16
IMAGES = 20
MEDIAN_HTML = 34_000
MAX_HTML = 2_000_000
WORDS = [
    "archive",
    "web",
    "crawl",
    "frontier",
    "queue",
    "host",
    "politeness",
    "robots",
    "sitemap",
    "record",
    "harvest",
    "national",
    "library",
    "domain",
    "collection",
    "snapshot",
    "replay",
    "index",
    "digest",
    "revisit",
    "capture",
    "seed",
    "scope",
    "hop",
    "template",
    "page",
    "link",
    "image",
    "style",
    "script",
    "server",
    "client",
    "session",
    "certificate",
    "resolver",
]


def host_label(i: int) -> str:
    return f"h{i:05d}"


def page_path(n: int) -> str:
    return "/" if n == 0 else f"/p{n}.html"


def _filler(rng: random.Random, size: int) -> str:
    """Paragraphs of pseudo-words, ``size`` characters or a little more."""
    parts: list[str] = []
    total = 0
    while total < size:
        words = " ".join(rng.choice(WORDS) + str(rng.randrange(1000)) for _ in range(40))
        parts.append(f"<p>{words}.</p>\n")
        total += len(parts[-1])
    return "".join(parts)


def _template(
    n: int, pages: int, port: int, rng: random.Random, size: int
) -> tuple[str, dict[str, Any]]:
    """Template ``n``'s HTML and the links it holds (same-host paths by kind, cross links)."""
    links: list[str] = []
    same: set[str] = set()
    kinds: dict[str, set[str]] = {k: set() for k in ("301", "404", "500", "robots")}
    cross: list[tuple[int, int]] = []
    for _ in range(rng.randint(40, 100)):
        r = rng.random()
        m = rng.randrange(pages)
        if r < 0.20:
            k = rng.randrange(CROSS_MAPS)
            cross.append((k, m))
            href = f'https://<!--# echo var="x{k}" -->.web.test:{port}{page_path(m)}'
        elif r < 0.22:
            href = f"/gone/g{rng.randrange(500)}.html"
            kinds["404"].add(href)
        elif r < 0.23:
            href = f"/err/e{rng.randrange(50)}"
            kinds["500"].add(href)
        elif r < 0.25:
            href = f"/old/p{max(1, m)}.html"
            kinds["301"].add(href)
            same.add(page_path(max(1, m)))
        elif r < 0.26:
            href = f"/private/q{rng.randrange(100)}.html"
            kinds["robots"].add(href)
        else:
            href = page_path(m)
            same.add(href)
        links.append(f'<li><a href="{href}">{rng.choice(WORDS)} {m}</a></li>')
    if n + 1 < pages:
        links.append(f'<li><a href="{page_path(n + 1)}">next</a></li>')
        same.add(page_path(n + 1))
    images = sorted({f"/img/i{rng.randrange(IMAGES)}.png" for _ in range(rng.randint(3, 8))})
    head = (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        f'<title>Page {n} of <!--# echo var="host" --></title>\n'
        f'<link rel="stylesheet" href="/css/site.css"></head>\n<body>\n<h1>Page {n}</h1>\n'
    )
    imgs = "".join(f'<img src="{i}" alt="figure">\n' for i in images)
    body_links = "<ul>\n" + "\n".join(links) + "\n</ul>\n"
    fixed = len(head) + len(imgs) + len(body_links) + 20
    html = head + imgs + _filler(rng, max(0, size - fixed)) + body_links + "</body></html>\n"
    info = {
        "same": sorted(same),
        "images": images,
        "cross": cross,
        **{k: sorted(v) for k, v in kinds.items()},
    }
    return html, info


def _png(rng: random.Random, size: int) -> bytes:
    """A valid PNG (grey, 1 row) of about ``size`` bytes of incompressible pixels."""
    width = max(1, size)
    raw = b"\x00" + rng.randbytes(width)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")

    ihdr = width.to_bytes(4, "big") + (1).to_bytes(4, "big") + bytes([8, 0, 0, 0, 0])
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(raw, 1))
        + chunk(b"IEND", b"")
    )


def generate(out: Path, hosts: int, pages: int, port: int, seed: int = 19) -> dict[str, Any]:
    """Write the site, the nginx maps and truth.json under ``out``; return the truth."""
    rng = random.Random(seed)
    site = out / "site"
    for sub in ("t", "img", "css"):
        (site / sub).mkdir(parents=True, exist_ok=True)
    sizes = sorted(
        min(MAX_HTML, max(4000, int(rng.lognormvariate(math.log(MEDIAN_HTML), 0.9))))
        for _ in range(pages)
    )
    sizes[-1] = MAX_HTML
    rng.shuffle(sizes)
    sizes[0] = min(sizes[0], 60_000)  # the home page of every host is not the 2 MB one
    infos = []
    for n in range(pages):
        html, info = _template(n, pages, port, rng, sizes[n])
        (site / "t" / f"t{n}.html").write_text(html)
        info["bytes"] = len(html.encode())
        infos.append(info)
    image_sizes = {}
    for k in range(IMAGES):
        data = _png(rng, int(rng.lognormvariate(math.log(3000), 1.0)) % 20_000 + 200)
        (site / "img" / f"i{k}.png").write_bytes(data)
        image_sizes[k] = len(data)
    (site / "css" / "site.css").write_text(
        "body{font-family:serif;margin:2em}\n"
        + "".join(f".c{i}{{color:#{i:06x}}}\n" for i in range(400))
    )
    (site / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    # Other-host links: map k sends host i to cross[k][i] (never i itself).
    cross = [
        [(i + 1 + rng.randrange(hosts - 1)) % hosts for i in range(hosts)]
        for _ in range(CROSS_MAPS)
    ]
    maps = ["map_hash_max_size 262144;", "map_hash_bucket_size 64;"]
    for k in range(CROSS_MAPS):
        lines = "".join(
            f"    {host_label(i)}.web.test {host_label(cross[k][i])};\n" for i in range(hosts)
        )
        maps.append(f"map $host $x{k} {{\n    default {host_label(0)};\n{lines}}}")
    (out / "nginx-maps.conf").write_text("\n".join(maps) + "\n")
    truth = _truth(infos, pages)
    truth.update(
        hosts=hosts,
        pages_per_host=pages,
        port=port,
        seed=seed,
        html_bytes={
            "median": sorted(i["bytes"] for i in infos)[pages // 2],
            "mean": round(sum(i["bytes"] for i in infos) / pages),
            "max": max(i["bytes"] for i in infos),
        },
        links_per_page_mean=round(sum(len(i["same"]) + len(i["cross"]) for i in infos) / pages, 1),
    )
    (out / "truth.json").write_text(json.dumps(truth, indent=1))
    return truth


def _truth(infos: list[dict[str, Any]], pages: int) -> dict[str, Any]:
    """Per host (the same on every host, as every page is reachable from ``/``): URL paths by
    expected outcome, and the BFS depth of the same-host page graph."""
    depth = {0: 0}
    frontier = [0]
    while frontier:
        nxt = []
        for n in frontier:
            for path in infos[n]["same"]:
                m = 0 if path == "/" else int(path[2:-5])
                if m not in depth:
                    depth[m] = depth[n] + 1
                    nxt.append(m)
        frontier = nxt
    assert len(depth) == pages, "every page is reachable from /"
    union = {k: sorted({p for i in infos for p in i[k]}) for k in ("301", "404", "500", "robots")}
    images = sorted({p for i in infos for p in i["images"]})
    per_host_ok = pages + len(images) + 2  # pages, images, site.css, robots.txt
    return {
        "per_host": {
            "pages_200": pages,
            "images_200": len(images),
            "css_200": 1,
            "robots_txt": 1,
            "redirects_301": len(union["301"]),
            "missing_404": len(union["404"]),
            "errors_500": len(union["500"]),
            "disallowed_by_robots": len(union["robots"]),
            "fetches": per_host_ok + len(union["301"]) + len(union["404"]) + len(union["500"]),
        },
        "max_depth": max(depth.values()),
    }
