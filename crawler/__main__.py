"""``python -m crawler``: the same as the ``crawler`` command."""

import sys

from crawler.cli import main

sys.exit(main())
