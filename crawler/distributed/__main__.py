"""``python -m crawler.distributed ARGS``: the same as ``crawler ARGS`` (kept for scripts that
started workers as ``python -m crawler.distributed worker ORDER --redis URL ...``; the launcher
now starts ``python -m crawler worker ...``)."""

import sys

from crawler.cli import main

sys.exit(main())
