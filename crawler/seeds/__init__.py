"""A crawl's seeds.

:mod:`crawler.seeds.seed_list` reads seed lists in Heritrix's syntax (with per-seed options and
``+``/``-`` SURT-prefix directives) from the order's ``seeds.file`` and ``seeds.urls``;
:mod:`crawler.seeds.seed_module` (SeedModule) holds a crawl's seeds, offers them to the frontier
and feeds them to the scope, including seeds added while the crawl runs. This package imports
nothing itself.
"""
