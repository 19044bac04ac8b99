"""The job's digest index with runs that overlap or die: a run that cannot have the job's index
keeps its own and hands it over at its end, or, if it cannot then either (or was killed), the next
run of the job that opens the index copies it in first."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest
import structlog
from structlog.testing import capture_logs

from crawler.continuity import DigestEntry, LevelDBDigestIndex
from crawler.continuity.digest_index import add_later
from crawler.continuity.job_digest_index import PENDING_FILE, job_index_location
from crawler.continuity.run_digest_index import RunDigestIndex, open_run_digest_index

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


def sha1(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def capture(run: str, n: int) -> DigestEntry:
    return DigestEntry(f"http://{run}.test/{n}", "2026-11-27T10:00:00Z", f"urn:uuid:{run}-{n}")


def open_run(job: Path, name: str) -> tuple[RunDigestIndex, Path]:
    state = job / "runs" / name / "state"
    located = job_index_location("digest-index", state.parent)
    assert located == (job / "digest-index", job / "runs")
    index = open_run_digest_index(
        state, job_index=located[0], runs_dir=located[1], logger=structlog.get_logger()
    )
    return index, state


def test_overlapping_and_killed_runs_reach_the_job_index(tmp_path: Path) -> None:
    job = tmp_path / "job"
    first, first_state = open_run(job, "20261127T100000Z")
    first.add(sha1(b"p1"), capture("first", 1))
    with capture_logs() as logs:
        second, second_state = open_run(job, "20261127T100500Z")  # the job's index is busy
    assert any(e["event"] == "digest_index_busy" for e in logs)
    assert second.lookup(sha1(b"p1")) is None  # the first run's payloads are out of reach
    second.add(sha1(b"p2"), capture("second", 2))
    assert second.finish() == 0  # still busy: the second run stays pending
    second.close()
    assert (second_state / PENDING_FILE).exists()
    assert first.finish() == 1
    first.close()
    assert not (first_state / PENDING_FILE).exists()

    # A third run is killed before its end: it never hands its payloads over.
    third, third_state = open_run(job, "20261127T101000Z")
    third.add(sha1(b"p3"), capture("third", 3))
    third.close()

    fourth, _ = open_run(job, "20261127T110000Z")  # copies in what the others owe
    for payload, run in ((b"p1", "first"), (b"p2", "second"), (b"p3", "third")):
        found = fourth.lookup(sha1(payload))
        assert found is not None and found.uri.startswith(f"http://{run}."), payload
    assert fourth.add(sha1(b"p2"), capture("fourth", 2)) == capture("second", 2)
    assert not (second_state / PENDING_FILE).exists()
    assert not (third_state / PENDING_FILE).exists()
    fourth.finish()
    fourth.close()
    with LevelDBDigestIndex(job / "digest-index") as index:
        assert len(index) == 3


def test_a_run_outside_a_job_keeps_its_own_index_only(tmp_path: Path) -> None:
    assert job_index_location("digest-index", tmp_path / "somewhere") is None
    assert job_index_location(None, tmp_path / "job" / "runs" / "r1") is None
    shared = tmp_path / "shared-index"
    assert job_index_location(str(shared), tmp_path / "elsewhere") == (shared, None)


def test_a_payload_a_lookup_missed_is_added_to_the_run_s_own_index_first_writer_kept(
    tmp_path: Path,
) -> None:
    job = tmp_path / "job"
    first, _ = open_run(job, "20261127T100000Z")
    first.add(sha1(b"old"), capture("first", 1))
    first.finish()
    first.close()
    run, _ = open_run(job, "20261127T110000Z")
    assert run.lookup(sha1(b"new")) is None
    # The writer adds what its lookup missed, without asking the job's index again; a second
    # thread that missed the same payload meanwhile does not replace the first original.
    add_later(run, sha1(b"new"), capture("run", 1), missed=True)
    add_later(run, sha1(b"new"), capture("run", 2), missed=True)
    assert run.lookup(sha1(b"new")) == capture("run", 1)
    assert run.layers.primary.lookup(sha1(b"new")) == capture("run", 1)
    assert run.lookup(sha1(b"old")) == capture("first", 1)  # still the earlier crawl's
    assert run.finish() == 1
    run.close()
    with LevelDBDigestIndex(job / "digest-index") as index:
        assert len(index) == 2
