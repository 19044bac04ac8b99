"""Secrets in crawl orders: passwords that come from the environment or a file and never land in
a run's files, logs, reports or the console in clear.

- :mod:`~crawler.secrets.secret_refs` resolves ``${ENV:NAME}``, ``${FILE:path}`` and
  ``${SECRET:key}`` references (and ``password_env:`` / ``password_file:``) in an order's data
  and keeps a :class:`~crawler.secrets.secret_refs.SecretBook` of where secrets were.
- :mod:`~crawler.secrets.secret_registry` knows every secret value of this process and blanks
  them out of text (the application log, order errors, the console).
"""
