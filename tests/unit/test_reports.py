"""Report layouts (as Heritrix writes them) and statistics that agree with crawl.log."""

from __future__ import annotations

from pathlib import Path

from crawler import CrawlURI, Hop
from crawler.logs.crawl_logs import CrawlLogs
from crawler.reports import REPORT_NAMES, CrawlSummary, render_reports, write_reports
from crawler.reports.formats import date12, format_bytes, format_clock, format_duration_ms
from crawler.reports.runtime import basic_frontier_report, processors_report
from crawler.reports.statistics import (
    crawl_report,
    hosts_report,
    mimetype_report,
    responsecode_report,
    seeds_report,
    source_report,
)
from crawler.stats import CrawlStats, StatsTotals

NOW = 1_709_647_336.204  # 2024-03-05T14:02:16.204Z
SEED = "http://example.org/"


def finished(uri: str, status: int, size: int = 0, **kw: object) -> CrawlURI:
    seed = CrawlURI(SEED, is_seed=True, source_tag=SEED)
    curi = seed if uri == SEED else seed.create_child(uri, str(kw.pop("hop", Hop.LINK)))
    curi.status = status
    curi.content_size = size
    curi.content_type = str(kw.pop("mime", "text/html")) if status > 0 else None
    curi.thread_number = 1
    for note in kw.pop("notes", ()):  # type: ignore[attr-defined]
        curi.annotate(note)
    if "location" in kw:
        curi.response_headers = [("Location", str(kw["location"]))]
    return curi


def sample() -> list[CrawlURI]:
    return [
        finished(SEED, 301, 10, location="http://example.org/home"),
        finished("http://example.org/home", 200, 5000, hop=Hop.REFER),
        finished("http://example.org/a.png", 200, 700, hop=Hop.EMBED, mime="image/png"),
        finished("http://example.org/b", 200, 5000, notes=["duplicate:digest"]),
        finished("http://example.org/private/x", -9998),
        finished("http://other.org:8080/c", 404, 30),
        finished("http://other.org:8080/d", -2),
        finished("dns:example.org", 1, 58, hop=Hop.PREREQ, mime="text/dns"),
    ]


def live_totals() -> StatsTotals:
    stats = CrawlStats()
    stats.note_seed(SEED)
    stats.note_seed("http://never.example/")
    for curi in sample():
        stats.record_final(curi)
    return stats.totals()


def test_formats_follow_heritrix() -> None:
    assert format_bytes(0) == "0 B"
    assert format_bytes(348) == "348 B"
    assert format_bytes(5 * 1024 + 300) == "5.3 KiB"
    assert format_bytes(23 * 1024 * 1024 + 1) == "23 MiB"
    assert format_duration_ms(5_618_651) == "1h33m38s651ms"
    assert format_duration_ms(60_000) == "1m"
    assert format_duration_ms(0) == "0ms"
    assert format_clock(3725) == "1:02:05" and format_clock(None) == "-"
    assert date12(NOW) == "202403051402"


def test_crawl_report_layout() -> None:
    text = crawl_report(live_totals(), CrawlSummary("job", "Finished", 4000, (SEED,)))
    assert text == (
        "crawl name: job\n"
        "crawl status: Finished\n"
        "duration: 4s\n"
        "\n"
        "seeds crawled: 1\n"
        "seeds uncrawled: 1\n"
        "\n"
        "hosts visited: 2\n"
        "\n"
        "URIs processed: 8\n"
        "URI successes: 6\n"
        "URI failures: 1\n"
        "URI disregards: 1\n"
        "\n"
        "novel URIs: 5\n"
        "duplicate-by-hash URIs: 1\n"
        "\n"
        "total crawled bytes: 10798 (11 KiB) \n"
        "novel crawled bytes: 5798 (5.7 KiB)\n"
        "duplicate-by-hash crawled bytes: 5000 (4.9 KiB) \n"
        "\n"
        "URIs/sec: 1.50\n"
        "KB/sec: 3\n"
    )


def test_table_reports_layout() -> None:
    totals = live_totals()
    assert seeds_report(totals, (SEED,)).splitlines() == [
        "[code] [status] [seed] [redirect]",
        f"301 CRAWLED {SEED} http://example.org/home",
        "-1 NOTCRAWLED http://never.example/",
    ]
    hosts = hosts_report(totals).splitlines()
    assert hosts[0].startswith("[#urls] [#bytes] [host] [#robots] [#remaining]")
    assert hosts[1] == "4 10710 example.org 1 0 3 5710 1 5000 0 0 "
    assert hosts[2:] == ["1 58 dns: 0 0 1 58 0 0 0 0 ", "1 30 other.org:8080 0 0 1 30 0 0 0 0 "]
    assert mimetype_report(totals).splitlines()[:2] == [
        "[#urls] [#bytes] [mime-types]",
        "4 10040 text/html",
    ]
    assert responsecode_report(totals).splitlines() == [
        "[#urls] [rescode]",
        "3 200",
        "1 1",
        "1 301",
        "1 404",
    ]
    assert source_report(totals).splitlines()[:2] == [
        "[source] [host] [#urls]",
        f"{SEED} example.org 4",
    ]
    assert source_report(StatsTotals()) == (
        "No source tag information. (Is 'sourceTagSeeds' enabled?)\n"
    )


def test_reports_rebuilt_from_crawl_log_equal_the_live_ones(tmp_path: Path) -> None:
    logs = CrawlLogs(tmp_path)
    for curi in sample():
        logs.log_final(curi, NOW)
    logs.close()
    replayed = CrawlStats()
    replayed.note_seed(SEED)
    replayed.note_seed("http://never.example/")
    assert replayed.replay_crawl_log(tmp_path / "crawl.log") == 8
    summary = CrawlSummary("job", "Finished", 4000, (SEED,))
    kw = {"processors": "", "frontier": "", "threads": ""}
    assert render_reports(replayed.totals(), summary, **kw) == render_reports(
        live_totals(), summary, **kw
    )


def test_write_reports_writes_all_nine(tmp_path: Path) -> None:
    texts = render_reports(
        live_totals(),
        CrawlSummary("job", "x", 1, ()),
        processors="p\n",
        frontier="f\n",
        threads="t\n",
    )
    paths = write_reports(tmp_path / "reports", texts)
    assert sorted(p.name for p in paths) == sorted(REPORT_NAMES)
    assert not list((tmp_path / "reports").glob(".*"))


def test_processors_and_frontier_reports() -> None:
    entries = [
        {
            "chain": "fetch",
            "class": "processors.fetch.FetchHTTP",
            "name": "f",
            "lines": ["  3 URIs handled"],
        },
    ]
    text = processors_report(entries, NOW)
    assert "FetchChain - Processors report - 202403051402\n  Number of Processors: 1\n\n" in text
    assert "Processor: processors.fetch.FetchHTTP\n  3 URIs handled\n" in text
    assert "PreChain - Processors report - 202403051402\n  Number of Processors: 0\n" in text
    frontier = basic_frontier_report(
        "job",
        {
            "discovered": 9,
            "queued": 4,
            "succeeded": 3,
            "failed": 1,
            "disregarded": 1,
            "queues": {"ready": 1, "snoozed": 2, "in_process": 1, "exhausted": 5},
            "total_queues": 9,
            "longest": [["example.org", 4]],
        },
        NOW,
    )
    assert " Discovered:    9\n Queued:        4\n Finished:      5\n" in frontier
    assert "             Active queues: 4\n" in frontier
    assert " example.org: 4 URIs" in frontier
