"""LevelDBUriUniqFilter under many threads: put-if-absent exact, announcements exact.

Sixteen threads add overlapping batches of the same new URIs at once, round after round; with a
RecentKeys cache of 0, 1 and 3 keys (turned over constantly, so what one thread recorded falls
out of it while others still look the same URIs up: any shortcut that trusts the cache alone
reports a URI new twice) and one that holds all. Every URI must be reported new exactly once,
announced exactly once (in the very call that reports it new), counted once, and the count and
keys must survive a reopen. Closing under running threads (adds, and look-ups made outside the
lock) fails their later calls cleanly.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from crawler.uniq import LevelDBUriUniqFilter, LevelDBUriUniqFilterParams

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

THREADS = 16
ROUNDS = 12
PER_ROUND = 120


def uri(round_no: int, i: int) -> str:
    return f"http://h{i % 7}.test/r{round_no}/{i}"


@pytest.mark.parametrize("cache_size", [0, 1, 3, 100_000])
def test_overlapping_batches_report_announce_and_count_each_uri_once(
    tmp_path: Path, cache_size: int
) -> None:
    uniq = LevelDBUriUniqFilter(LevelDBUriUniqFilterParams(cache_size=cache_size))
    uniq.open(tmp_path)
    old = [f"http://old.test/{i}" for i in range(300)]
    assert uniq.add_many(old) == [True] * 300
    reported: Counter[str] = Counter()
    announced: Counter[str] = Counter()
    mismatches: list[tuple[list[str], list[str]]] = []
    tally = threading.Lock()
    gate = threading.Barrier(THREADS)

    def worker(n: int) -> None:
        rnd = random.Random(n)
        for r in range(ROUNDS):
            gate.wait(30)  # every thread starts the round's URIs together
            mine = [uri(r, i) for i in range(PER_ROUND)]
            rnd.shuffle(mine)
            for start in range(0, PER_ROUND, 30):
                batch = mine[start : start + 45] + rnd.sample(old, 5)
                batch.append(batch[0])  # a URI twice in one batch
                said: list[str] = []
                added = uniq.add_many_announced(batch, said.extend)
                new = [c for c, a in zip(batch, added, strict=True) if a]
                with tally:
                    reported.update(new)
                    announced.update(said)
                    if sorted(new) != sorted(said):
                        mismatches.append((new, said))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(50)
    assert not any(t.is_alive() for t in threads)
    everything = {uri(r, i) for r in range(ROUNDS) for i in range(PER_ROUND)}
    assert mismatches == []
    assert reported == Counter(everything)  # each new exactly once, none of the old ones
    assert announced == Counter(everything)
    assert uniq.count() == 300 + len(everything)
    uniq.close()

    again = LevelDBUriUniqFilter(LevelDBUriUniqFilterParams(cache_size=cache_size))
    again.open(tmp_path)
    assert again.count() == 300 + len(everything)
    assert again.add_many(sorted(everything) + old) == [False] * (len(everything) + 300)
    assert again.add_many(["http://h0.test/after", "http://h0.test/after"]) == [True, False]
    again.close()
    third = LevelDBUriUniqFilter(LevelDBUriUniqFilterParams(cache_size=cache_size))
    third.open(tmp_path)
    assert third.count() == 301 + len(everything)
    third.close()


def close_under_threads(
    uniq: LevelDBUriUniqFilter, call: Callable[[int, int], None], busy: Callable[[], bool]
) -> list[str]:
    """Eight threads make ``call(thread, turn)`` over and over until it raises RuntimeError;
    once ``busy()`` holds, ``uniq`` is closed under them. The errors they ended with."""
    errors: list[str] = []

    def worker(n: int) -> None:
        turn = 0
        while True:  # until the filter is closed under it
            turn += 1
            try:
                call(n, turn)
            except RuntimeError as exc:
                errors.append(str(exc))
                return

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    while not busy():
        threading.Event().wait(0.005)
    uniq.close()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)
    return errors


def test_closing_waits_for_batches_in_flight_and_then_refuses_them(tmp_path: Path) -> None:
    uniq = LevelDBUriUniqFilter(LevelDBUriUniqFilterParams(cache_size=10))
    uniq.open(tmp_path)

    def add(n: int, turn: int) -> None:
        uniq.add_many([f"http://t{n}.test/{turn}/{j}" for j in range(20)])

    errors = close_under_threads(uniq, add, lambda: uniq.count() >= 2000)
    assert errors == ["LevelDBUriUniqFilter is not open"] * 8
    again = LevelDBUriUniqFilter()
    again.open(tmp_path)
    assert again.count() >= 2000
    again.close()


def test_closing_waits_for_look_ups_outside_the_lock_and_then_refuses_them(
    tmp_path: Path,
) -> None:
    uniq = LevelDBUriUniqFilter(LevelDBUriUniqFilterParams(cache_size=0))
    uniq.open(tmp_path)
    old = [f"http://old.test/{i}" for i in range(100)]
    uniq.add_many(old)
    answers: list[bool] = []

    def look_up(n: int, turn: int) -> None:
        # every look-up goes to LevelDB (no cache), outside the filter's lock
        answers.append(uniq.recorded([*old, f"http://new{n}.test/"]) == [True] * 100 + [False])

    errors = close_under_threads(uniq, look_up, lambda: len(answers) >= 50)
    assert all(answers)
    assert errors == ["LevelDBUriUniqFilter is not open"] * 8
