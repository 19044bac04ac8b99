"""The User-Agent the crawl announces, built from the order's operator section."""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler import __version__

if TYPE_CHECKING:
    from crawler.order.schema import CrawlOrder


class _KeepUnknown(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def user_agent(order: CrawlOrder) -> str:
    """``operator.user_agent_template`` with ``{version}`` and ``{contact_url}`` filled in.

    Unknown ``{names}`` are left as they are and a malformed template is used verbatim, so a
    typo in the order cannot stop the crawl. The same string is sent by FetchHTTP and matched
    against robots.txt groups (Heritrix matches robots agents against its User-Agent too).
    """
    operator = order.operator
    template = operator.user_agent_template
    values = _KeepUnknown(version=__version__, contact_url=operator.contact_url or "")
    try:
        return template.format_map(values)
    except (ValueError, IndexError, AttributeError):
        return template
