"""The frontier shared through Redis by the workers of a distributed crawl.

:mod:`~crawler.frontier.redis.redis_store` (RedisQueueStore, named in the order: connection,
keys, scripts, scheduling) and :mod:`~crawler.frontier.redis.redis_leases` (a worker's lease
traffic) keep the queues, leases and per-server politeness in Redis, changed only by the Lua
scripts of :mod:`~crawler.frontier.redis.redis_scripts`, which apply the decisions of
:mod:`crawler.frontier.policy`; :mod:`~crawler.frontier.redis.redis_frontier`
(RedisFrontier) is the Frontier a worker runs over it, with its scheduler, exchange (claims and
finishes batched per process), lease keeper, local prerequisites and snapshot beside it;
:mod:`~crawler.frontier.redis.redis_registry` registers crawls and carries crawl-wide control.
The store does not build its frontier (the crawl builder does), so the store never imports the
frontier that imports it. Nothing is imported here: the redis client loads on first use.
"""
