"""Politeness: how long a queue waits after a fetch, and what one server sees across queues.

* :mod:`~crawler.frontier.politeness.politeness`: the politeness delay, Retry-After back-off and
  bandwidth hold (pure functions the DispositionProcessor calls);
* :mod:`~crawler.frontier.politeness.server_gate`: ServerGate, the server cap (connections,
  interval, holds, pace) across every queue of a server;
* :mod:`~crawler.frontier.politeness.server_pace`: ServerPace, the adaptive pace of one server;
* :mod:`~crawler.frontier.politeness.inline_gate`: InlineGate, the same gate for fetches made
  outside the frontier (a browser page's requests).

Nothing is imported here: the public names are exported by :mod:`crawler.frontier`.
"""
