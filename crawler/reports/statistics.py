"""The reports computed from crawl statistics alone: crawl, seeds, hosts, mimetype, responsecode
and source reports, in Heritrix's layouts.

Each function is pure: it formats a :class:`crawler.stats.StatsTotals` (live, or rebuilt from
crawl.log), so the same numbers come out of a running crawl, its end and ``crawler report``.
Sorting by count is descending; ties are broken by name so the output is deterministic.
Heritrix counterparts: ``CrawlSummaryReport``, ``SeedsReport``, ``HostsReport``,
``MimetypesReport``, ``ResponseCodeReport``, ``SourceTagsReport``.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from crawler.reports.formats import format_bytes, format_duration_ms, rate2
from crawler.stats import StatsTotals


@dataclass(frozen=True)
class CrawlSummary:
    """What the crawl report says beside the totals."""

    job_name: str
    status_text: str
    elapsed_ms: float
    seeds: tuple[str, ...] = ()


def _seed_statuses(totals: StatsTotals, seeds: tuple[str, ...]) -> dict[str, int]:
    statuses = dict.fromkeys(seeds, -1)
    statuses.update(totals.seeds)
    return statuses


def hosts_visited(totals: StatsTotals) -> int:
    """Hosts with at least one URI in crawl.log, ``dns:`` not counted."""
    return sum(1 for host, hs in totals.hosts.items() if host != "dns:" and hs.finished)


def crawl_report(totals: StatsTotals, summary: CrawlSummary) -> str:
    """crawl-report.txt."""
    seeds = _seed_statuses(totals, summary.seeds)
    crawled = sum(1 for status in seeds.values() if status > 0)
    elapsed_s = summary.elapsed_ms / 1000
    docs_per_s = totals.succeeded / elapsed_s if elapsed_s > 0 else 0.0
    kb_per_s = round(totals.bytes / 1024 / elapsed_s) if elapsed_s > 0 else 0
    lines = [
        f"crawl name: {summary.job_name}",
        f"crawl status: {summary.status_text}",
        f"duration: {format_duration_ms(summary.elapsed_ms)}",
        "",
        f"seeds crawled: {crawled}",
        f"seeds uncrawled: {len(seeds) - crawled}",
        "",
        f"hosts visited: {hosts_visited(totals)}",
        "",
        f"URIs processed: {totals.finished}",
        f"URI successes: {totals.succeeded}",
        f"URI failures: {totals.failed}",
        f"URI disregards: {totals.disregarded}",
    ]
    over_quota = totals.by_status.get(-5003, 0)  # the QuotaEnforcer's -5003 (among failures)
    if over_quota:
        lines.append(f"URIs over quota: {over_quota}")
    lines += [
        "",
        f"novel URIs: {totals.novel_urls}",
    ]
    if totals.dup_urls:
        lines.append(f"duplicate-by-hash URIs: {totals.dup_urls}")
    if totals.notmod_urls:
        lines.append(f"not-modified URIs: {totals.notmod_urls}")
    lines += [
        "",
        f"total crawled bytes: {totals.bytes} ({format_bytes(totals.bytes)}) ",
        f"novel crawled bytes: {totals.novel_bytes} ({format_bytes(totals.novel_bytes)})",
    ]
    if totals.dup_urls:
        lines.append(
            f"duplicate-by-hash crawled bytes: {totals.dup_bytes} "
            f"({format_bytes(totals.dup_bytes)}) "
        )
    if totals.notmod_urls:
        lines.append(
            f"not-modified crawled bytes: {totals.notmod_bytes} "
            f"({format_bytes(totals.notmod_bytes)}) "
        )
    lines += ["", f"URIs/sec: {rate2(docs_per_s)}", f"KB/sec: {kb_per_s}"]
    return "\n".join(lines) + "\n"


def seeds_report(totals: StatsTotals, seeds: tuple[str, ...] = ()) -> str:
    """seeds-report.txt: each seed's status, CRAWLED iff > 0, redirect target if redirected."""
    statuses = _seed_statuses(totals, seeds)
    rows = sorted(statuses.items(), key=lambda kv: (-kv[1], kv[0]))
    out = ["[code] [status] [seed] [redirect]"]
    for seed, status in rows:
        word = "CRAWLED" if status > 0 else "NOTCRAWLED"
        redirect = totals.seed_redirects.get(seed)
        out.append(f"{status} {word} {seed}" + (f" {redirect}" if redirect else ""))
    return "\n".join(out) + "\n"


def _host_label(host: str) -> str:
    return host if host.startswith(("dns:", "whois:")) else quote(host, safe=":[]")


def hosts_report(totals: StatsTotals) -> str:
    """hosts-report.txt: every field followed by one space, sorted by #urls."""
    out = [
        "[#urls] [#bytes] [host] [#robots] [#remaining] [#novel-urls] [#novel-bytes] "
        "[#dup-by-hash-urls] [#dup-by-hash-bytes] [#not-modified-urls] [#not-modified-bytes]"
    ]
    for host, hs in sorted(totals.hosts.items(), key=lambda kv: (-kv[1].urls, kv[0])):
        remaining = max(0, hs.scheduled - hs.finished)
        fields = (
            hs.urls,
            hs.bytes,
            _host_label(host),
            hs.robots,
            remaining,
            hs.novel_urls,
            hs.novel_bytes,
            hs.dup_urls,
            hs.dup_bytes,
            hs.notmod_urls,
            hs.notmod_bytes,
        )
        out.append("".join(f"{value} " for value in fields))
    return "\n".join(out) + "\n"


def mimetype_report(totals: StatsTotals) -> str:
    """mimetype-report.txt: successes per content type."""
    out = ["[#urls] [#bytes] [mime-types]"]
    for mime, count in sorted(totals.by_mime.items(), key=lambda kv: (-kv[1], kv[0])):
        out.append(f"{count} {totals.bytes_by_mime[mime]} {mime}")
    return "\n".join(out) + "\n"


def responsecode_report(totals: StatsTotals) -> str:
    """responsecode-report.txt: successes (status > 0, so ``1`` for DNS) per status."""
    out = ["[#urls] [rescode]"]
    rows = [(code, n) for code, n in totals.by_status.items() if code > 0]
    for code, count in sorted(rows, key=lambda kv: (-kv[1], kv[0])):
        out.append(f"{count} {code}")
    return "\n".join(out) + "\n"


def source_report(totals: StatsTotals) -> str:
    """source-report.txt: successes per (source seed, host), or a note when tags are off."""
    if not totals.sources:
        return "No source tag information. (Is 'sourceTagSeeds' enabled?)\n"
    out = ["[source] [host] [#urls]"]
    rows = sorted(totals.sources.items(), key=lambda kv: (kv[0][0], -kv[1], kv[0][1]))
    for (source, host), count in rows:
        out.append(f"{source} {_host_label(host)} {count}")
    return "\n".join(out) + "\n"
