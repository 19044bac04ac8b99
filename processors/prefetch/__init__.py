"""Pre-fetch processors: operator blocks, quotas and prerequisites (robots.txt) before any fetch."""

from processors.prefetch.precondition_enforcer import (
    PreconditionEnforcer,
    PreconditionEnforcerParams,
)
from processors.prefetch.preselector import Preselector, PreselectorParams
from processors.prefetch.quota_enforcer import QuotaEnforcer, QuotaEnforcerParams

__all__ = [
    "PreconditionEnforcer",
    "PreconditionEnforcerParams",
    "Preselector",
    "PreselectorParams",
    "QuotaEnforcer",
    "QuotaEnforcerParams",
]
