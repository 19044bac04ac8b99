"""Pre-fetch processors: operator blocks and prerequisites (robots.txt) before any fetch."""

from processors.prefetch.precondition_enforcer import (
    PreconditionEnforcer,
    PreconditionEnforcerParams,
)
from processors.prefetch.preselector import Preselector, PreselectorParams

__all__ = [
    "PreconditionEnforcer",
    "PreconditionEnforcerParams",
    "Preselector",
    "PreselectorParams",
]
