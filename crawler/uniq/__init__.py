"""Already-seen filters for canonical URIs (see :mod:`crawler.uniq.uniq_filter`)."""

from typing import Any

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
    "RedisUriUniqFilter",
    "RedisUriUniqFilterParams",
    "UniqStateError",
    "UriUniqFilter",
    "digest128",
    "fingerprint",
]


def __getattr__(name: str) -> Any:
    """The Redis filter loads on first use: it imports the redis client (most crawls never do)."""
    if name in ("RedisUriUniqFilter", "RedisUriUniqFilterParams"):
        import importlib

        return getattr(importlib.import_module("crawler.uniq.redis_uniq"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
