"""How a crawl order joins a distributed crawl: its shared store's Redis URL, and the ``--set``
overrides that attach one worker to the crawl.

The order names the shared store with ``frontier.store: {class:
crawler.frontier.RedisQueueStore, params: {url: ...}}``; :func:`shared_frontier_sets` gives
the order the frontier that shares it (``frontier.class``) unless the order names one that
does; each worker gets the crawl's namespace and its worker id as ``--set`` overrides, its WARC
writers a prefix ending in the worker id, and a uniq filter that is not already Redis-backed is
replaced by :class:`~crawler.uniq.redis_uniq.RedisUriUniqFilter` (per-worker sets would fetch
every URI once per worker).

Pure functions of the order (no I/O beyond importing the classes it names); thread-safe.
"""

from __future__ import annotations

import json

from crawler.frontier.store.queue_store import store_is_shared
from crawler.order import components
from crawler.order.errors import OrderError
from crawler.order.schema import SHARED_FRONTIER_CLASS, CrawlOrder

REDIS_UNIQ = "crawler.uniq.redis_uniq.RedisUriUniqFilter"


def redis_url_of(order: CrawlOrder) -> str | None:
    """The Redis URL of the order's shared frontier store, or None if its store is not shared
    (raises OrderError if the store's class cannot be resolved)."""
    spec = order.frontier.store
    store_cls = components.resolve_class(
        spec.class_, components.frontier_base("store"), "frontier.store.class"
    )
    if not store_is_shared(store_cls):
        return None
    return str(spec.params.get("url") or "redis://127.0.0.1:6379/0")


def shared_frontier_sets(order: CrawlOrder) -> list[str]:
    """The ``--set`` that gives ``order`` the frontier many processes share
    (``frontier.class``), none if the class it names already is one (raises OrderError if that
    class cannot be resolved)."""
    if components.frontier_class(order.frontier.class_).shared:
        return []
    return [f"frontier.class={SHARED_FRONTIER_CLASS}"]


def _outage_s(order: CrawlOrder) -> float:
    """The order's ``frontier.store.params.outage_timeout_s`` (600 s if it names none)."""
    return float(order.frontier.store.params.get("outage_timeout_s") or 600.0)


def worker_overrides(order: CrawlOrder, url: str, namespace: str, worker_id: str) -> list[str]:
    """``--set`` overrides that attach a worker to the crawl in ``namespace``."""
    q = json.dumps
    sets = [
        *shared_frontier_sets(order),
        f"frontier.store.params.url={q(url)}",
        f"frontier.store.params.namespace={q(namespace)}",
        f"frontier.store.params.worker_id={q(worker_id)}",
        # joined through the registry, so Redis answered a moment ago: a restart is waited out
        f"frontier.store.params.start_wait_s={q(_outage_s(order))}",
    ]
    uniq = order.frontier.uniq_filter
    uniq_cls = components.resolve_class(
        uniq.class_, components.frontier_base("uniq_filter"), "frontier.uniq_filter.class"
    )
    if getattr(uniq_cls, "shared", False):
        if not uniq.params.get("url"):
            sets.append(f"frontier.uniq_filter.params.url={q(url)}")
        sets.append(f"frontier.uniq_filter.params.namespace={q(namespace)}")
        sets.append(f"frontier.uniq_filter.params.start_wait_s={q(_outage_s(order))}")
    else:
        spec = {
            "class": REDIS_UNIQ,
            "params": {"url": url, "namespace": namespace, "start_wait_s": _outage_s(order)},
        }
        sets.append(f"frontier.uniq_filter={q(spec)}")
    for proc in order.chains.write:
        prefix = proc.params.get("prefix")
        if prefix is None:
            try:
                model = components.params_model_for(
                    components.resolve_class(proc.class_, None, "chains.write"), None
                )
            except OrderError:
                continue
            field = model.model_fields.get("prefix")
            prefix = field.default if field is not None else None
        if isinstance(prefix, str):
            sets.append(f"chains.write.{proc.name}.params.prefix={q(f'{prefix}-{worker_id}')}")
    sets.append("archive.wacz=false")  # the launcher packages every worker's WARCs at the end
    return sets
