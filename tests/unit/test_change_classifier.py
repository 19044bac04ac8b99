"""The change rules and the sorted merge of several histories per crawl."""

from __future__ import annotations

import pytest

from crawler.continuity.change_classifier import Change, changes, classify
from crawler.history import FetchHistoryEntry

pytestmark = pytest.mark.timeout(10)


def entry(status: int, digest: str | None = "sha1:A", at_s: float = 0.0) -> FetchHistoryEntry:
    return FetchHistoryEntry(status, at_s, digest)


@pytest.mark.parametrize(
    ("now", "earlier", "kind"),
    [
        (entry(200), None, "new"),
        (entry(404), None, "new"),
        (entry(200, "sha1:B"), entry(200), "changed"),
        (entry(200), entry(200), "unchanged"),
        (entry(304, None), entry(200), "unchanged"),
        (entry(404), entry(200), "gone"),
        (entry(410), entry(200), "gone"),
        (None, entry(200), "gone"),
        (entry(404), entry(404, "sha1:X"), "unchanged"),
        (entry(200, "sha1:B"), entry(404), "changed"),
        (entry(500, None), entry(200), "changed"),
    ],
)
def test_classify(
    now: FetchHistoryEntry | None, earlier: FetchHistoryEntry | None, kind: str
) -> None:
    assert classify(now, earlier) == kind


def test_streams_merge_in_byte_order_and_a_uri_counts_once() -> None:
    # "é" (0xC3 0xA9) sorts after "z" in UTF-8 bytes, as LevelDB keeps the keys.
    worker1 = [("http://h/a", entry(200)), ("http://h/z", entry(200, "sha1:Z2", 5.0))]
    worker2 = [("http://h/b", entry(200)), ("http://h/z", entry(404, at_s=1.0)),
               ("http://h/\u00e9", entry(200))]  # fmt: skip
    earlier = [("http://h/a", entry(200, "sha1:A0")), ("http://h/gone", entry(200)),
               ("http://h/z", entry(200, "sha1:Z1"))]  # fmt: skip
    assert list(changes([worker1, worker2], [earlier])) == [
        Change("changed", "http://h/a", 200, 200),
        Change("new", "http://h/b", 200, None),
        Change("gone", "http://h/gone", None, 200),
        Change("changed", "http://h/z", 200, 200),  # the later of the two workers' fetches
        Change("new", "http://h/\u00e9", 200, None),
    ]
