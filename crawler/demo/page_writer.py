"""HTML rendering for the sample site: one ``PageWriter`` per page records every link it writes.

Each ``href`` the writer emits is also resolved to its absolute, fragment-free URL and recorded,
so ``Resource.links`` is exactly what a correct link extractor finds in the page (a/href,
img/src, link/href, script/src, iframe/src). Pages avoid what Heritrix would mine speculatively
(inline scripts, forms, URL-like attribute values), so the link graph has no ambiguity.
"""

from __future__ import annotations

import posixpath
import random
from dataclasses import dataclass, field

from crawler.demo.site_content import Resource

HTML_TYPE = "text/html; charset=utf-8"
SECTIONS = ("news", "docs", "blog", "products", "about")
SITE_NAMES = ("Northwind Gazette", "Harbor Docs", "Cedar Labs", "Juniper Post", "Atlas Review")
PHOTO_COUNT = 8
ICON_COUNT = 4
ARTICLES_PER_INDEX_PAGE = 10
_WORDS_TEXT = (
    "the of and a to in is you that it he was for on are as with his they at be this have from "
    "or one had by word but not what all were we when your can said there use an each which she "
    "do how their if will up other about out many then them these so some her would make like "
    "him into time has look two more write go see number no way could people my than first "
    "water been call who oil its now find long down day did get come made may part archive "
    "crawler harbor lantern signal copper meadow frontier queue politeness robots record "
    "capture replay collection budget seed scope host server render embed anchor digest harvest "
    "preserve"
)
_WORDS = tuple(_WORDS_TEXT.split())
# Text is cut from one fixed pseudo-random word stream: one RNG call per run of words, not one
# per word, keeps generating a thousand pages well under half a second.
_WORD_STREAM = random.Random("sample-site-words").choices(_WORDS, k=8192)


def _sentences(rng: random.Random, count: int) -> list[str]:
    sentences = []
    for _ in range(count):
        start = rng.randrange(len(_WORD_STREAM) - 20)
        text = " ".join(_WORD_STREAM[start : start + rng.randint(8, 20)])
        sentences.append(text[0].upper() + text[1:] + ".")
    return sentences


_SENTENCES = _sentences(random.Random("sample-site-sentences"), 2048)
_SAME_HOST_FORMS = ("path", "rel", "rel", "abs", "net")
_OTHER_HOST_FORMS = ("abs", "abs", "net")


@dataclass(slots=True)
class HostPlan:
    """The paths of one host's generated pages, decided before any page is rendered."""

    articles: dict[str, list[str]] = field(default_factory=dict)  # section -> article paths
    titles: dict[str, str] = field(default_factory=dict)  # article path -> title
    index_pages: dict[str, list[str]] = field(default_factory=dict)  # section -> its index pages


class PageWriter:
    """Builds one HTML page of host ``host`` at ``path`` and the list of URLs it links to."""

    def __init__(
        self,
        origins: tuple[str, ...],
        plans: list[HostPlan],
        host: int,
        path: str,
        rng: random.Random,
    ) -> None:
        self.origins, self.plans, self.host, self.path, self.rng = origins, plans, host, path, rng
        self.plan = plans[host]
        self.parts: list[str] = []
        self.links: dict[str, None] = {}  # insertion-ordered set

    def href(
        self, target: str, form: str | None = None, host: int | None = None, fragment: str = ""
    ) -> str:
        """The (HTML-escaped) href for ``target`` (a path with query) on ``host`` in ``form``.

        Forms: ``path`` (/a/b), ``rel`` (../b), ``query`` (?page=2, same path only), ``abs``
        (http://127.0.0.1:P/a/b), ``net`` (//127.0.0.1:P/a/b); None picks one at random.
        """
        host = self.host if host is None else host
        if form is None:
            form = self.rng.choice(_SAME_HOST_FORMS if host == self.host else _OTHER_HOST_FORMS)
        origin = self.origins[host]
        self.links[origin + target] = None
        if form == "abs":
            text = origin + target
        elif form == "net":
            text = origin.split(":", 1)[1] + target
        elif form == "rel":
            text = _relative(self.path, target)
        elif form == "query":
            text = "?" + target.partition("?")[2]
        else:
            text = target
        return (text + ("#" + fragment if fragment else "")).replace("&", "&amp;")

    def anchor(
        self,
        target: str,
        label: str,
        form: str | None = None,
        host: int | None = None,
        fragment: str = "",
    ) -> str:
        return f'<a href="{self.href(target, form, host, fragment)}">{label}</a>'

    def fragment_only(self, name: str) -> str:
        """An in-page href (``#name``); it resolves to this page itself."""
        self.links[self.origins[self.host] + self.path] = None
        return "#" + name

    def words(self, count: int) -> str:
        start = self.rng.randrange(len(_WORD_STREAM) - count)
        return " ".join(_WORD_STREAM[start : start + count])

    def paragraph(self, anchors: list[str]) -> str:
        """A paragraph of a few sentences with ``anchors`` placed between them."""
        count = self.rng.randint(4, 9)
        start = self.rng.randrange(len(_SENTENCES) - count)
        sentences = _SENTENCES[start : start + count]
        for anchor in anchors:
            at = self.rng.randrange(len(sentences))
            sentences[at] = sentences[at][:-1] + f", see {anchor}."
        return "<p>" + " ".join(sentences) + "</p>\n"

    def random_article(self, host: int | None = None) -> str:
        plan = self.plans[self.host if host is None else host]
        section = self.rng.choice([s for s in SECTIONS if plan.articles[s]])
        return self.rng.choice(plan.articles[section])

    def image(self, path: str, alt: str) -> str:
        return f'<img src="{self.href(path, self.rng.choice(("path", "rel")))}" alt="{alt}">'

    def open(self, title: str) -> None:
        """Start the page: head (stylesheet, icon, script), masthead and navigation."""
        site = SITE_NAMES[self.host % len(SITE_NAMES)]
        self.parts.append(
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f"<title>{title} | {site}</title>\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<meta name="description" content="{self.words(12)}">\n'
            f'<link rel="stylesheet" href="{self.href("/static/css/site.css", "path")}">\n'
            f'<link rel="icon" href="{self.href("/favicon.ico", "path")}">\n'
            f'<script src="{self.href("/static/js/site.js", "path")}" defer></script>\n'
            '</head>\n<body id="top">\n<header class="masthead">\n'
            f'<a class="logo" href="{self.href("/", "path")}">'
            f'<img src="{self.href("/static/img/logo.gif", "path")}" alt="{site}"></a>\n<nav><ul>'
        )
        for section in SECTIONS:
            label = section.capitalize()
            self.parts.append(f"<li>{self.anchor(f'/{section}/', label, 'path')}</li>")
        self.parts.append("</ul></nav>\n</header>\n<main>\n")

    def close(self) -> Resource:
        """Append the footer and finish the page."""
        self.parts.append(
            "</main>\n<footer>\n<p>"
            + self.anchor(self.path, "Back to top", "rel", fragment="top")
            + " &middot; "
            + self.anchor("/private/", "Members area", "path")
            + " &middot; "
            + self.anchor("/about/", "About us", "path")
            + "</p>\n<p>&copy; 2024 "
            + SITE_NAMES[self.host % len(SITE_NAMES)]
            + ". "
            + self.words(20)
            + ".</p>\n</footer>\n</body>\n</html>\n"
        )
        return self.finish()

    def finish(self) -> Resource:
        """The page as a 200 ``text/html`` resource with the links written so far."""
        return Resource(200, HTML_TYPE, "".join(self.parts).encode(), tuple(self.links))


def _relative(source: str, target: str) -> str:
    """A relative reference from the page at ``source`` to ``target`` (paths with queries)."""
    base_dir = posixpath.dirname(source.partition("?")[0])
    target_path, mark, query = target.partition("?")
    rel = posixpath.relpath(target_path, base_dir)
    if target_path.endswith("/"):
        rel = "./" if rel == "." else rel + "/"
    return rel + mark + query
