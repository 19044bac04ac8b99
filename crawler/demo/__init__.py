"""The bundled sample site: a deterministic multi-host website on 127.0.0.1 for ``crawler demo``
and the end-to-end tests, with its ground truth (``SampleSite.expected_urls``).

``SampleSite`` and ``LoggedRequest`` are imported lazily so that
``python -m crawler.demo.sample_site`` does not import its own module twice.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from crawler.demo.site_content import DISALLOWED_PREFIX, Resource, SiteContent

if TYPE_CHECKING:
    from crawler.demo.sample_site import LoggedRequest, SampleSite

__all__ = ["DISALLOWED_PREFIX", "LoggedRequest", "Resource", "SampleSite", "SiteContent"]


def __getattr__(name: str) -> object:
    if name in ("LoggedRequest", "SampleSite"):
        return getattr(importlib.import_module("crawler.demo.sample_site"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
