"""Where the work-queue frontier keeps its state: queue stores and the structures over them.

* :mod:`~crawler.frontier.store.queue_store`: the QueueStore protocol (pending records, metadata,
  atomic batches), its base class and the sort-key layout;
* :mod:`~crawler.frontier.store.leveldb_store` (LevelDBQueueStore, the default) and
  :mod:`~crawler.frontier.store.memory_store` (MemoryQueueStore, for tests and throwaway crawls);
* :mod:`~crawler.frontier.store.write_behind_store`: the frontier's batches written outside its
  lock;
* :mod:`~crawler.frontier.store.queue_cache` and :mod:`~crawler.frontier.store.inactive_index`:
  the queues held in RAM and the inactive queues' FIFOs as rows of the store;
* :mod:`~crawler.frontier.store.queue_uris`: the last URIs of recently touched queues, for the
  report;
* :mod:`~crawler.frontier.store.recovery`: the state version, write-ahead of new links and final
  journal that make a ``kill -9`` recoverable.

A store keeps state and takes no decision (those are :mod:`crawler.frontier.policy`'s). Nothing
is imported here: the public names are exported by :mod:`crawler.frontier`.
"""
