"""Crawl-wide tallies: counters, capped member sets and short texts that the rules of a crawl
(quotas, trap budgets, form logins) keep in one store, in this process or shared by every
worker of a ``--workers`` crawl through Redis.

:class:`~crawler.tally.tally_store.TallyStore` is the protocol the rules call;
:class:`~crawler.tally.local_tally_store.LocalTallyStore` keeps the tallies in this process
(saved and restored as JSON); :class:`~crawler.tally.redis_tally_store.RedisTallyStore` keeps
them in the crawl's Redis, under the crawl's key prefix (imported only by who needs it).
"""

from crawler.tally.local_tally_store import LocalTallyStore
from crawler.tally.tally_store import Tally, TallyStore

__all__ = ["LocalTallyStore", "Tally", "TallyStore"]
