"""Already-seen filters for canonical URIs (see :mod:`crawler.uniq.uniq_filter`)."""

from crawler.uniq.bloom_uniq import BloomUriUniqFilter, BloomUriUniqFilterParams
from crawler.uniq.leveldb_uniq import LevelDBUriUniqFilter, LevelDBUriUniqFilterParams
from crawler.uniq.memory_uniq import MemoryUriUniqFilter
from crawler.uniq.uniq_filter import (
    FingerprintFunction,
    UniqStateError,
    UriUniqFilter,
    digest128,
    fingerprint,
)

__all__ = [
    "BloomUriUniqFilter",
    "BloomUriUniqFilterParams",
    "FingerprintFunction",
    "LevelDBUriUniqFilter",
    "LevelDBUriUniqFilterParams",
    "MemoryUriUniqFilter",
    "UniqStateError",
    "UriUniqFilter",
    "digest128",
    "fingerprint",
]
