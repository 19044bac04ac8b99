"""The crawl order: schema, loading (extends, --set), validation and component building."""

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
    validate_main,
)
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
