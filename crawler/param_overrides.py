"""ParamOverrides: how processors and scope rules get their settings for one URI.

The core knows only these protocols. The crawl's sheets implement them
(:class:`crawler.sheets.sheet_overlays.SheetOverlays` and its ``Overlay``) and the crawl builder
hands them to the processors (``ProcessorContext.sheets``) and scope rules
(:meth:`DecideRule.attach_sheets <crawler.decide.decide_rule.DecideRule.attach_sheets>`), so the
core imports nothing of the sheets. Implementations must be thread-safe: every ToeThread asks at
once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from crawler.curi import CrawlURI
    from crawler.params import Params

T = TypeVar("T")


class SitePoliteness(Protocol):
    """The politeness settings a URI's overrides may change (``frontier.politeness.*``)."""

    @property
    def delay_factor(self) -> float: ...
    @property
    def min_delay_ms(self) -> float: ...
    @property
    def max_delay_ms(self) -> float: ...
    @property
    def respect_crawl_delay_up_to_s(self) -> float: ...


class ParamOverlay(Protocol):
    """The overrides that apply to one URI, shared by every URI they apply to alike."""

    @property
    def empty(self) -> bool:
        """True when nothing is overridden for the URI."""
        ...

    @property
    def politeness(self) -> SitePoliteness:
        """The politeness of the URI: the order's with the overrides applied."""
        ...

    def memo(self, key: object, make: Callable[[], T]) -> T:
        """The value ``make()`` gave for ``key`` under these overrides (made once)."""
        ...


class ParamOverrides(Protocol):
    """Per-URI settings of the crawl's processors and scope rules.

    ``active`` is False when nothing is overridden for any URI: callers then use their own
    params without asking (the hot path pays one attribute read).
    """

    active: bool

    def processor_params(self, name: str, base: Params, curi: CrawlURI) -> Params:
        """The params of the processor called ``name`` (``base`` in the order) for ``curi``."""
        ...

    def rule_params(self, index: int, base: Params, curi: CrawlURI) -> Params:
        """The params of the scope rule at ``index`` (``base`` in the order) for ``curi``."""
        ...

    def overlay_for(self, curi: CrawlURI) -> ParamOverlay:
        """The overrides that apply to ``curi``."""
        ...

    def processor_overrides(self, name: str) -> Sequence[Mapping[str, Any]]:
        """The params overrides in force for the processor called ``name``, one mapping per
        set of overrides that has some (for whatever URIs they apply to)."""
        ...
