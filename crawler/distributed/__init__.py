"""Many worker processes, on one machine or many, running one crawl over a frontier in Redis.

* :mod:`~crawler.distributed.launcher`: :func:`run_workers` (``crawler run ORDER --workers N``)
  registers the crawl in Redis, creates the run directory, starts N worker processes here,
  supervises them and writes the crawl-wide reports.
* :mod:`~crawler.distributed.worker`: :func:`worker_main` (``crawler worker ORDER --redis
  URL``) joins the running crawl of the order's name, from this or another machine, and crawls
  until the shared frontier is empty, following the crawl-wide control state (pause, unpause,
  terminate) and publishing a heartbeat.
* :mod:`~crawler.distributed.commands`: :func:`cmd_status` / :func:`cmd_control` /
  :func:`cmd_report`: ``crawler status|pause|unpause|terminate|report RUN_DIR`` for a
  distributed run directory (:mod:`~crawler.distributed.run_info`: one with
  ``distributed.json``), acting through Redis.
* :mod:`~crawler.distributed.overrides`: the order's Redis URL and the ``--set`` overrides that
  attach a worker to the crawl (the shared frontier, its namespace, worker id, a Redis uniq
  filter, WARC prefixes).

There is one command line parser, the ``crawler`` CLI's: the launcher starts each worker as
``python -m crawler worker ...``. The commands' entry points are importable from this package;
each module's docstring states its contract and thread-safety.
"""

from crawler.distributed.commands import cmd_control, cmd_report, cmd_status
from crawler.distributed.launcher import run_workers
from crawler.distributed.worker import worker_main

__all__ = ["cmd_control", "cmd_report", "cmd_status", "run_workers", "worker_main"]
