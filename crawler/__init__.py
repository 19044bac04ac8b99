"""crawler: an archival web crawler on Heritrix's architecture.

This package's public API is what processor authors need; the rest lives in submodules
(``crawler.control.controller``, ``crawler.frontier``, ``crawler.uniq``, ``crawler.order``).

The names of ``__all__`` are imported from their modules on first use (PEP 562), so a command
that needs none of them (``crawler --help``) does not pay for pydantic; ``from crawler import
CrawlURI`` works as with an eager import, and type checkers see the imports below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.lazy_names import lazy_names

if TYPE_CHECKING:
    from crawler.chain import ProcessorChain, ProcessorChains
    from crawler.clock import Clock, ManualClock, SystemClock
    from crawler.curi import (
        DISREGARDED_STATUSES,
        RETRYABLE_STATUSES,
        CrawlURI,
        FetchStatus,
        Hop,
        Link,
        RevisitInfo,
        SchedulingDirective,
    )
    from crawler.decide.decide_rule import (
        DecideResult,
        DecideRule,
        DecideRuleSequence,
        RuleContext,
    )
    from crawler.order.components import build_rules
    from crawler.order.schema import CHAIN_NAMES, ComponentSpec
    from crawler.params import NoParams, Params
    from crawler.processor import Processor, ProcessorContext, ProcessResult
    from crawler.recording import Recording

__version__ = "0.1.0"

__all__ = [
    "CHAIN_NAMES",
    "DISREGARDED_STATUSES",
    "RETRYABLE_STATUSES",
    "Clock",
    "ComponentSpec",
    "CrawlURI",
    "DecideResult",
    "DecideRule",
    "DecideRuleSequence",
    "FetchStatus",
    "Hop",
    "Link",
    "ManualClock",
    "NoParams",
    "Params",
    "ProcessResult",
    "Processor",
    "ProcessorChain",
    "ProcessorChains",
    "ProcessorContext",
    "Recording",
    "RevisitInfo",
    "RuleContext",
    "SchedulingDirective",
    "SystemClock",
    "__version__",
    "build_rules",
]

_HOMES = {
    "CHAIN_NAMES": "crawler.order.schema",
    "ProcessorChain": "crawler.chain",
    "ProcessorChains": "crawler.chain",
    "Clock": "crawler.clock",
    "ManualClock": "crawler.clock",
    "SystemClock": "crawler.clock",
    "DISREGARDED_STATUSES": "crawler.curi",
    "RETRYABLE_STATUSES": "crawler.curi",
    "CrawlURI": "crawler.curi",
    "FetchStatus": "crawler.curi",
    "Hop": "crawler.curi",
    "Link": "crawler.curi",
    "RevisitInfo": "crawler.curi",
    "SchedulingDirective": "crawler.curi",
    "DecideResult": "crawler.decide.decide_rule",
    "DecideRule": "crawler.decide.decide_rule",
    "DecideRuleSequence": "crawler.decide.decide_rule",
    "RuleContext": "crawler.decide.decide_rule",
    "NoParams": "crawler.params",
    "Params": "crawler.params",
    "Processor": "crawler.processor",
    "ProcessorContext": "crawler.processor",
    "ProcessResult": "crawler.processor",
    "Recording": "crawler.recording",
    "ComponentSpec": "crawler.order.schema",
    "build_rules": "crawler.order.components",
}
"""Public name → the module defining it."""

if not TYPE_CHECKING:
    # Hidden from mypy: a visible module __getattr__ would type every misspelt name as Any.
    __getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)
