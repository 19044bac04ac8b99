"""The PDF worker pool: links come back from a real worker process; a parser that never returns
is killed at the deadline and one that allocates without end dies at its memory cap, each an
error string for the caller, after which the pool still parses; hostile PDFs end as errors."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.pdf_samples import (
    broken_pdf,
    deeply_nested_pdf,
    encrypted_pdf,
    link_pdf,
    xref_stream_bomb,
)

from processors.extract.pdf_worker import PdfWorkerPool

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]


@pytest.fixture
def pool() -> Iterator[PdfWorkerPool]:
    p = PdfWorkerPool(max_workers=1, max_memory_mb=1024)
    yield p
    p.close()


def test_links_come_back_from_the_worker(pool: PdfWorkerPool) -> None:
    found = pool.parse(link_pdf("/a.html", "http://other.example/b"), 10, 30)
    assert (found.uris, found.error) == (["/a.html", "http://other.example/b"], None)
    capped = pool.parse(link_pdf("/1", "/2", "/3"), 2, 30)
    assert (capped.uris, capped.dropped) == (["/1", "/2"], 1)
    assert pool.started == 1


@pytest.mark.parametrize(
    ("sample", "error"),
    [
        (encrypted_pdf, "encrypted"),
        (broken_pdf, None),
        (deeply_nested_pdf, "nesting too deep"),
        (xref_stream_bomb, None),
    ],
)
def test_hostile_pdfs_are_errors(pool: PdfWorkerPool, sample: object, error: str | None) -> None:
    found = pool.parse(sample(), 10, 60)  # type: ignore[operator]
    assert found.uris == [] and found.error is not None
    if error is not None:
        assert found.error == error
    assert pool.parse(link_pdf("/after"), 10, 30).uris == ["/after"]


def test_a_parser_that_never_returns_is_killed_and_replaced() -> None:
    stuck = PdfWorkerPool(max_workers=1, max_memory_mb=0, parser="support.hostile_parsers:spin")
    try:
        assert stuck.parse(link_pdf("/x"), 10, 0.5).error == "timeout"
        assert stuck.parse(link_pdf("/x"), 10, 0.5).error == "timeout"
        assert (stuck.started, stuck.killed) == (2, 2)
    finally:
        stuck.close()


def test_a_parser_that_allocates_without_end_dies_at_its_cap() -> None:
    greedy = PdfWorkerPool(max_workers=1, max_memory_mb=512, parser="support.hostile_parsers:hog")
    try:
        assert greedy.parse(link_pdf("/x"), 10, 60).error == "worker died"
        assert greedy.killed == 1
    finally:
        greedy.close()
