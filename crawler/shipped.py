"""Where the files the crawler ships live: beside the package in a checkout (``conf/``,
``jobs/example/``), or inside it in an installed wheel (``crawler/_data/``, the same tree).

:func:`shipped` answers for a path relative to the project root, e.g.
``shipped("conf/default-order.yaml")``. Pure function: thread-safe.
"""

from __future__ import annotations

from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
"""The project root of a checkout (in an installed wheel: site-packages, which has no conf/)."""
PACKAGED = Path(__file__).resolve().parent / "_data"
"""The same files inside an installed wheel (pyproject's force-include)."""


def shipped(relative: str) -> Path:
    """The shipped file ``relative`` (to the project root): the checkout's, else the wheel's
    (the checkout's path when neither exists, so an error names a sensible place)."""
    for root in (CHECKOUT, PACKAGED):
        path = root / relative
        if path.exists():
            return path
    return CHECKOUT / relative


def in_checkout() -> bool:
    """True when the crawler runs from a checkout (its ``conf/`` beside the package)."""
    return (CHECKOUT / "conf" / "default-order.yaml").is_file()
