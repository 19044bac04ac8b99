"""status.json, the action directory, block rules, the display texts and the progress plot."""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from crawler import CrawlURI
from crawler.cli.display import format_status, plain_line, render
from crawler.control.steering import (
    ActionDirectory,
    BlockRules,
    action_taken,
    classify,
    drop_action,
    parse_uri_line,
)
from crawler.frontier.frontier import FrontierSnapshot
from crawler.logs.progress import LEGEND
from crawler.reports.plot import parse_progress_log, plot_progress
from crawler.reports.status import StatusPublisher, is_running, read_status
from crawler.seeds.seed_list import SeedList
from crawler.stats import CrawlStats, StatsCounts


def publish(tmp_path: Path, state: str = "RUNNING", downloaded: int = 50) -> StatusPublisher:
    pub = StatusPublisher(tmp_path, "job")
    failed = CrawlURI("http://a.example/x")
    failed.status = -2
    pub.note_final(failed, 1_709_647_336.2)
    counts = StatsCounts(finished=60, succeeded=downloaded, failed=1, bytes=102400)
    snap = FrontierSnapshot(discovered=160, queued=100, queues={"ready": 2, "snoozed": 1})
    for mono_s, done in ((100.0, 0), (110.0, downloaded)):
        doc = pub.document(
            state=state,
            exit_status="",
            now_s=time.time(),
            mono_s=mono_s,
            started_s=time.time() - 20,
            elapsed_s=20.0,
            counts=StatsCounts(**{**vars(counts), "succeeded": done}),
            snap=snap,
            busy_threads=3,
            total_threads=5,
            thread_steps={"ABOUT_TO_GET_URI": 2},
            busiest=[],
            block_rules=["/cal/"],
            seeds=2,
            processors=[],
        )
    pub.publish(doc)
    return pub


def test_status_document_rates_eta_and_errors(tmp_path: Path) -> None:
    publish(tmp_path)
    doc = read_status(tmp_path)
    assert doc is not None
    assert doc["rates"]["uris_per_s"] == 5.0  # 50 URIs in the last 10 s
    assert doc["rates"]["avg_uris_per_s"] == 2.5  # 50 URIs in 20 s
    assert doc["eta_s"] == 20.0  # 100 queued at 5/s
    assert doc["recent_errors"][0]["status"] == -2
    assert doc["alive"] is True and not doc["died"] and is_running(doc)
    assert not list(tmp_path.glob(".*"))
    text = format_status(doc)
    assert "state:       RUNNING" in text and "ETA:         0:00:20" in text
    assert "http://a.example/x" in text and "block rules: /cal/" in text


def test_a_crawl_whose_process_is_gone_is_reported_died(tmp_path: Path) -> None:
    publish(tmp_path)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    doc = json.loads((tmp_path / "status.json").read_text())
    doc["pid"] = int(dead.stdout)
    (tmp_path / "status.json").write_text(json.dumps(doc))
    read = read_status(tmp_path)
    assert read is not None and read["died"] and not is_running(read)
    assert "DIED" in format_status(read)
    doc["state"] = "FINISHED"
    (tmp_path / "status.json").write_text(json.dumps(doc))
    assert not read_status(tmp_path)["died"]  # type: ignore[index]
    assert read_status(tmp_path / "nothing") is None


def test_display_renders_progress_and_errors(tmp_path: Path) -> None:
    publish(tmp_path)
    doc = read_status(tmp_path)
    assert doc is not None
    console = Console(file=io.StringIO(), width=100, record=True)
    console.print(render(doc))
    text = console.export_text()
    assert "job RUNNING" in text and "50/160 downloaded" in text
    assert "busy threads 3/5" in text and "2 ready" in text and "http://a.example/x" in text
    line = plain_line(doc)
    assert "RUNNING 50/160 downloaded, 100 queued" in line and "ETA 0:00:20" in line


def test_block_rules_persist_and_match_anywhere(tmp_path: Path) -> None:
    rules = BlockRules(tmp_path / "block-rules.txt")
    rules.load()
    assert not rules.blocks("http://a/calendar/2020")
    rules.add(r"/calendar/\d+")
    rules.add("^https://")
    with pytest.raises(ValueError):
        rules.add("(unclosed")
    assert rules.blocks("http://a/calendar/2020") and rules.blocks("https://b/")
    assert not rules.blocks("http://a/calendar/")
    again = BlockRules(tmp_path / "block-rules.txt")
    again.load()
    assert again.patterns == [r"/calendar/\d+", "^https://"]


def test_action_file_names_and_lines() -> None:
    assert classify("a.seeds") == ("seeds", False)
    assert classify("x.s.schedule.gz") == ("schedule", True)
    assert classify("1-2.pause") == ("pause", False)
    assert classify("notes.txt") is None
    assert parse_uri_line("F+ http://a/x L http://a/") == ("http://a/x", "L", "http://a/")
    assert parse_uri_line("http://a/y") == ("http://a/y", "", None)
    assert parse_uri_line("# comment") is None


class Target:
    """The controller's side of the action directory, recording what it was asked."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.scheduled: list[CrawlURI] = []

    def pause(self) -> None:
        self.calls.append("pause")

    def unpause(self) -> None:
        self.calls.append("unpause")

    def request_stop(self, reason: str = "") -> None:
        self.calls.append("terminate")

    def write_reports(self) -> None:
        self.calls.append("report")

    def add_seeds(self, seeds: SeedList) -> int:
        self.calls.append("seeds:" + ",".join(seeds.uris + seeds.directives))
        return len(seeds.uris)

    def schedule(self, curi: CrawlURI) -> bool:
        self.scheduled.append(curi)
        return True

    def in_scope(self, curi: CrawlURI) -> bool:
        return "out" not in curi.uri

    def add_block_rule(self, pattern: str) -> None:
        self.calls.append("block:" + pattern)


def test_action_directory_takes_files_in_and_moves_them_to_done(tmp_path: Path) -> None:
    run = tmp_path
    action = run / "action"
    action.mkdir()
    (action / "a.seeds").write_text("example.com\n+http://(org,example,\nnot a seed\n")
    (action / "b.force").write_text("http://x.org/f\nhttp://[bad\n")
    (action / "c.s.schedule.gz").write_bytes(gzip.compress(b"http://in.org/\nhttp://out.org/\n"))
    (action / "README").write_text("ignored")
    old = time.time() - 5
    for name in ("a.seeds", "b.force", "c.s.schedule.gz"):
        os.utime(action / name, (old, old))
    target, errors = Target(), []
    directory = ActionDirectory(action, target, _Logger(), lambda b, m, r: errors.append(r))
    name = drop_action(run, "block", "/cal/\n")
    assert not action_taken(run, name)
    os.utime(action / name, (old, old))
    assert directory.poll() == 4
    # name order: the command's time-stamped name sorts first
    assert target.calls == ["block:/cal/", "seeds:http://example.com/,+http://(org,example,"]
    assert [(c.uri, c.force_fetch) for c in target.scheduled] == [
        ("http://x.org/f", True),
        ("http://in.org/", False),
    ]
    assert errors == ["not", "http://[bad"]  # "not a seed" is a bad seed line
    assert action_taken(run, name)
    done = sorted(p.name.split(".", 1)[1] for p in (action / "done").iterdir())
    assert done == sorted(["a.seeds", "b.force", "c.s.schedule.gz", name])
    assert (action / "README").exists()


class _Logger:
    def info(self, *args: object, **kw: object) -> None: ...
    def warning(self, *args: object, **kw: object) -> None: ...
    def error(self, *args: object, **kw: object) -> None: ...


def test_stats_counts_match_totals() -> None:
    stats = CrawlStats()
    curi = CrawlURI("http://a.example/")
    curi.status = 200
    curi.content_size = 10
    stats.note_scheduled(curi.uri)
    stats.record_final(curi)
    assert stats.counts().succeeded == stats.totals().succeeded == 1
    assert stats.busiest_hosts(5)[0][0] == "a.example"


def test_plot_reads_progress_log_and_writes_a_png(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "progress-statistics.log"
    log.parent.mkdir()
    rows = [
        LEGEND,
        "2024-03-05T14:10:00Z CRAWL RUNNING - Running",
        "2024-03-05T14:10:20Z       15234        9871         5102   1,234.5(2.98)   312(280)"
        "            17            25       812345       2097152          1.8         432"
        "          12",
        "2024-03-05T14:10:40Z       15300        9000         6000          NaN(3)   300(281)"
        "            17            20       812345       2097152          NaN         400"
        "          11",
        "2024-03-05T14:10:41Z CRAWL ENDED - Finished",
    ]
    log.write_text("\n".join(rows) + "\n")
    series = parse_progress_log(log)
    assert series.queued == [9871, 9000] and series.docs_per_s == [1234.5, 0.0]
    assert series.kb_per_s == [312, 300] and series.busy_threads == [25, 20]
    assert [s for _, s in series.states] == ["RUNNING", "ENDED"]
    png = plot_progress(log, tmp_path / "p.png")
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_status_text_shows_the_servers_the_pace_holds_back(tmp_path: Path) -> None:
    publish(tmp_path)
    doc = read_status(tmp_path)
    assert doc is not None
    assert "paced servers" not in format_status(doc)
    doc["paced_servers"] = [{"server": "slow.example:80", "gap_ms": 412.5}]
    assert "412 ms  slow.example:80" in format_status(doc)
