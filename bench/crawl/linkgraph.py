"""Ground truth for the crawl benchmark: every URL reachable from the start URLs, from the files.

A breadth-first walk over the files that nginx serves, with the link semantics every peer is
asked to follow: ``a/@href``, ``img/@src``, ``link/@href``, ``script/@src`` of HTML pages,
resolved against the page URL (or its ``<base href>``), fragments dropped, kept only when the
URL's origin is one of the served origins. A URL is in the ground truth when nginx would answer
it 200: a file, or a directory with ``index.html`` when the path ends in "/"; a directory named
without the slash is nginx's 301 to the slash form, which is followed (the 301 itself is not a
page). Missing files (404) are counted apart.

``canonical(url)`` is the form used to compare these URLs with nginx's access log: lower-case
scheme and host, no fragment, dot segments resolved, percent-escapes normalised.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote, urljoin, urlsplit

from selectolax.lexbor import LexborHTMLParser

_PATH_SAFE = "/:@!$&'()*+,;=~"
_QUERY_SAFE = "/:@!$&'()*+,;=~?"
_HTML_SUFFIXES = (".html", ".htm", "/")
_SELECTOR = "a[href], img[src], link[href], script[src]"


def canonical(url: str) -> str:
    """``scheme://host:port/path?query`` with normalised escapes; '' for non-http URLs."""
    try:
        parts = urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return ""
    path = quote(unquote(parts.path or "/"), safe=_PATH_SAFE)
    query = "?" + quote(unquote(parts.query), safe=_QUERY_SAFE) if parts.query else ""
    return f"{parts.scheme}://{parts.hostname}:{port}{path}{query}"


def extract_links(html: bytes, page_url: str) -> list[str]:
    """Absolute URLs (fragment dropped) of a/href, img/src, link/href, script/src in ``html``."""
    tree = LexborHTMLParser(html)
    base = page_url
    base_node = tree.css_first("base[href]")
    if base_node is not None:
        base = urljoin(page_url, (base_node.attributes.get("href") or "").strip())
    out = []
    for node in tree.css(_SELECTOR):
        attrs = node.attributes
        value = attrs.get("src") if node.tag in ("img", "script") else attrs.get("href")
        if not value:
            continue
        value = value.strip()
        if not value or value.startswith("#"):
            continue
        try:
            absolute = urljoin(base, value)
        except ValueError:
            continue
        out.append(absolute.split("#", 1)[0])
    return out


@dataclass
class GroundTruth:
    """What the walk found: ``ok`` URLs (200), ``missing`` (404), ``redirects`` (dir -> dir/)."""

    ok: set[str] = field(default_factory=set)
    missing: set[str] = field(default_factory=set)
    redirects: set[str] = field(default_factory=set)
    html_pages: int = 0
    seconds: float = 0.0


def walk(roots: dict[str, Path], starts: list[str]) -> GroundTruth:
    """Breadth-first walk from ``starts`` over ``roots`` ("http://127.0.0.1:8080" -> dir)."""
    started = time.monotonic()
    origin_roots = {canonical(o + "/")[:-1]: p for o, p in roots.items()}
    prefixes = tuple(o + "/" for o in origin_roots)
    truth = GroundTruth()
    seen: set[str] = set()
    queue: deque[str] = deque()
    for url in starts:
        c = canonical(url)
        if c and c not in seen:
            seen.add(c)
            queue.append(c)
    while queue:
        url = queue.popleft()
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.hostname}:{parts.port}"
        root = origin_roots.get(origin)
        if root is None:
            continue
        rel = unquote(parts.path).lstrip("/")
        target = root / rel
        if parts.path.endswith("/"):
            target = target / "index.html"
        elif target.is_dir():
            truth.redirects.add(url)
            slashed = canonical(url.split("?", 1)[0] + "/")
            if slashed not in seen:
                seen.add(slashed)
                queue.append(slashed)
            continue
        if not target.is_file():
            truth.missing.add(url)
            continue
        truth.ok.add(url)
        if not target.name.endswith(_HTML_SUFFIXES):
            continue
        truth.html_pages += 1
        for link in extract_links(target.read_bytes(), url):
            c = canonical(link)
            if c and c not in seen and c.startswith(prefixes):
                seen.add(c)
                queue.append(c)
    truth.seconds = time.monotonic() - started
    return truth


def main() -> int:
    """``linkgraph.py ROOT ORIGIN START``: print the ground-truth counts of one origin."""
    root, origin, start = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    truth = walk({origin: root}, [start])
    print(
        f"{len(truth.ok)} URLs answer 200 ({truth.html_pages} HTML pages), "
        f"{len(truth.missing)} linked but missing, {len(truth.redirects)} redirects; "
        f"{truth.seconds:.1f}s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
