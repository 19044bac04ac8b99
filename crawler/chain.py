"""ProcessorChain and ProcessorChains: the five ordered chains a CrawlURI goes through.

A CrawlURI goes through the chains in the order they are given (the order's chains are, in
order, ``pre``, ``fetch``, ``extract``, ``write`` and ``post``:
:data:`crawler.order.schema.CHAIN_NAMES`). A processor may skip to the chain named ``post``
(``SKIP_TO_POST``; past the last chain when there is none) or jump forward to a named processor.
Chains are immutable once built and shared by all ToeThreads.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from crawler.processor import Processor

if TYPE_CHECKING:
    from crawler.curi import CrawlURI

POST_CHAIN = "post"
"""The chain ``SKIP_TO_POST`` leads to."""


class ProcessorChain:
    """A named, ordered list of processors."""

    __slots__ = ("name", "processors")

    def __init__(self, name: str, processors: Sequence[Processor[Any]] = ()) -> None:
        self.name = name
        self.processors: tuple[Processor[Any], ...] = tuple(processors)

    def __iter__(self) -> Iterator[Processor[Any]]:
        return iter(self.processors)

    def __len__(self) -> int:
        return len(self.processors)


class ProcessorChains:
    """The chains, run in the order given for each CrawlURI (chain names are unique).

    :meth:`run` returns normally even when a processor raises: the exception propagates to the
    caller (the ToeThread), which turns it into status -5.
    """

    def __init__(self, chains: Sequence[ProcessorChain]) -> None:
        names = [chain.name for chain in chains]
        if len(set(names)) != len(names):
            raise ValueError(f"two chains have the same name in {names}; names must be unique")
        self.chains: tuple[ProcessorChain, ...] = tuple(chains)
        self._flat: list[Processor[Any]] = [p for chain in self.chains for p in chain]
        self._index: dict[str, int] = {}
        for i, proc in enumerate(self._flat):
            if proc.name in self._index:
                raise ValueError(f"two processors are named {proc.name!r}; names must be unique")
            self._index[proc.name] = i
        self._post_start = len(self._flat)
        start = 0
        for chain in self.chains:
            if chain.name == POST_CHAIN:
                self._post_start = start
            start += len(chain)

    def __getitem__(self, name: str) -> ProcessorChain:
        for chain in self.chains:
            if chain.name == name:
                return chain
        raise KeyError(name)

    def processors(self) -> list[Processor[Any]]:
        """Every processor, in run order."""
        return list(self._flat)

    def find(self, name: str) -> Processor[Any] | None:
        """The processor called ``name``, if any."""
        index = self._index.get(name)
        return None if index is None else self._flat[index]

    def chain_of(self, proc: Processor[Any]) -> str:
        """Name of the chain that holds ``proc``."""
        for chain in self.chains:
            if proc in chain.processors:
                return chain.name
        raise KeyError(proc.name)

    def run(
        self,
        curi: CrawlURI,
        on_processor: Callable[[Processor[Any]], None] | None = None,
    ) -> None:
        """Run ``curi`` through all chains, honouring skip-to-post and jumps.

        ``on_processor`` is told each processor before it runs (the ToeThread's current step).
        A jump to an unknown or earlier processor raises ``ValueError``.
        """
        flat = self._flat
        i = 0
        n = len(flat)
        while i < n:
            proc = flat[i]
            if on_processor is not None:
                on_processor(proc)
            result = proc.process(curi)
            kind = result.kind
            if kind == "proceed":
                i += 1
            elif kind == "skip_to_post":
                i = max(i + 1, self._post_start)
            else:
                target = self._index.get(result.target or "")
                if target is None:
                    raise ValueError(f"processor {proc.name!r} jumped to unknown {result.target!r}")
                if target <= i:
                    raise ValueError(
                        f"processor {proc.name!r} jumped backwards to {result.target!r}"
                    )
                i = target

    def start(self, ctx: Any) -> None:
        """Start every processor in run order."""
        for proc in self._flat:
            proc.start(ctx)

    def stop(self) -> None:
        """Stop every processor in reverse order; never raises."""
        for proc in reversed(self._flat):
            with contextlib.suppress(Exception):
                proc.stop()
