"""What a finished crawl's status shows: no queue left waiting (``crawler status`` and the
console read it from status.json)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from support.route_server import RouteServer, page

from crawler.cli.operations import cmd_status
from crawler.control.controller import CrawlController
from crawler.order.loader import load_order
from crawler.reports.status import read_status

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(60)


def test_a_finished_crawl_has_no_snoozed_queue(tmp_path: Path) -> None:
    """The last URI's queue waits out its politeness delay (3 s) when the crawl ends at once:
    the finished crawl shows it exhausted, not snoozed."""
    with RouteServer(lambda host, path: page()) as server:
        order = load_order(
            ROOT / "jobs" / "example" / "order.yaml",
            [
                f"seeds.urls=['{server.origin()}/']",
                "seeds.file=null",
                "robots.policy=ignore",
                "logging.console=false",
                "frontier.politeness.delay_factor=0",
                "frontier.politeness.min_delay_ms=3000",
                "frontier.politeness.max_delay_ms=3000",
            ],
        )
        run_dir = tmp_path / "run"
        assert CrawlController(order, run_dir, install_signals=False).run() == 0
    doc = read_status(run_dir)
    assert doc is not None and doc["state"] == "FINISHED"
    queues = doc["frontier"]["queues"]
    assert queues["snoozed"] == 0 and queues["ready"] == 0
    assert queues["exhausted"] == doc["frontier"]["total_queues"] >= 1
    out = io.StringIO()
    assert cmd_status(run_dir, False, out, io.StringIO()) == 0
    assert " 0 snoozed" in out.getvalue()
