"""lazy_names: a package's public names imported from their modules on first use (PEP 562).

A package whose ``__init__`` would import heavy modules (pydantic, FastAPI) only to re-export a
few names gives each command the import bill of all of them. With
``__getattr__, __dir__ = lazy_names(__name__, homes, __all__)`` (under ``if not TYPE_CHECKING``,
next to the real imports under ``if TYPE_CHECKING``, so type checkers see real names and a
misspelt one stays an error), ``from package import Name`` imports ``Name``'s module then, and
caches the name in the package. Thread-safe as imports are (the import lock).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence


def lazy_names(
    package: str, homes: Mapping[str, str], public: Sequence[str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``; ``homes`` maps each public
    name to the module defining it."""

    def get_name(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)
        return value

    def names() -> list[str]:
        return sorted({*vars(sys.modules[package]), *public})

    return get_name, names
