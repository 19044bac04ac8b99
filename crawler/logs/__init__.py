"""What a crawl writes line by line, and how it is read back.

:mod:`crawler.logs.crawl_logs` writes crawl.log and the other Heritrix-format logs of a run;
:mod:`crawler.logs.applog` configures the structured application log (crawler.jsonl,
alerts.log, the console); :mod:`crawler.logs.progress` computes progress-statistics.log rows.
Beneath them, :mod:`crawler.logs.line_file` is an append-only file written a whole line at a
time that a full disk never makes lose a line, and :mod:`crawler.logs.growing_file` reads files
that another process may still be appending to. This package imports nothing itself.
"""
