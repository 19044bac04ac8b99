"""kill -9 a real crawl process at several points, ``crawler resume`` it, and prove from the
sample site's request log that nothing was lost and only URIs in flight at a kill were fetched
twice, and from crawl.log that every URI has exactly one line across all processes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from support.crawl_process import kill_after, logged, start_crawler

from crawler.demo import SampleSite

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "jobs" / "example" / "order.yaml"
LATENCY_S = 0.05  # slow enough that the test polls between kill points on a loaded machine

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(120)]


def settled_counts(site: SampleSite) -> Counter[str]:
    """The request counts once the requests the dead process had sent were all answered (and
    logged) and its connections closed."""
    site.settle(timeout_s=60)
    return site.counts()


@pytest.mark.parametrize("kill_fractions", [(0.05, 0.5, 0.9), (0.02, 0.25, 0.45, 0.7)])
def test_kill_9_and_resume_loses_nothing(tmp_path: Path, kill_fractions: tuple[float, ...]) -> None:
    run_dir = tmp_path / "run"
    with SampleSite(pages_per_host=60, latency_s=LATENCY_S) as site:
        expected = site.expected_urls(obey_robots=True)
        total = len(expected)
        run = [
            "run",
            str(EXAMPLE),
            "--run-dir",
            str(run_dir),
            "--set",
            f"seeds.urls={site.base_urls!r}",
            "--set",
            "seeds.file=null",
            "--set",
            "toe_threads=8",
            "--set",
            "frontier.queue_assignment.params.parallel_queues=4",
            "--set",
            "logging.console=false",
        ]
        phases: list[tuple[set[str], Counter[str]]] = []  # (logged URIs, fetches) at each kill
        proc = start_crawler(run)
        for fraction in kill_fractions:
            if not kill_after(proc, run_dir, int(total * fraction)):
                break
            phases.append((set(logged(run_dir)), settled_counts(site)))
            proc = start_crawler(["resume", str(run_dir)])
        _, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, err
        final = site.counts()

    assert len(phases) >= 2, "the crawl ended before most kills: make it slower"
    assert set(final) == expected  # nothing queued or in flight was lost
    before: Counter[str] = Counter()
    for number, (_, counts) in enumerate([*phases, (set(), final)]):
        in_phase = counts - before
        twice = [u for u, n in in_phase.items() if n > 1]
        assert twice == [], f"fetched twice in run {number}"
        if number > 0:
            refetched = {u for u in in_phase if before[u]}
            previous_logged = phases[number - 1][0]
            # a URI fetched again was in flight at the kill: it had no crawl.log line yet
            assert refetched.isdisjoint(previous_logged), refetched & previous_logged
        before = counts

    # robots.txt too: the robots outcome is journaled (no second fetch after a resume) and the
    # queues of one host share one robots fetch (parallel_queues=4)
    lines = Counter(logged(run_dir))
    assert set(lines) >= expected
    assert [u for u, n in lines.items() if n > 1] == []
