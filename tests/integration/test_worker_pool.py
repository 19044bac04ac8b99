"""The worker pool under yt-dlp and pypdf: a worker's calls are answered by the caller within
the request, and a worker that hangs or breaks the protocol is killed and replaced, each an
error string for the caller, never a stuck thread."""

from __future__ import annotations

from typing import Any

import pytest

from processors.workers import WorkerPool

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


def test_a_worker_asks_its_caller_and_answers() -> None:
    pool = WorkerPool("support.hostile_workers:ask_twice", max_workers=1, max_memory_mb=0)
    asked: list[Any] = []

    def on_call(header: dict[str, Any], body: bytes) -> tuple[dict[str, Any], bytes]:
        asked.append((header, body))
        return {"n": header["n"] * 10}, b"<%d>" % header["n"]

    try:
        answer = pool.call({}, b"page", 20, on_call)
        assert (answer.error, answer.header["got"], answer.body) == (None, [10, 20], b"<1><2>")
        assert asked == [({"n": 1}, b"page"), ({"n": 2}, b"")]
        refused = pool.call({}, b"page", 20)  # no on_call: the worker is told so, and goes on
        assert refused.error is None and refused.header["got"] == [None, None]
        assert (pool.started, pool.killed) == (1, 0)
    finally:
        pool.close()


@pytest.mark.parametrize(("handler", "error"), [("spin", "timeout"), ("junk", None)])
def test_a_hung_or_babbling_worker_is_killed(handler: str, error: str | None) -> None:
    pool = WorkerPool(f"support.hostile_workers:{handler}", max_workers=1, max_memory_mb=0,
                      max_answer_bytes=1 << 20)  # fmt: skip
    try:
        first = pool.call({}, b"", 1.0)
        assert first.error in ((error,) if error else ("answer too large", "worker died"))
        assert pool.call({}, b"", 1.0).error is not None
        assert (pool.started, pool.killed) == (2, 2)
    finally:
        pool.close()
    assert pool.call({}, b"", 1.0).error == "stopped"
