"""The sample site's data: every resource it serves and the link graph between them.

``SiteContent`` is what ``site_generator.generate_site`` produces and what ``SampleSite`` serves.
Each ``Resource`` records, besides its status and bytes, the absolute URLs (fragments removed) a
crawler following a/href, img/src, link/href, script/src, iframe/src and ``Location:`` is led to
from it. ``expected_urls`` walks that graph, so the ground truth for a crawl comes from the
generator's own data rather than from parsing the pages. Immutable after construction; thread-safe.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

DISALLOWED_PREFIX = "/private/"
"""The path prefix every host's robots.txt disallows for all user agents."""


@dataclass(frozen=True, slots=True)
class Resource:
    """One response of the site: ``links`` are the absolute, fragment-free URLs it leads to."""

    status: int
    content_type: str
    body: bytes
    links: tuple[str, ...] = ()
    location: str | None = None


@dataclass(frozen=True, slots=True)
class SiteContent:
    """Every host's resources, keyed by origin (``http://127.0.0.1:PORT``) then path-with-query.

    ``not_found`` is served for any path not in a host's table. Robots rules are one prefix
    (``DISALLOWED_PREFIX``) on every host, which keeps ``is_disallowed`` exact without a parser.
    """

    origins: tuple[str, ...]
    hosts: Mapping[str, Mapping[str, Resource]]
    not_found: Resource

    @property
    def main_url(self) -> str:
        """The home page of the first ("main") host, from which the whole site is reachable."""
        return self.origins[0] + "/"

    def resource(self, url: str) -> Resource:
        """The resource served for an absolute ``url`` (``not_found`` for unknown paths)."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        path = parts.path + ("?" + parts.query if parts.query else "")
        return self.hosts.get(origin, {}).get(path, self.not_found)

    def all_urls(self) -> list[str]:
        """Every URL with an explicit entry (pages, assets, redirects, robots.txt, the 404 link)."""
        return [origin + path for origin, table in self.hosts.items() for path in table]

    @staticmethod
    def is_disallowed(url: str) -> bool:
        """True when the site's robots.txt forbids ``url`` to every user agent."""
        return urlsplit(url).path.startswith(DISALLOWED_PREFIX)

    def expected_urls(
        self,
        obey_robots: bool = True,
        *,
        hosts: Iterable[str] | None = None,
        include_robots_txt: bool = True,
    ) -> set[str]:
        """Every URL a complete crawl seeded with the main host's ``/`` fetches.

        Breadth-first over ``Resource.links`` from ``main_url``. With ``obey_robots`` a disallowed
        URL is neither fetched nor followed. ``hosts`` (``"127.0.0.1:PORT"`` strings; default: all
        of the site's hosts) limits the walk to those hosts, as a scope would. Redirect and 404
        URLs are included (they are fetched); ``/robots.txt`` of every host the walk touched,
        even only through a disallowed link, is included unless ``include_robots_txt`` is false,
        because the crawler must fetch it before it can decide anything on that host.
        """
        allowed = {o.split("://", 1)[1] for o in self.origins} if hosts is None else set(hosts)
        seen: set[str] = set()
        fetched: set[str] = set()
        touched_origins: set[str] = set()
        frontier = [self.main_url]
        while frontier:
            next_frontier: list[str] = []
            for url in frontier:
                if url in seen:
                    continue
                seen.add(url)
                parts = urlsplit(url)
                if parts.netloc not in allowed:
                    continue
                touched_origins.add(f"{parts.scheme}://{parts.netloc}")
                if obey_robots and self.is_disallowed(url):
                    continue
                fetched.add(url)
                resource = self.resource(url)
                # A crawler drops the outlinks of error responses (Heritrix's CandidatesProcessor).
                if resource.status < 400:
                    next_frontier.extend(link for link in resource.links if link not in seen)
            frontier = next_frontier
        if include_robots_txt:
            fetched.update(origin + "/robots.txt" for origin in touched_origins)
        return fetched
