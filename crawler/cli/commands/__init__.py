"""One module per ``crawler`` verb (:data:`crawler.cli.verb_table.VERBS` names them all).

Each module holds its verb's ``add_arguments(parser)`` and ``run(args, out, err)``, and imports
what the verb needs when it runs, so that the parser stays cheap. A verb module never imports
:mod:`crawler.cli.cli` (the parser and dispatcher), nor the other way round: the dispatcher
reaches a verb through the table only. Code two verbs share lives beside them in
:mod:`crawler.cli` (:mod:`~crawler.cli.crawl_runner`, :mod:`~crawler.cli.operations`,
:mod:`~crawler.cli.arguments`, :mod:`~crawler.cli.run_dirs`), not in another verb's module.
"""
