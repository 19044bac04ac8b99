"""Helpers shared by the test suites: local test sites, servers (redis-server, a Redis Cluster),
crawl runners, log parsers, the frontier stores the contract tests run against.

Imported as ``support.<module>`` (``tests/`` is on pytest's ``pythonpath``). Nothing here is a
test; every server a helper starts listens on a free loopback port and keeps its files under the
directory it is given, so tests may run in parallel (pytest-xdist)."""
