"""CrawlStats: thread-safe crawl totals fed by every final disposition.

ToeThreads call :meth:`CrawlStats.record_final` once per URI that reaches crawl.log (and
:meth:`CrawlStats.note_scheduled` for each URI the frontier queued); readers call
:meth:`CrawlStats.counts` (scalars, cheap: display and status) or :meth:`CrawlStats.totals` (a
full copy: reports). One lock guards everything; it is held only for counter updates, never
across I/O. Everything counted here can be rebuilt from crawl.log
(:meth:`CrawlStats.replay_crawl_log`), so the reports of a live crawl and of its crawl.log agree.
Heritrix counterpart: ``StatisticsTracker`` with ``CrawledBytesHistotable`` and host substats.
"""

from __future__ import annotations

import heapq
import threading
from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from crawler.bounded_memo import remember
from crawler.curi import DISREGARDED_STATUSES
from crawler.logs.growing_file import complete_lines
from crawler.urls import authority_start

if TYPE_CHECKING:
    from crawler.curi import CrawlURI
    from crawler.tally.tally_store import Tally, TallyStore

HOST_TALLY = "h:"
"""Key prefix of a host's success tally in a shared :class:`~crawler.tally.TallyStore`."""
DOMAIN_TALLY = "d:"
"""Key prefix of a registrable domain's success tally there."""
DUPLICATE_ANNOTATION = "duplicate:digest"
NOT_MODIFIED_ANNOTATION = "duplicate:server-not-modified"


@dataclass(slots=True)
class HostStats:
    """Per-host totals for hosts-report.txt (slotted: one per host ever crawled, ~130 bytes
    plus its counters above 256).

    ``urls``/``bytes`` count successes; ``novel_*``, ``dup_*`` (duplicate by payload digest) and
    ``notmod_*`` (server said not modified) split them; ``robots`` counts URIs precluded by
    robots.txt; ``failed`` failures; ``scheduled`` URIs queued in this process.
    """

    urls: int = 0
    bytes: int = 0
    robots: int = 0
    failed: int = 0
    disregarded: int = 0
    novel_urls: int = 0
    novel_bytes: int = 0
    dup_urls: int = 0
    dup_bytes: int = 0
    notmod_urls: int = 0
    notmod_bytes: int = 0
    scheduled: int = 0

    @property
    def finished(self) -> int:
        """URIs of this host that reached crawl.log."""
        return self.urls + self.failed + self.disregarded


@dataclass
class StatsCounts:
    """The scalar counters, cheap to copy (several times a second for the display)."""

    finished: int = 0
    succeeded: int = 0
    failed: int = 0
    disregarded: int = 0
    bytes: int = 0
    novel_urls: int = 0
    novel_bytes: int = 0
    dup_urls: int = 0
    dup_bytes: int = 0
    notmod_urls: int = 0
    notmod_bytes: int = 0


@dataclass
class StatsTotals(StatsCounts):
    """A consistent copy of every counter at one moment."""

    by_status: Counter[int] = field(default_factory=Counter)
    by_mime: Counter[str] = field(default_factory=Counter)
    bytes_by_mime: Counter[str] = field(default_factory=Counter)
    hosts: dict[str, HostStats] = field(default_factory=dict)
    seeds: dict[str, int] = field(default_factory=dict)
    seed_redirects: dict[str, str] = field(default_factory=dict)
    sources: Counter[tuple[str, str]] = field(default_factory=Counter)


_COUNT_FIELDS = tuple(f.name for f in fields(StatsCounts))
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


HOSTS_KEPT = 65_536
"""``http(s)://`` starts (:func:`~crawler.urls.authority_start`) whose :func:`host_of` is
remembered (then all forgotten and started again)."""

_hosts: dict[str, str] = {}


def host_of(uri: str) -> str:
    """Host (with a non-default port) of a URI for per-host statistics; ``dns:`` kept whole.

    The authority of ``urlsplit``, less any userinfo, lower-cased (``-`` when empty). A plain
    ``http(s)://`` URI whose authority is printable ASCII without spaces or brackets (every
    URI the crawl normalized) is cut out directly, with the same answer as ``urlsplit``.

    Asked of every URI scheduled: the answer of an ``http(s)://`` URI is remembered per
    :func:`~crawler.urls.authority_start` (:data:`HOSTS_KEPT`). Thread-safe (single dictionary
    operations).
    """
    start = authority_start(uri)
    if start is None or not start.startswith(("http://", "https://")):
        return _host_of(uri)
    hit = _hosts.get(start)
    if hit is None:
        hit = remember(_hosts, start, _host_of(uri), HOSTS_KEPT)
    return hit


def _host_of(uri: str) -> str:
    if uri.startswith("dns:"):
        return "dns:"
    start = 8 if uri.startswith("https://") else 7 if uri.startswith("http://") else 0
    if start:
        end = len(uri)
        for delim in "/?#":
            at = uri.find(delim, start, end)
            if at >= 0:
                end = at
        authority = uri[start:end]
        if (
            authority.isascii()
            and authority.isprintable()
            and " " not in authority
            and "[" not in authority
            and "]" not in authority
        ):
            return authority.rsplit("@", 1)[-1].lower() or "-"
    try:
        return urlsplit(uri).netloc.rsplit("@", 1)[-1].lower() or "-"
    except ValueError:
        return "-"


def classify_success(status: int, annotations: list[str]) -> str:
    """``novel``, ``dup`` (same payload captured before) or ``notmod`` for a success."""
    if DUPLICATE_ANNOTATION in annotations:
        return "dup"
    if status == 304 or NOT_MODIFIED_ANNOTATION in annotations:
        return "notmod"
    return "novel"


class CrawlStats:
    """Counters of finished URIs. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._t = StatsTotals()
        # Per-domain success tallies ([urls, bytes]), kept only once asked for (quotas).
        self._domain_of: Callable[[str], str] | None = None
        self._domains: dict[str, list[int]] = {}
        self._shared: TallyStore | None = None

    def _host(self, host: str) -> HostStats:
        hs = self._t.hosts.get(host)
        if hs is None:
            hs = self._t.hosts[host] = HostStats()
        return hs

    def note_scheduled(self, uri: str) -> None:
        """Count a URI the frontier accepted (for each host's ``#remaining``)."""
        host = host_of(uri)
        with self._lock:
            self._host(host).scheduled += 1

    def note_scheduled_many(self, uris: list[str]) -> None:
        """:meth:`note_scheduled` for several URIs under one lock hold."""
        hosts = [host_of(uri) for uri in uris]
        with self._lock:
            for host in hosts:
                self._host(host).scheduled += 1

    def record_final(self, curi: CrawlURI) -> None:
        """Count one URI's final disposition (the moment its crawl.log line is written); a
        success also counts in the shared tallies, if any (:meth:`share_tallies`)."""
        shared = self._shared
        if shared is not None and curi.status > 0:
            host = host_of(curi.uri)
            domain_of = self._domain_of
            keys = [HOST_TALLY + host]
            if domain_of is not None:
                keys.append(DOMAIN_TALLY + domain_of(host))
            shared.add(keys, 1, max(curi.content_size, 0))
        self._record(
            curi.uri,
            curi.status,
            max(curi.content_size, 0),
            curi.mime_type,
            curi.annotations,
            curi.is_seed,
            curi.source_tag,
            curi.header("location") if curi.is_seed else None,
        )

    def _record(
        self,
        uri: str,
        status: int,
        size: int,
        mime: str,
        annotations: list[str],
        is_seed: bool,
        source_tag: str | None,
        location: str | None,
    ) -> None:
        host = host_of(uri)
        kind = classify_success(status, annotations) if status > 0 else ""
        domain_of = self._domain_of
        domain = domain_of(host) if domain_of is not None and status > 0 else None
        with self._lock:
            t = self._t
            t.finished += 1
            t.by_status[status] += 1
            hs = self._host(host)
            if status > 0:
                if domain is not None:
                    tally = self._domains.setdefault(domain, [0, 0])
                    tally[0] += 1
                    tally[1] += size
                t.succeeded += 1
                t.bytes += size
                t.by_mime[mime] += 1
                t.bytes_by_mime[mime] += size
                hs.urls += 1
                hs.bytes += size
                if kind == "novel":
                    t.novel_urls += 1
                    t.novel_bytes += size
                    hs.novel_urls += 1
                    hs.novel_bytes += size
                elif kind == "dup":
                    t.dup_urls += 1
                    t.dup_bytes += size
                    hs.dup_urls += 1
                    hs.dup_bytes += size
                else:
                    t.notmod_urls += 1
                    t.notmod_bytes += size
                    hs.notmod_urls += 1
                    hs.notmod_bytes += size
                if source_tag:
                    t.sources[(source_tag, host)] += 1
            elif status in DISREGARDED_STATUSES:
                t.disregarded += 1
                hs.disregarded += 1
                if status == -9998:
                    hs.robots += 1
            else:
                t.failed += 1
                hs.failed += 1
            if is_seed:
                t.seeds[uri] = status
                if location and status in _REDIRECTS:
                    t.seed_redirects[uri] = location

    def replay_crawl_log(
        self, path: Path, seeds: Collection[str] = (), also: CrawlStats | None = None
    ) -> int:
        """Count every complete line of an existing crawl.log; returns lines counted.

        Used by a resumed crawl and by reports built from a run directory, also while the crawl
        still writes the log: a last line without its newline is being written and is left for
        the next reader (:mod:`crawler.logs.growing_file`). A line is a seed's when its hop path is
        ``-`` or its URI is one of ``seeds`` (seeds that joined the crawl with a hop path, such
        as a seed's redirect target). ``also`` counts the same lines a second time (a crawl-wide
        total built beside one worker's), so both see exactly the same lines. A seed's redirect
        target is taken from the ``R`` line whose via is the seed. Unparseable lines (e.g. a line
        cut short by a crash) are skipped.
        """
        targets = (self,) if also is None else (self, also)
        counted = 0
        for line in complete_lines(path):
            cols = line[42:].split(" ", 9) if len(line) > 42 else []
            if len(cols) < 9:
                continue
            try:
                status = int(line[25:30])
                size_text = line[31:41].strip()
            except ValueError:
                continue
            uri, hops, via, mime = cols[0], cols[1], cols[2], cols[3]
            notes = cols[8] if len(cols) > 8 else "-"
            annotations = [] if notes == "-" else notes.split(",")
            size = int(size_text) if size_text.isdigit() else 0
            source = None if cols[7] == "-" else cols[7]
            is_seed = hops == "-" or uri in seeds
            for stats in targets:
                stats._record(uri, status, size, mime, annotations, is_seed, source, None)
                if hops == "R" and via != "-":
                    stats._note_seed_redirect(via, uri)
            counted += 1
        return counted

    def _note_seed_redirect(self, seed: str, target: str) -> None:
        with self._lock:
            t = self._t
            if t.seeds.get(seed, 0) in _REDIRECTS:
                t.seed_redirects.setdefault(seed, target)

    def note_seed(self, uri: str) -> None:
        """Remember a seed so seeds-report lists it even if it is never processed."""
        with self._lock:
            self._t.seeds.setdefault(uri, -1)

    def counts(self) -> StatsCounts:
        """The scalar counters (no per-host or per-type tables)."""
        with self._lock:
            t = self._t
            return StatsCounts(**{name: getattr(t, name) for name in _COUNT_FIELDS})

    def status_counts(self) -> dict[int, int]:
        """Finished URIs per final status code (a copy; cheap: one entry per code seen)."""
        with self._lock:
            return dict(self._t.by_status)

    def busiest_hosts(self, n: int) -> list[tuple[str, HostStats]]:
        """The ``n`` hosts with the most successes (``dns:`` excluded), copied."""
        with self._lock:
            top = heapq.nlargest(
                n,
                ((h, s) for h, s in self._t.hosts.items() if h != "dns:"),
                key=lambda kv: kv[1].urls,
            )
            return [(h, replace(s)) for h, s in top]

    def share_tallies(self, store: TallyStore) -> None:
        """Count the success tallies of hosts (and of domains, once tracked) in ``store`` from
        now on — every worker of a crawl counting in the same store — and read them there
        (:meth:`success_tallies`). Only :meth:`record_final` adds to it: a crawl.log replayed on
        resume is counted in the store already. The reports' own counts stay this process's."""
        self._shared = store

    def success_tallies(self, host: str, domain: str | None) -> tuple[Tally, Tally]:
        """Successes and their bytes for ``host`` and for ``domain`` (``(0, 0)`` when None or
        not tracked), from the shared tallies when there are some: one read for both."""
        shared = self._shared
        if shared is not None:
            keys = [HOST_TALLY + host] + ([DOMAIN_TALLY + domain] if domain is not None else [])
            got = shared.read(keys)
            return got[0], got[1] if domain is not None else (0, 0)
        return self.host_tally(host), self.domain_tally(domain) if domain is not None else (0, 0)

    def host_tally(self, host: str) -> tuple[int, int]:
        """Successes and their bytes for ``host`` (as :func:`host_of` names it), this
        process's."""
        with self._lock:
            hs = self._t.hosts.get(host)
            return (hs.urls, hs.bytes) if hs is not None else (0, 0)

    def track_domains(self, domain_of: Callable[[str], str]) -> None:
        """Keep success tallies per domain from now on (``domain_of`` maps a :func:`host_of`
        host to its domain; it must be thread-safe), starting from the hosts counted so far."""
        with self._lock:
            self._domain_of = domain_of
            self._recount_domains()

    def domain_tally(self, domain: str) -> tuple[int, int]:
        """Successes and their bytes for ``domain`` (after :meth:`track_domains`)."""
        with self._lock:
            tally = self._domains.get(domain)
            return (tally[0], tally[1]) if tally is not None else (0, 0)

    def _recount_domains(self) -> None:
        self._domains = {}
        if self._domain_of is None:
            return
        for host, hs in self._t.hosts.items():
            if hs.urls:
                tally = self._domains.setdefault(self._domain_of(host), [0, 0])
                tally[0] += hs.urls
                tally[1] += hs.bytes

    def totals(self) -> StatsTotals:
        """A consistent copy of every counter."""
        with self._lock:
            t = self._t
            return StatsTotals(
                **{name: getattr(t, name) for name in _COUNT_FIELDS},
                by_status=Counter(t.by_status),
                by_mime=Counter(t.by_mime),
                bytes_by_mime=Counter(t.bytes_by_mime),
                hosts={k: replace(v) for k, v in t.hosts.items()},
                seeds=dict(t.seeds),
                seed_redirects=dict(t.seed_redirects),
                sources=Counter(t.sources),
            )

    def restore(self, totals: StatsTotals) -> None:
        """Replace the counters (resume from saved state)."""
        with self._lock:
            self._t = totals
            self._recount_domains()
