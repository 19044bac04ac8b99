"""The crawl order: schema, loading (extends, --set), validation and component building.

The names below are imported from their modules on first use (PEP 562, see
:mod:`crawler.lazy_names`), so importing one module of the package (``crawler.order.errors``)
does not load the others, which import the packages that build on the order (sheets, seeds).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.lazy_names import lazy_names

if TYPE_CHECKING:
    from crawler.order.components import (
        build_chains,
        build_component,
        build_frontier_part,
        build_processor,
        build_rules,
        resolve_class,
        show_processor_main,
    )
    from crawler.order.errors import OrderError, OrderIssue
    from crawler.order.loader import (
        default_order_path,
        effective_yaml,
        load_order,
        require_contact_url,
    )
    from crawler.order.preflight import validate_main
    from crawler.order.schema import CrawlOrder

__all__ = [
    "CrawlOrder",
    "OrderError",
    "OrderIssue",
    "build_chains",
    "build_component",
    "build_frontier_part",
    "build_processor",
    "build_rules",
    "default_order_path",
    "effective_yaml",
    "load_order",
    "require_contact_url",
    "resolve_class",
    "show_processor_main",
    "validate_main",
]

_HOMES = {
    "CrawlOrder": "crawler.order.schema",
    "OrderError": "crawler.order.errors",
    "OrderIssue": "crawler.order.errors",
    "build_chains": "crawler.order.components",
    "build_component": "crawler.order.components",
    "build_frontier_part": "crawler.order.components",
    "build_processor": "crawler.order.components",
    "build_rules": "crawler.order.components",
    "resolve_class": "crawler.order.components",
    "show_processor_main": "crawler.order.components",
    "default_order_path": "crawler.order.loader",
    "effective_yaml": "crawler.order.loader",
    "load_order": "crawler.order.loader",
    "require_contact_url": "crawler.order.loader",
    "validate_main": "crawler.order.preflight",
}
"""Public name → the module defining it."""

if not TYPE_CHECKING:
    # Hidden from mypy: a visible module __getattr__ would type every misspelt name as Any.
    __getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
