"""The adaptive pace per server: AIMD arithmetic on a fake clock, and the gate enforcing it."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawler.clock import ManualClock
from crawler.curi import CrawlURI
from crawler.frontier import (
    MemoryQueueStore,
    PaceState,
    QueueAssignmentPolicy,
    ServerGate,
    ServerPace,
    WorkQueueFrontier,
    frontier_summary_report,
)
from crawler.frontier.frontier_abilities import FrontierAbilities
from crawler.frontier.politeness.server_pace import (
    FAST_DESCENT,
    FAST_RAMP_ANSWERS,
    MIN_FIRST_GAP_S,
    SETTLE_S,
    TIMED_MAX_BYTES,
    timing_counts,
)
from crawler.order.schema import FrontierConfig, PaceConfig, PolitenessConfig
from crawler.params import NoParams
from crawler.uniq import MemoryUriUniqFilter

pytestmark = pytest.mark.timeout(30)

CONFIG = PaceConfig()


class Answers:
    """Feeds one server's answers to a ServerPace on a fake clock (seconds)."""

    def __init__(self, config: PaceConfig = CONFIG) -> None:
        self.pace = ServerPace(config)
        self.st = PaceState()
        self.now = 100.0

    def answer(self, status: int = 200, *, after_s: float = 0.01, took_s: float = 0.002) -> bool:
        self.now += after_s
        return self.pace.observe(self.st, self.now, self.now - took_s, status, took_s)


def test_a_healthy_server_gets_no_gap() -> None:
    a = Answers()
    for _ in range(500):
        assert not a.answer(200)
    assert a.st.gap == 0.0


def test_first_signal_sets_a_gap_from_how_fast_we_went() -> None:
    slow = Answers()
    for _ in range(50):
        slow.answer(200, after_s=0.2)  # one answer every 200 ms
    assert slow.answer(429, after_s=0.2)
    assert slow.st.gap == pytest.approx(0.2 * CONFIG.fast_increase_factor, rel=0.05)
    fast = Answers()
    for _ in range(50):
        fast.answer(200, after_s=0.0001)
    assert fast.answer(429, after_s=0.0001)
    assert fast.st.gap == pytest.approx(MIN_FIRST_GAP_S)


def test_signals_before_the_server_answers_well_raise_fast_then_slowly() -> None:
    a = Answers()
    a.answer(200)
    a.answer(503)
    first = a.st.gap
    a.answer(429)  # no healthy answer since: the last increase was not enough
    assert a.st.gap == pytest.approx(first * CONFIG.fast_increase_factor)
    for _ in range(FAST_RAMP_ANSWERS):
        a.answer(200)
    before = a.st.gap
    a.answer(429)
    assert a.st.gap == pytest.approx(before * CONFIG.increase_factor)
    assert a.st.limit_gap == pytest.approx(before)  # the server's limit is known now
    again = a.st.gap
    # At once again, at 1.15 x the limit: no ramp once a limit is known, but that limit was
    # too low (refused above it), so the gap grows by the factor squared.
    a.answer(429, after_s=again)
    assert a.st.gap == pytest.approx(again * CONFIG.increase_factor**2)
    assert a.st.limit_gap == pytest.approx(again)
    for _ in range(3000):  # back down to the limit, then refused there: the usual factor
        a.answer(200)
        if a.st.gap <= again:
            break
    at_limit = a.st.gap
    a.answer(429)
    assert a.st.gap == pytest.approx(at_limit * CONFIG.increase_factor)


def test_a_signal_sent_at_the_old_pace_is_ignored() -> None:
    a = Answers()
    a.answer(200)
    a.answer(429)
    gap = a.st.gap
    # Its fetch began 50 ms ago, before the increase 10 ms ago: it says nothing new.
    assert not a.answer(429, took_s=0.05)
    assert a.st.gap == gap


def test_healthy_answers_take_off_equal_steps_until_no_gap() -> None:
    config = PaceConfig(increase_factor=2.0, fast_increase_factor=2.0, decrease_fraction=0.01)
    a = Answers(config)
    for _ in range(50):
        a.answer(200, after_s=0.1)
    a.answer(429, after_s=0.1)
    for _ in range(FAST_RAMP_ANSWERS):
        a.answer(200, after_s=0.1)
    a.answer(429, after_s=0.1)  # a limit is known now: the slow descent region
    peak = a.st.gap
    gaps = []
    for _ in range(20):
        a.answer(200, after_s=0.1)
        gaps.append(a.st.gap)
    steps = [before - after for before, after in zip([peak, *gaps], gaps, strict=False)]
    assert steps == pytest.approx([peak * config.decrease_fraction] * 20)  # additive decrease
    for _ in range(2000):
        a.answer(200, after_s=0.1)
    assert a.st.gap == 0.0


def test_the_gap_shrinks_faster_far_above_the_last_signal() -> None:
    a = Answers()
    a.answer(200)
    a.answer(429)  # from no gap: the signal's gap is 0, every gap is "far above" it
    peak = a.st.gap
    a.answer(200)
    assert peak - a.st.gap == pytest.approx(peak * CONFIG.decrease_fraction * FAST_DESCENT)


def test_the_gap_never_passes_its_cap() -> None:
    a = Answers(PaceConfig(max_gap_ms=500))
    for _ in range(40):
        a.answer(503, after_s=1.0)
    assert a.st.gap == pytest.approx(0.5)


def test_a_response_far_slower_than_usual_is_a_signal() -> None:
    a = Answers()
    for _ in range(100):
        assert not a.answer(200, took_s=0.1)
    assert not a.answer(200, took_s=0.35)  # slower, but under slow_response_factor x usual
    assert not a.answer(200, after_s=3.0, took_s=2.5)  # 25x usual and >1 s more: once is the page
    assert not a.answer(200, took_s=0.1)
    assert not a.answer(200, after_s=3.0, took_s=2.5)
    assert not a.answer(200, after_s=3.0, took_s=2.5)
    assert a.answer(200, after_s=3.0, took_s=2.5)  # SLOW_STREAK in a row: the server is slow
    assert a.st.gap > 0


def test_large_or_truncated_bodies_are_not_timed() -> None:
    assert timing_counts(CrawlURI("http://h/", content_size=1000))
    assert not timing_counts(CrawlURI("http://h/", content_size=TIMED_MAX_BYTES + 1))
    cut = CrawlURI("http://h/", content_size=10)
    cut.annotate("timeTrunc")
    assert not timing_counts(cut)


def test_disabled_pace_leaves_the_gate_alone() -> None:
    gate: ServerGate[str] = ServerGate(0, 0.0, ServerPace(PaceConfig(enabled=False)))
    assert not gate.observe("h:80", 1.0, 0.9, 429, 0.1)
    assert gate.gap_s("h:80") == 0.0


def test_the_gate_spaces_starts_to_a_paced_server() -> None:
    gate: ServerGate[str] = ServerGate(0, 0.0, ServerPace(CONFIG))
    assert gate.try_start("h:80", 10.0) is None
    gate.finish("h:80", 10.1)
    assert gate.observe("h:80", 10.1, 10.0, 429, 0.1)
    gap = gate.gap_s("h:80")
    assert gap >= MIN_FIRST_GAP_S
    # A refusal holds the server a while (a window limiter refuses until its window is over)
    assert gate.try_start("h:80", 10.2) == pytest.approx(10.1 + SETTLE_S)
    after = 10.1 + SETTLE_S
    assert gate.try_start("h:80", after) is None
    assert gate.try_start("h:80", after) == pytest.approx(after + gap)  # any queue waits
    assert gate.try_start("other:80", 10.2) is None  # another server is not held back
    assert gate.paced(5) == [("h:80", gap)]


class OneQueuePerUri(QueueAssignmentPolicy[NoParams]):
    def key(self, curi: CrawlURI) -> str:
        return curi.uri


def test_429s_space_fetch_starts_across_queues_despite_zero_politeness(tmp_path: Path) -> None:
    clock = ManualClock()
    zero = PolitenessConfig(delay_factor=0, min_delay_ms=0, max_delay_ms=0, host_max_connections=0)
    f = WorkQueueFrontier(
        MemoryQueueStore(),
        OneQueuePerUri(),
        MemoryUriUniqFilter(),
        FrontierConfig(politeness=zero),
        clock=clock,
    )
    f.open(tmp_path)
    for i in range(6):
        f.schedule(CrawlURI(f"http://site.test/{i}"))
    first = f.next(0)
    second = f.next(0)
    assert first is not None and second is not None  # no gap yet: every queue may start
    for curi in (first, second):
        curi.status = 429
        curi.fetch_start_ms = int(clock.time() * 1000)
        curi.fetch_duration_ms = 1
    clock.advance(0.002)
    assert f.finished(first) is False  # retried
    gap = f.paced_servers()[0][1]
    assert gap >= MIN_FIRST_GAP_S
    assert f.next(0) is None  # the next start waits the refusal's hold, whatever the queue
    clock.advance(SETTLE_S + 0.001)
    assert f.next(0) is not None
    assert f.next(0) is None  # and the other queues wait for the server's gap
    clock.advance(gap + 0.001)
    assert f.next(0) is not None
    report = frontier_summary_report(FrontierAbilities.of(f), "job", clock.time())
    assert f"site.test:80 {gap * 1000:.0f}ms" in report.split("PACED SERVERS")[1]


def test_the_first_gap_floor_does_not_apply_to_later_increases() -> None:
    a = Answers()
    a.answer(200)
    a.answer(429)
    for _ in range(2000):  # healthy long enough to shrink well under the first gap
        a.answer(200)
    for _ in range(FAST_RAMP_ANSWERS):
        a.answer(200)
    a.st.gap = small = MIN_FIRST_GAP_S / 4
    a.st.limit_gap = small
    a.answer(429)
    assert a.st.gap == pytest.approx(small * CONFIG.increase_factor)
