"""crawler: an archival web crawler on Heritrix's architecture.

This package's public API is what processor authors need; the rest lives in submodules
(``crawler.controller``, ``crawler.frontier``, ``crawler.uniq``, ``crawler.order``).
"""

from crawler.chain import CHAIN_NAMES, ProcessorChain, ProcessorChains
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
from crawler.decide.decide_rule import DecideResult, DecideRule, DecideRuleSequence, RuleContext
from crawler.params import NoParams, Params
from crawler.processor import Processor, ProcessorContext, ProcessResult
from crawler.recording import Recording

__version__ = "0.1.0"

__all__ = [
    "CHAIN_NAMES",
    "DISREGARDED_STATUSES",
    "RETRYABLE_STATUSES",
    "Clock",
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
]
