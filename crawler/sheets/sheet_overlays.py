"""SheetOverlays: which sheets apply to a URI, and the settings they give it.

A URI takes every sheet with a SURT prefix that starts the URI's (http-coerced) SURT. They are
stacked from the shortest matching prefix to the longest, so where two sheets set the same key
the one with the longer prefix wins; sheets of the same prefix stack in the order they are
listed (the later wins). This is how Heritrix's SheetOverlaysManager stacks the sheets of its
SURT-prefix associations.

Lookup cost: one SURT per URI (its authority part is cached) and one dictionary probe per
distinct prefix length; the result, an :class:`Overlay`, is kept on the CrawlURI (``curi.sheet``)
so every processor of the URI reuses it, and the effective params of one processor under one
combination of sheets are built once per crawl and shared. With no sheet, ``active`` is False
and callers return their base settings without any lookup.

Sheets may be replaced while the crawl runs (:meth:`SheetOverlays.replace`): the index is swapped
in one assignment and the version bumped, so a URI resolved before sees the new sheets at its next
lookup. Thread-safe: readers take no lock; the overlay cache is filled under a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, TypeVar

from crawler.order.errors import OrderError
from crawler.order.schema import CrawlOrder, PolitenessConfig, SheetConfig
from crawler.sheets.sheet_compiler import CompiledSheet, compile_sheets
from crawler.surt import coerce_http, surt

if TYPE_CHECKING:
    from crawler.curi import CrawlURI
    from crawler.params import Params

T = TypeVar("T")


class Overlay:
    """The settings a combination of sheets gives (shared by every URI with that combination)."""

    def __init__(
        self, sheets: Sequence[CompiledSheet], version: int, base: PolitenessConfig
    ) -> None:
        self.names: Final = tuple(s.name for s in sheets)
        self.version: Final = version
        self.empty: Final = not sheets
        self.processors: dict[str, dict[str, Any]] = {}
        self.scope: dict[int, dict[str, Any]] = {}
        politeness: dict[str, Any] = {}
        for sheet in sheets:  # shortest prefix first: later sheets win
            politeness.update(sheet.politeness)
            for name, updates in sheet.processors.items():
                self.processors.setdefault(name, {}).update(updates)
            for index, updates in sheet.scope.items():
                self.scope.setdefault(index, {}).update(updates)
        self.politeness: Final = (
            base.model_validate({**base.model_dump(), **politeness}) if politeness else base
        )
        self._memo: dict[object, Any] = {}
        self._lock = threading.Lock()

    def memo(self, key: object, make: Callable[[], T]) -> T:
        """The value ``make()`` gave for ``key`` in this overlay (made once)."""
        try:
            return self._memo[key]  # type: ignore[no-any-return]
        except KeyError:
            pass
        with self._lock:
            if key not in self._memo:
                self._memo[key] = make()
            return self._memo[key]  # type: ignore[no-any-return]

    def params(self, key: object, base: Params, updates: dict[str, Any] | None) -> Params:
        """``base`` with ``updates`` applied (validated when the sheet was compiled)."""
        if not updates:
            return base
        return self.memo(
            key, lambda: base.model_validate({**base.model_dump(by_alias=True), **updates})
        )


@dataclass(frozen=True)
class _Index:
    version: int
    configs: tuple[SheetConfig, ...]
    sheets: tuple[CompiledSheet, ...]
    lengths: tuple[int, ...]
    by_prefix: dict[str, tuple[int, ...]]
    overlays: dict[tuple[int, ...], Overlay]


class SheetOverlays:
    """The crawl's sheets and the lookup of a URI's overlay (see the module docstring).

    Implements the core's :class:`~crawler.param_overrides.ParamOverrides` that processors and
    scope rules read (and :class:`Overlay` its ``ParamOverlay``).
    """

    def __init__(self, order: CrawlOrder, sheets: Sequence[SheetConfig] | None = None) -> None:
        self.order = order
        self._lock = threading.Lock()
        self._index = self._build(list(order.sheets if sheets is None else sheets), 1)
        self.active = bool(self._index.sheets)

    @property
    def version(self) -> int:
        """Bumped by every :meth:`replace`."""
        return self._index.version

    @property
    def configs(self) -> list[SheetConfig]:
        """The sheets in force, as given."""
        return list(self._index.configs)

    @property
    def compiled(self) -> list[CompiledSheet]:
        """The sheets in force, compiled."""
        return list(self._index.sheets)

    def _build(self, configs: list[SheetConfig], version: int, source: str = "") -> _Index:
        prefix = f"{source}: sheets" if source else "sheets"
        compiled, issues = compile_sheets(self.order, configs, prefix)
        if issues:
            raise OrderError(issues, source or None)
        by_prefix: dict[str, list[int]] = {}
        for i, sheet in enumerate(compiled):
            for prefix in sheet.prefixes:
                by_prefix.setdefault(prefix, []).append(i)
        empty = Overlay((), version, self.order.frontier.politeness)
        return _Index(
            version,
            tuple(configs),
            tuple(compiled),
            tuple(sorted({len(p) for p in by_prefix})),
            {p: tuple(ids) for p, ids in by_prefix.items()},
            {(): empty},
        )

    def replace(self, configs: Sequence[SheetConfig], source: str = "") -> None:
        """Put ``configs`` in force instead of the current sheets; raises OrderError (and
        changes nothing) if one is invalid (``source`` names the document in its issues)."""
        with self._lock:
            index = self._build(list(configs), self._index.version + 1, source)
            self._index = index
            self.active = bool(index.sheets)

    def overlay_for(self, curi: CrawlURI) -> Overlay:
        """The overlay of ``curi`` (kept on it until the sheets change)."""
        index = self._index
        overlay: Overlay | None = curi.sheet
        if overlay is not None and overlay.version == index.version:
            return overlay
        overlay = self.overlay_for_uri(curi.uri, index)
        curi.sheet = overlay
        return overlay

    def overlay_for_uri(self, uri: str, index: _Index | None = None) -> Overlay:
        """The overlay of ``uri`` (looked up, not kept)."""
        index = index or self._index
        key: tuple[int, ...] = ()
        if index.lengths:
            try:
                form = coerce_http(surt(uri))
            except ValueError:
                form = ""
            ids: list[int] = []
            for length in index.lengths:
                found = index.by_prefix.get(form[:length]) if len(form) >= length else None
                if found:
                    ids.extend(found)
            key = tuple(ids)
        overlay = index.overlays.get(key)
        if overlay is None:
            with self._lock:
                overlay = index.overlays.get(key)
                if overlay is None:
                    sheets = [index.sheets[i] for i in key]
                    overlay = Overlay(sheets, index.version, self.order.frontier.politeness)
                    index.overlays[key] = overlay
        return overlay

    def processor_overrides(self, name: str) -> list[dict[str, Any]]:
        """The params overrides of processor ``name`` in the sheets in force (that have some)."""
        return [s.processors[name] for s in self._index.sheets if name in s.processors]

    def processor_params(self, name: str, base: Params, curi: CrawlURI) -> Params:
        """The params of processor ``name`` (``base`` in the order) for ``curi``."""
        overlay = self.overlay_for(curi)
        if overlay.empty:
            return base
        return overlay.params(name, base, overlay.processors.get(name))

    def rule_params(self, index: int, base: Params, curi: CrawlURI) -> Params:
        """The params of scope rule ``index`` (``base`` in the order) for ``curi``."""
        overlay = self.overlay_for(curi)
        if overlay.empty:
            return base
        return overlay.params(("scope", index), base, overlay.scope.get(index))

    def politeness_for(self, curi: CrawlURI) -> PolitenessConfig:
        """``frontier.politeness`` with the sheets of ``curi`` applied."""
        if not self.active:
            return self.order.frontier.politeness
        return self.overlay_for(curi).politeness
