"""FrontierPreparer.canonical: the uniq key of a URI, remembered for the next ask."""

from __future__ import annotations

import pytest

from crawler.frontier import HostnameQueueAssignmentPolicy
from crawler.frontier.intake.preparer import CANONICAL_MEMO, FrontierPreparer
from crawler.order.schema import FrontierConfig


@pytest.mark.timeout(10)
def test_canonical_keys_stay_right_past_the_memo_and_bad_uris_keep_failing() -> None:
    prep = FrontierPreparer(FrontierConfig(), HostnameQueueAssignmentPolicy())
    uris = [f"http://WWW.Example.com/P{i}?b=1&" for i in range(CANONICAL_MEMO + 10)]
    first = [prep.canonical(u) for u in uris]
    assert first[3] == "http://example.com/p3?b=1"
    # asked again (the first ones were forgotten, the last ones remembered): the same keys
    assert [prep.canonical(u) for u in reversed(uris)] == first[::-1]
    for _ in range(2):  # a URI without a host is refused every time it is asked
        with pytest.raises(ValueError, match="no host"):
            prep.canonical("http:///x")
