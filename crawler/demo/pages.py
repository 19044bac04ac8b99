"""The kinds of HTML page of the sample site, each rendered through a ``PageWriter``.

Reachability from the main host's ``/`` is guaranteed by construction: the main home page links
every other host's home page, every home page links its section indexes, the index pages link
each other and every article. Random in-text links only add redundancy, except that
``/unlisted/preview.html`` is linked from ``/private/reports/q2.html`` alone, so a crawler that
ignores robots.txt fetches more than the robots-disallowed pages themselves.
"""

from __future__ import annotations

from crawler.demo.page_writer import (
    ARTICLES_PER_INDEX_PAGE,
    ICON_COUNT,
    PHOTO_COUNT,
    SECTIONS,
    PageWriter,
)
from crawler.demo.site_content import Resource

PRIVATE_PAGES = (
    "/private/",
    "/private/members.html",
    "/private/reports/q1.html",
    "/private/reports/q2.html",
)
UNLISTED_PAGE = "/unlisted/preview.html"
WIDGET_PAGE = "/widgets/map.html"


def render_home(w: PageWriter) -> Resource:
    w.open("Home")
    w.parts.append(f"<h1>Welcome</h1>\n{w.paragraph([])}")
    for section in SECTIONS:
        w.parts.append(f"<section><h2>{w.anchor(f'/{section}/', section.capitalize())}</h2><ul>")
        for path in w.plan.articles[section][:3]:
            w.parts.append(f"<li>{w.anchor(path, w.plan.titles[path])}: {w.words(25)}</li>")
        w.parts.append("</ul></section>\n")
    w.parts.append('<section class="gallery"><h2>Gallery</h2>\n')
    w.parts.append(w.image("/static/img/bg.png", "Background texture"))
    for n in range(1, PHOTO_COUNT + 1):
        w.parts.append(w.image(f"/static/img/photo-{n}.png", f"Photo {n}"))
    for n in range(1, ICON_COUNT + 1):
        w.parts.append(w.image(f"/static/img/icon-{n}.gif", f"Icon {n}"))
    w.parts.append(f'</section>\n<iframe src="{w.href(WIDGET_PAGE, "rel")}" title="Map">')
    w.parts.append("</iframe>\n<section><h2>Partner sites</h2><ul>")
    count = len(w.origins)
    partners = range(1, count) if w.host == 0 else sorted({0, (w.host + 1) % count})
    for other in partners:
        w.parts.append(f"<li>{w.anchor('/', f'Partner site {other}', host=other)}</li>")
    w.parts.append("</ul></section>\n<section><h2>Elsewhere</h2><p>")
    w.parts.append(w.anchor("/old-page", "Our old front page", "path") + " &middot; ")
    w.parts.append(w.anchor("/missing-page.html", "A page that went missing", "rel"))
    w.parts.append("</p></section>\n")
    return w.close()


def render_index(w: PageWriter, section: str, page: int) -> Resource:
    """Page ``page`` (1-based) of ``section``'s article list; page 1 is ``/<section>/``."""
    w.open(f"{section.capitalize()} (page {page})")
    w.parts.append(f"<h1>{section.capitalize()}</h1>\n{w.paragraph([])}<ul class='listing'>\n")
    start = (page - 1) * ARTICLES_PER_INDEX_PAGE
    for path in w.plan.articles[section][start : start + ARTICLES_PER_INDEX_PAGE]:
        w.parts.append(f"<li><h3>{w.anchor(path, w.plan.titles[path], 'rel')}</h3>")
        w.parts.append(f"<p>{w.words(w.rng.randint(30, 50))}.</p></li>\n")
    w.parts.append('</ul>\n<nav class="pagination">')
    for n, index_path in enumerate(w.plan.index_pages[section], start=1):
        form = "rel" if n == 1 else "query"
        w.parts.append(" " + (str(n) if n == page else w.anchor(index_path, str(n), form)))
    w.parts.append("</nav>\n")
    if section == "about" and page == 1:
        w.parts.append(f'<iframe src="{w.href(WIDGET_PAGE, "path")}" title="Map"></iframe>\n')
    return w.close()


def render_article(w: PageWriter, section: str, number: int) -> Resource:
    """Article ``number`` (0-based) of ``section``: 8-20 paragraphs with links in the text."""
    articles = w.plan.articles[section]
    title = w.plan.titles[w.path]
    w.open(title)
    w.parts.append(
        f'<p class="crumbs">{w.anchor("/", "Home", "rel")} &rsaquo; '
        f"{w.anchor(f'/{section}/', section.capitalize(), 'rel')}</p>\n<article>\n"
        f"<h1>{title}</h1>\n<p class='meta'>{w.words(6)} &middot; "
        f'<a href="{w.fragment_only("comments")}">Comments</a></p>\n'
    )
    for n in range(w.rng.randint(8, 20)):
        anchors = [
            w.anchor(
                w.random_article(),
                w.words(w.rng.randint(1, 3)),
                fragment=f"part-{n}" if w.rng.random() < 0.25 else "",
            )
            for _ in range(w.rng.randint(0, 2))
        ]
        if n == 1 and len(w.origins) > 1 and w.rng.random() < 0.6:
            other = w.rng.choice([h for h in range(len(w.origins)) if h != w.host])
            target = w.random_article(other) if w.rng.random() < 0.85 else "/private/members.html"
            anchors.append(w.anchor(target, "our partners", host=other))
        w.parts.append(f'<h2 id="part-{n}">{w.words(4).capitalize()}</h2>\n' if n % 3 == 2 else "")
        w.parts.append(w.paragraph(anchors))
        if n == 0:
            photo = f"/static/img/photo-{w.rng.randint(1, PHOTO_COUNT)}.png"
            w.parts.append(f"<figure>{w.image(photo, title)}<figcaption>{w.words(8)}")
            w.parts.append("</figcaption></figure>\n")
    if section == "news" and number < 2:
        special = "/old-page" if number == 0 else "/missing-page.html"
        w.parts.append(f"<p>Previously: {w.anchor(special, 'an earlier story')}.</p>\n")
    if section == "blog" and number == 0:
        w.parts.append(f"<p>More: {w.anchor('/go?to=blog', 'all posts', 'path')}.</p>\n")
    w.parts.append('</article>\n<aside id="comments"><h2>Related</h2><ul>')
    for neighbour in (number - 1, number + 1):
        if 0 <= neighbour < len(articles):
            target = articles[neighbour]
            w.parts.append(f"<li>{w.anchor(target, w.plan.titles[target], 'rel')}</li>")
    w.parts.append("</ul></aside>\n")
    return w.close()


def render_private(w: PageWriter, number: int) -> Resource:
    """The robots-disallowed section; its last page links the only way to ``UNLISTED_PAGE``."""
    w.open(f"Members {number}")
    w.parts.append(f"<h1>Members area</h1>\n{w.paragraph([])}<ul>")
    for target in PRIVATE_PAGES[(number + 1) % len(PRIVATE_PAGES) :][:2]:
        w.parts.append(f"<li>{w.anchor(target, 'Members page', 'rel')}</li>")
    if number == len(PRIVATE_PAGES) - 1:
        w.parts.append(f"<li>{w.anchor(UNLISTED_PAGE, 'Upcoming preview', 'rel')}</li>")
    w.parts.append("</ul>\n")
    return w.close()


def render_unlisted(w: PageWriter) -> Resource:
    w.open("Preview")
    w.parts.append(f"<h1>Preview</h1>\n{w.paragraph([])}{w.paragraph([])}")
    return w.close()


def render_widget(w: PageWriter) -> Resource:
    """A small framed page (no site chrome), embedded with an iframe."""
    w.parts.append(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Map</title></head>\n'
        f'<body><img src="{w.href("/static/img/icon-1.gif", "rel")}" alt="Pin">'
        f'<p>{w.words(30)}.</p><p><a href="{w.href("/about/", "rel")}" target="_top">'
        "Directions</a></p></body></html>\n"
    )
    return w.finish()
