"""Deterministic generation of the sample site: pages, assets, redirects, robots.txt, link graph.

``generate_site(origins, pages_per_host, seed)`` returns a ``SiteContent``. The structure (paths,
titles, which page links where) depends only on ``pages_per_host``, ``seed`` and the number of
hosts; the origins only appear in absolute links. Every host has exactly ``pages_per_host`` HTML
pages: a home page, paginated section indexes (``/news/?page=2``), articles in five sections with
varied URL shapes (``/news/2022/x.html``, ``/blog/x/``, ``/products/item.php?id=4&variant=red``),
a robots-disallowed ``/private/`` section, a page reachable only through it
(``/unlisted/preview.html``) and an iframe widget. Links use every form a crawler must resolve:
root-relative, ``../`` relative, query-only (``?page=2``), absolute, protocol-relative, with
fragments and ``&amp;``. Besides, per host: ``/old-page`` (301, absolute Location) and
``/go?to=blog`` (302, relative Location), ``/missing-page.html`` (404, linked), PNG/GIF images, a
stylesheet whose ``url()`` names an image, a script, ``/favicon.ico`` and ``/robots.txt``.
A pure function of its arguments.
"""

from __future__ import annotations

import random

from crawler.demo import images, pages
from crawler.demo.page_writer import (
    ARTICLES_PER_INDEX_PAGE,
    HTML_TYPE,
    ICON_COUNT,
    PHOTO_COUNT,
    SECTIONS,
    SITE_NAMES,
    HostPlan,
    PageWriter,
)
from crawler.demo.site_content import DISALLOWED_PREFIX, Resource, SiteContent

MIN_PAGES_PER_HOST = 20
_FIXED_PAGES = 1 + len(pages.PRIVATE_PAGES) + 2  # home, private pages, unlisted page, widget
_SLUG_WORDS_TEXT = (
    "harbor cedar river market signal garden winter copper field lantern quiet north bridge "
    "orchard silver paper morning stone valley ember meadow island canyon atlas beacon"
)
_SLUG_WORDS = tuple(_SLUG_WORDS_TEXT.split())
_COLOURS = ("red", "blue", "green", "amber")
_NOT_FOUND = Resource(
    404,
    HTML_TYPE,
    b"<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head>\n"
    b"<body><h1>Not Found</h1><p>The requested page does not exist.</p></body></html>\n",
)
_STYLESHEET = """/* Site styles */
body { margin: 0; font: 16px/1.5 Georgia, serif; color: #222;
       background: #fafafa url(../img/bg.png) repeat-x; }
.masthead { display: flex; align-items: center; padding: 8px 24px; background: #1d3557; }
.masthead nav ul { display: flex; gap: 16px; list-style: none; }
.masthead a { color: #f1faee; text-decoration: none; }
main { max-width: 760px; margin: 24px auto; padding: 0 16px; }
figure img, .gallery img { max-width: 100%; border: 1px solid #ccc; }
.pagination { margin: 16px 0; word-spacing: 8px; }
footer { padding: 16px 24px; color: #666; border-top: 1px solid #ddd; }
"""
_SCRIPT = """// Site behaviour: collapsible navigation on narrow screens.
(function () {
  "use strict";
  function toggle(event) {
    var nav = document.querySelector("nav");
    if (nav) { nav.classList.toggle("open"); }
    event.preventDefault();
  }
  document.addEventListener("DOMContentLoaded", function () {
    var logo = document.querySelector(".logo");
    if (logo && window.innerWidth < 600) { logo.addEventListener("click", toggle); }
  });
})();
"""


def _article_count(pages_per_host: int) -> int:
    for articles in range(pages_per_host, 0, -1):
        per_section = [len(range(s, articles, len(SECTIONS))) for s in range(len(SECTIONS))]
        index_pages = sum(max(1, -(-n // ARTICLES_PER_INDEX_PAGE)) for n in per_section)
        if _FIXED_PAGES + index_pages + articles <= pages_per_host:
            return articles
    return 0


def _article_path(section: str, number: int, slug: str, rng: random.Random) -> str:
    if section == "news":
        return f"/news/{2021 + number % 4}/{slug}.html"
    if section == "docs":
        return f"/docs/{('guide', 'reference', 'tutorials')[number % 3]}/{slug}.html"
    if section == "blog":
        return f"/blog/{slug}/"
    if section == "products":
        if number % 4 == 3:
            return f"/products/item.php?id={number}&variant={rng.choice(_COLOURS)}"
        return f"/products/item.php?id={number}"
    return f"/about/{slug}.html"


def _plan_host(pages_per_host: int, rng: random.Random) -> HostPlan:
    plan = HostPlan(articles={section: [] for section in SECTIONS})
    for number in range(_article_count(pages_per_host)):
        section = SECTIONS[number % len(SECTIONS)]
        words = rng.sample(_SLUG_WORDS, rng.randint(2, 3))
        path = _article_path(section, number, "-".join([*words, str(number)]), rng)
        plan.articles[section].append(path)
        plan.titles[path] = " ".join(words).capitalize() + f" {number}"
    for section in SECTIONS:
        count = max(1, -(-len(plan.articles[section]) // ARTICLES_PER_INDEX_PAGE))
        later = [f"/{section}/?page={n}" for n in range(2, count + 1)]
        plan.index_pages[section] = [f"/{section}/", *later]
    return plan


def _render_pages(w_for: dict[str, PageWriter], plan: HostPlan) -> dict[str, Resource]:
    table = {"/": pages.render_home(w_for["/"])}
    for section in SECTIONS:
        for n, path in enumerate(plan.index_pages[section], start=1):
            table[path] = pages.render_index(w_for[path], section, n)
        for n, path in enumerate(plan.articles[section]):
            table[path] = pages.render_article(w_for[path], section, n)
    for n, path in enumerate(pages.PRIVATE_PAGES):
        table[path] = pages.render_private(w_for[path], n)
    table[pages.UNLISTED_PAGE] = pages.render_unlisted(w_for[pages.UNLISTED_PAGE])
    table[pages.WIDGET_PAGE] = pages.render_widget(w_for[pages.WIDGET_PAGE])
    return table


def _static_resources(origin: str, host: int, plan: HostPlan, tint: int) -> dict[str, Resource]:
    first_article = next(plan.articles[s][0] for s in SECTIONS if plan.articles[s])
    robots = (
        f"# robots.txt for {SITE_NAMES[host % len(SITE_NAMES)]}\n"
        "User-agent: ExampleBadBot\nDisallow: /\n\n"
        f"User-agent: *\nDisallow: {DISALLOWED_PREFIX}\n"
    )
    table = {
        "/robots.txt": Resource(200, "text/plain; charset=utf-8", robots.encode()),
        "/static/css/site.css": Resource(
            200, "text/css; charset=utf-8", _STYLESHEET.encode(), (origin + "/static/img/bg.png",)
        ),
        "/static/js/site.js": Resource(200, "text/javascript; charset=utf-8", _SCRIPT.encode()),
        "/static/img/bg.png": Resource(200, "image/png", images.png_bytes(8, 64, tint)),
        "/static/img/logo.gif": Resource(200, "image/gif", images.gif_bytes(48, 16, tint)),
        "/favicon.ico": Resource(200, "image/x-icon", images.ico_bytes(16, tint)),
        "/old-page": _redirect(301, origin + first_article, origin + first_article),
        "/go?to=blog": _redirect(302, "/blog/", origin + "/blog/"),
        "/missing-page.html": _NOT_FOUND,
    }
    for n in range(1, PHOTO_COUNT + 1):
        png = images.png_bytes(24 + 8 * n, 18 + 6 * n, tint + n)
        table[f"/static/img/photo-{n}.png"] = Resource(200, "image/png", png)
    for n in range(1, ICON_COUNT + 1):
        gif = images.gif_bytes(16, 16, tint + n)
        table[f"/static/img/icon-{n}.gif"] = Resource(200, "image/gif", gif)
    return table


def _redirect(status: int, location: str, target_url: str) -> Resource:
    body = f'<html><body><a href="{location}">Moved here</a></body></html>\n'.encode()
    return Resource(status, HTML_TYPE, body, (target_url,), location)


def generate_site(
    origins: tuple[str, ...], pages_per_host: int = 100, seed: int = 0
) -> SiteContent:
    """Build the whole site for ``origins`` (``http://127.0.0.1:PORT``; the first is the main host).

    Raises ``ValueError`` without origins or when ``pages_per_host`` < ``MIN_PAGES_PER_HOST``.
    """
    if not origins:
        raise ValueError("the sample site needs at least one host")
    if pages_per_host < MIN_PAGES_PER_HOST:
        raise ValueError(f"pages_per_host must be >= {MIN_PAGES_PER_HOST}, got {pages_per_host}")
    rngs = [random.Random(f"sample-site:{seed}:{h}") for h in range(len(origins))]
    plans = [_plan_host(pages_per_host, rng) for rng in rngs]
    hosts: dict[str, dict[str, Resource]] = {}
    for h, origin in enumerate(origins):
        plan, rng = plans[h], rngs[h]
        paths = ["/", *pages.PRIVATE_PAGES, pages.UNLISTED_PAGE, pages.WIDGET_PAGE]
        for section in SECTIONS:
            paths += plan.index_pages[section] + plan.articles[section]
        writers = {path: PageWriter(origins, plans, h, path, rng) for path in paths}
        table = _render_pages(writers, plan)
        table.update(_static_resources(origin, h, plan, seed * 31 + h * 7))
        hosts[origin] = table
    return SiteContent(origins=origins, hosts=hosts, not_found=_NOT_FOUND)
