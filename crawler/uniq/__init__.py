"""Already-seen filters for canonical URIs (see :mod:`crawler.uniq.uniq_filter`)."""

from crawler.uniq.leveldb_uniq import LevelDBUriUniqFilter, LevelDBUriUniqFilterParams
from crawler.uniq.memory_uniq import MemoryUriUniqFilter
from crawler.uniq.uniq_filter import UriUniqFilter, fingerprint

__all__ = [
    "LevelDBUriUniqFilter",
    "LevelDBUriUniqFilterParams",
    "MemoryUriUniqFilter",
    "UriUniqFilter",
    "fingerprint",
]
