"""The frontier the order names (``frontier.class``) and its optional abilities, checked once
when the crawl is built (crawler.frontier.frontier_abilities): a frontier that has ``claim``,
an inline gate and ``seen_recently`` gives them to the processors; one with the Frontier
protocol alone builds, starts and ends a crawl without them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from crawler.control.controller import CrawlController
from crawler.curi import CrawlURI
from crawler.frontier import MemoryQueueStore, WorkQueueFrontier
from crawler.frontier.assignment import HostnameQueueAssignmentPolicy
from crawler.frontier.frontier import FrontierSnapshot
from crawler.frontier.frontier_abilities import FrontierAbilities
from crawler.frontier.frontier_report import frontier_summary_report
from crawler.logs.applog import close_app_logging
from crawler.order.errors import OrderError
from crawler.order.loader import load_order
from crawler.order.schema import FrontierConfig
from crawler.processor import ProcessorContext
from crawler.uniq.memory_uniq import MemoryUriUniqFilter

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
SEED = "http://127.0.0.1:9/"  # the discard port: nothing listens, the fetch fails at once

pytestmark = pytest.mark.timeout(60)


class LeanFrontier:
    """The Frontier protocol and nothing more: no claim, inline gate, seen_recently or
    introspection (a work-queue frontier does the work)."""

    shared: ClassVar[bool] = False

    def __init__(self, *parts: Any, **named: Any) -> None:
        self._inner = WorkQueueFrontier(*parts, **named)

    def open(self, state_dir: Path) -> None:
        self._inner.open(state_dir)

    def schedule(self, curi: CrawlURI) -> bool:
        return self._inner.schedule(curi)

    def schedule_many(self, curis: Sequence[CrawlURI]) -> list[bool]:
        return self._inner.schedule_many(curis)

    def next(self, timeout_s: float) -> CrawlURI | None:
        return self._inner.next(timeout_s)

    def finished(self, curi: CrawlURI) -> bool:
        return self._inner.finished(curi)

    def is_empty(self) -> bool:
        return self._inner.is_empty()

    def snapshot(self) -> FrontierSnapshot:
        return self._inner.snapshot()

    def close(self) -> None:
        self._inner.close()


def parts() -> tuple[Any, ...]:
    """Unopened parts of a frontier kept in memory."""
    return (
        MemoryQueueStore(),
        HostnameQueueAssignmentPolicy(),
        MemoryUriUniqFilter(),
        FrontierConfig(),
    )


def controller(tmp_path: Path, *sets: str) -> CrawlController:
    order = load_order(
        EXAMPLE,
        [f"seeds.urls={json.dumps([SEED])}", "seeds.file=null", "logging.console=false", *sets],
    )
    return CrawlController(order, tmp_path / "run", install_signals=False)


def context_of(crawl: CrawlController) -> ProcessorContext:
    ctx = next(iter(crawl.chains["fetch"])).ctx
    assert ctx is not None
    return ctx


def end(crawl: CrawlController) -> str:
    """Run the prepared crawl to its end at once; the text of its frontier report."""
    crawl.request_stop("Finished - Ended by operator")
    assert crawl.run() == 0
    return (crawl.run_dir / "reports" / "frontier-summary-report.txt").read_text()


def test_the_work_queue_frontier_has_every_ability() -> None:
    frontier = WorkQueueFrontier(*parts())
    found = FrontierAbilities.of(frontier)
    assert found.claim is frontier and found.seen is frontier and found.queues is frontier
    assert found.server_cap is frontier and found.lateness is frontier
    assert found.inline_gate is frontier.inline_gate


def test_a_frontier_with_the_protocol_alone_has_none() -> None:
    found = FrontierAbilities.of(LeanFrontier(*parts()))
    assert found.frontier is not None
    assert (found.claim, found.inline_gate, found.seen) == (None, None, None)
    assert (found.queues, found.server_cap, found.lateness) == (None, None, None)


def test_a_crawl_uses_the_claim_its_frontier_has(tmp_path: Path) -> None:
    crawl = controller(tmp_path)
    crawl.prepare()
    ctx = context_of(crawl)
    assert crawl.frontier_abilities is not None and crawl.frontier_abilities.claim is not None
    assert ctx.inline_gate is not None and ctx.seen_recently is not None
    assert ctx.claim_uri is not None
    assert ctx.claim_uri(CrawlURI("http://127.0.0.1:9/claimed.js"))
    # Claimed, the URI is seen: the frontier never queues it.
    assert not crawl.schedule(CrawlURI("http://127.0.0.1:9/claimed.js"))
    report = end(crawl)
    assert "PACED SERVERS" in report and "WAITING FOR A RETRY" in report


def test_a_crawl_runs_without_the_abilities_its_frontier_lacks(tmp_path: Path) -> None:
    crawl = controller(tmp_path, "frontier.class=test_frontier_abilities.LeanFrontier")
    crawl.prepare()
    ctx = context_of(crawl)
    assert isinstance(crawl.frontier, LeanFrontier)
    assert (ctx.claim_uri, ctx.inline_gate, ctx.seen_recently) == (None, None, None)
    assert crawl.schedule(CrawlURI("http://127.0.0.1:9/page"))
    report = end(crawl)
    assert crawl.exit_status == "Finished - Ended by operator"
    # The report shows what the protocol tells (counts), none of the introspection blocks.
    (discovered,) = [line for line in report.splitlines() if line.startswith(" Discovered:")]
    assert int(discovered.split()[-1]) >= 2  # the seed and the page (and their prerequisites)
    assert "PACED SERVERS" not in report and "LONGEST QUEUES" in report
    status = json.loads((crawl.run_dir / "status.json").read_text())
    assert status["paced_servers"] == [] and status["state"] == "FINISHED"


def test_the_summary_report_leaves_out_what_a_frontier_cannot_tell(tmp_path: Path) -> None:
    for frontier, shown in ((LeanFrontier(*parts()), False), (WorkQueueFrontier(*parts()), True)):
        frontier.open(tmp_path)
        text = frontier_summary_report(FrontierAbilities.of(frontier), "job", 1_700_000_000.0)
        frontier.close()
        assert ("BUSIEST SERVERS" in text) is shown and ("ACTIVE QUEUES CAP" in text) is shown
        assert " -----===== STATS =====-----" in text.splitlines()


def test_the_builder_refuses_a_frontier_that_does_not_suit_its_store(tmp_path: Path) -> None:
    crawl = controller(tmp_path, 'frontier.store={"class": "crawler.frontier.RedisQueueStore"}')
    with pytest.raises(OrderError) as exc:
        crawl.prepare()
    (issue,) = exc.value.issues
    assert issue.path == "frontier.class" and "crawler.frontier.RedisFrontier" in str(issue)
    close_app_logging()  # prepare() had started the run's application log
