"""BloomUriUniqFilter: sizing formulas, no false negatives, the promised false-positive rate,
persistence in its file, and the over-capacity warning."""

from __future__ import annotations

import math
from pathlib import Path

import mmh3
import pytest
from structlog.testing import capture_logs

from crawler.uniq import BloomUriUniqFilter, BloomUriUniqFilterParams, UniqStateError
from crawler.uniq.bloom_bits import (
    HEADER_SIZE,
    BloomBits,
    expected_fpr,
    optimal_bits,
    optimal_hashes,
)


def bloom(tmp_path: Path, n: int, p: float, **kw: object) -> BloomUriUniqFilter:
    params = BloomUriUniqFilterParams.model_validate(
        {"expected_items": n, "false_positive_rate": p, **kw}
    )
    f = BloomUriUniqFilter(params)
    f.open(tmp_path)
    return f


@pytest.mark.parametrize(
    ("p", "bits_per_item", "k"), [(0.01, 9.585, 7), (1e-4, 19.170, 13), (1e-6, 28.755, 20)]
)
def test_sizing_formulas(p: float, bits_per_item: float, k: int) -> None:
    m = optimal_bits(1_000_000, p)
    assert m == math.ceil(-1_000_000 * math.log(p) / math.log(2) ** 2)
    assert m / 1_000_000 == pytest.approx(bits_per_item, abs=1e-3)
    assert optimal_hashes(m, 1_000_000) == k
    assert expected_fpr(m, k, 1_000_000) == pytest.approx(p, rel=0.1)


def test_positions_follow_kirsch_mitzenmacher(tmp_path: Path) -> None:
    bits = BloomBits.create_or_open(tmp_path / "b", 1000, 0.01, "mmh3")
    h = mmh3.hash128(b"http://a.test/", signed=False)
    h1, h2 = h & (2**64 - 1), h >> 64
    expected = {((h1 + i * h2) % 2**64 & (2**63 - 1)) % bits.bits for i in range(bits.hashes)}
    assert bits.add(h) is True
    assert bits.add(h) is False
    raw = (tmp_path / "b").read_bytes()[HEADER_SIZE:]
    got = {i * 8 + b for i, byte in enumerate(raw) for b in range(8) if byte >> b & 1}
    assert got == expected
    bits.close()


def test_no_false_negatives_and_the_promised_rate(tmp_path: Path) -> None:
    n = 20_000
    f = bloom(tmp_path, n, 0.01, cache_size=0)
    assert sum(f.add_many([f"http://h{i % 50}.test/p{i}" for i in range(n)])) >= n - 2 * n // 100
    assert not any(f.add_many([f"http://h{i % 50}.test/p{i}" for i in range(n)]))
    probes = 20_000
    false_positives = sum(f.contains(f"http://other.test/q{i}") for i in range(probes))
    assert 0.005 < false_positives / probes < 0.02
    bits = f.bits
    assert bits is not None and bits.size_bytes == math.ceil(optimal_bits(n, 0.01) / 8)
    f.close()


def test_the_bits_survive_a_crash_and_a_reopen(tmp_path: Path) -> None:
    crashed = bloom(tmp_path, 1000, 1e-6)
    assert crashed.add("http://a.test/1") is True
    # No close(): the shared mapping is the file, as after kill -9.
    resumed = bloom(tmp_path, 5000, 0.01)  # other figures: the file's geometry wins
    assert resumed.count() == 1
    assert resumed.add("http://a.test/1") is False
    assert resumed.add("http://a.test/2") is True
    bits = resumed.bits
    assert bits is not None and (bits.expected_items, bits.false_positive_rate) == (1000, 1e-6)
    resumed.close()
    crashed.close()


def test_warns_when_past_capacity(tmp_path: Path) -> None:
    f = bloom(tmp_path, 100, 0.01)
    with capture_logs() as logs:
        f.add_many([f"http://a.test/{i}" for i in range(100)])
        assert not [e for e in logs if e["event"] == "bloom_filter_over_capacity"]
        for i in range(100, 300):
            f.add(f"http://a.test/{i}")
    assert f.count() > 200
    warnings = [e for e in logs if e["event"] == "bloom_filter_over_capacity"]
    assert [w["expected_items"] for w in warnings] == [100, 100]  # past n, then past 2n
    assert warnings[-1]["false_positive_rate_now"] > 0.01
    f.close()


def test_damaged_or_foreign_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "uniq-bloom").mkdir()
    (tmp_path / "uniq-bloom" / "bloom.bits").write_bytes(b"not a bloom filter" * 10)
    with pytest.raises(UniqStateError, match="not a Bloom filter"):
        bloom(tmp_path, 100, 0.01)
    md5 = bloom(tmp_path / "x", 100, 0.01, fingerprint="md5")
    md5.close()
    with pytest.raises(UniqStateError, match=r"'md5'.*'mmh3'"):
        bloom(tmp_path / "x", 100, 0.01)
