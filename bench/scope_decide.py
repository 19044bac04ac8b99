"""The scope decision per outlink: ``create_child`` and the scope's rules, alone.

Builds the crawl of ``bench/web/order.yaml`` as :mod:`bench.outlinks` does (the default order's
scope over the seeds of ``--hosts`` hosts, a CrawlController without its threads) and times, on
the outlinks of its synthetic pages (normalized first, not timed):

* ``create_child``: the child CrawlURI of each outlink;
* ``decide``: ``scope.decide`` of each (fresh children each round: the trap budget's data);
* ``scoped``: the candidates processor's ``_scoped_children`` (child, directive, decision);
* ``rule N``: each rule of the scope alone, as the sequence calls it (``--rules``).

CPU-µs per outlink, the best of ``--repeat`` rounds (``time.process_time``). Under callgrind,
``--only scoped`` runs the ``scoped`` stage once, so that the difference of two ``--pages``
sizes gives instructions per outlink of the scope decision alone::

    .venv/bin/python bench/scope_decide.py [--pages 400] [--hosts 2000] [--repeat 5] [--rules]
    valgrind --tool=callgrind .venv/bin/python bench/scope_decide.py --only scoped --pages 100
    valgrind --tool=callgrind .venv/bin/python bench/scope_decide.py --only scoped --pages 400
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import outlinks  # bench/outlinks.py: this script's directory is first on sys.path

from crawler import CrawlURI, Link
from crawler.urls import normalize


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=int, default=400)
    ap.add_argument("--hosts", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rules", action="store_true", help="also time each rule alone")
    ap.add_argument("--only", choices=["scoped"], help="run one stage once (for callgrind)")
    args = ap.parse_args()
    from processors.postprocess.candidates import _Tally

    with tempfile.TemporaryDirectory(prefix="scope-decide-") as tmp:
        run_dir = Path(tmp) / "job" / "run"
        run_dir.mkdir(parents=True)
        crawl = outlinks.controller(run_dir, args.hosts)
        try:
            proc = crawl.chains.find("candidates")
            assert proc is not None, "the order has no candidates processor"
            ctx = proc.context
            scope = ctx.scope
            pages: list[tuple[CrawlURI, list[tuple[str, Link]]]] = []
            for uri, links in outlinks.pages(args.pages, args.hosts):
                parent = CrawlURI(uri, hop_path="L", via=uri.rsplit("/", 1)[0] + "/", status=200)
                pages.append((parent, [(normalize(link.uri), link) for link in links]))
            count = sum(len(links) for _, links in pages)

            def children() -> list[CrawlURI]:
                return [p.create_child(u, k.hop, k.context) for p, links in pages for u, k in links]

            def scoped() -> None:
                for parent, links in pages:
                    proc._scoped_children(ctx, parent, links, False, _Tally())

            if args.only == "scoped":
                scoped()
                print(f"pages={args.pages} outlinks={count} (one scoped pass)")
                return

            def per_link(setup: Callable[[], list[CrawlURI]], each: Callable[..., object]) -> float:
                best = float("inf")
                for _ in range(args.repeat):
                    batch = setup()
                    start = time.process_time()
                    for child in batch:
                        each(child)
                    best = min(best, time.process_time() - start)
                return best * 1e6 / count

            def timed(stage: Callable[[], object]) -> float:
                best = float("inf")
                for _ in range(args.repeat):
                    start = time.process_time()
                    stage()
                    best = min(best, time.process_time() - start)
                return best * 1e6 / count

            figures = {
                "create_child": timed(children),
                "decide": per_link(children, scope.decide),
                "scoped": timed(scoped),
            }
            if args.rules:
                for i, rule in enumerate(scope.rules):
                    figures[f"rule {i} {type(rule).__name__}"] = per_link(children, rule.decide)
        finally:
            crawl.request_stop("bench done")
            crawl._finish()
    print(f"pages={args.pages} hosts={args.hosts} outlinks={count} CPU-us per outlink:")
    for name, value in figures.items():
        print(f"  {name:<44} {value:7.3f}")


if __name__ == "__main__":
    main()
