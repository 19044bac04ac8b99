"""DecideResult, DecideRule and DecideRuleSequence: the scoping and filtering vocabulary.

A rule answers ACCEPT, REJECT or NONE (no opinion) for a CrawlURI. A sequence asks every rule in
order and the last non-NONE answer wins (Heritrix's ``DecideRuleSequence``). Rules are immutable
after :meth:`DecideRule.bind`, so one instance serves all threads without locks; one exception,
:meth:`DecideRule.seed_added` (a seed joining the running crawl), swaps in a new state in one
attribute assignment, so a concurrent ``decide`` sees the old state or the new one.

A *gate* (``DecideRule.gate = True``, e.g. a trap budget) is the other exception: it has memory
(it counts what it lets through), so the sequence asks it only about URIs the other rules ACCEPT,
after them, wherever it stands in the list; it answers ACCEPT or REJECT and may annotate the URI
it rejects. A gate keeps its own memory thread-safe.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from crawler.params import Params, params_model_of

if TYPE_CHECKING:
    from crawler.curi import CrawlURI
    from crawler.param_overrides import ParamOverrides


class DecideResult(StrEnum):
    """A rule's answer."""

    ACCEPT = "ACCEPT"
    REJECT = "REJECT"
    NONE = "NONE"


@dataclass(frozen=True, slots=True)
class RuleContext:
    """What rules may need from the crawl when bound: the seed URIs and the order's directory."""

    seeds: Sequence[str] = ()
    base_dir: str = "."
    extra: dict[str, object] = field(default_factory=dict)


P = TypeVar("P", bound=Params)


class DecideRule(Generic[P]):
    """Base of all rules. Subclasses implement :meth:`decide`; parameters come from the order.

    Thread-safety: ``decide`` must not mutate ``self`` (rules are shared by all ToeThreads).
    """

    params_model: ClassVar[type[Params]] = Params
    sheet_params: ClassVar[frozenset[str]] = frozenset()
    """The params a sheet may override: those this rule reads per URI via :meth:`params_for`."""
    gate: ClassVar[bool] = False
    """True for a rule with memory, asked only about URIs the rest of its sequence accepts."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.params_model = params_model_of(cls, DecideRule)

    def __init__(self, params: P | None = None) -> None:
        self.params: P = params if params is not None else self.params_model()  # type: ignore[assignment]
        self._sheets: ParamOverrides | None = None
        self._sheet_index = -1

    def attach_sheets(self, sheets: ParamOverrides, index: int) -> None:
        """Let the crawl's sheets override this rule's params; ``index`` is its place in the
        scope (``scope.<index>.params.*`` in a sheet). Called by the crawl builder."""
        self._sheets = sheets
        self._sheet_index = index

    def params_for(self, curi: CrawlURI) -> P:
        """This rule's params for ``curi``, with the sheets that apply to it; ``self.params``
        when there are none. Thread-safe."""
        sheets = self._sheets
        if sheets is None or not sheets.active:
            return self.params
        return sheets.rule_params(self._sheet_index, self.params, curi)  # type: ignore[return-value]

    def bind(self, ctx: RuleContext) -> None:
        """Called once before the crawl with the seeds; precompute here. Default: nothing."""

    def seed_added(self, uri: str) -> None:
        """A seed joined the running crawl (e.g. the target of a seed's redirect); rules that
        derive something from the seeds add it here. Calls never overlap each other or
        :meth:`bind` (the seed module serializes them); ``decide`` may run meanwhile. Default:
        nothing (Heritrix's ``SeedListener.addedSeed``)."""

    def decide(self, curi: CrawlURI) -> DecideResult:
        """ACCEPT, REJECT or NONE for ``curi``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.params!r})"


class DecideRuleSequence:
    """The last non-NONE result of the rules wins (NONE if every rule abstains).

    Rules must be free of side effects: the sequence asks them from the last one backwards and
    stops at the first answer, which gives the same result as asking all in order. Gates (see
    the module docstring) are asked last, in list order, about what the other rules ACCEPT;
    the first gate that REJECTs decides.
    """

    __slots__ = ("_backwards", "_gates", "rules")

    def __init__(self, rules: Sequence[DecideRule[Any]] = ()) -> None:
        self.rules: tuple[DecideRule[Any], ...] = tuple(rules)
        self._backwards: tuple[tuple[int, DecideRule[Any]], ...] = tuple(
            (i, rule) for i, rule in reversed(list(enumerate(self.rules))) if not rule.gate
        )
        self._gates: tuple[tuple[int, DecideRule[Any]], ...] = tuple(
            (i, rule) for i, rule in enumerate(self.rules) if rule.gate
        )

    def bind(self, ctx: RuleContext) -> None:
        """Bind every rule (see :meth:`DecideRule.bind`)."""
        for rule in self.rules:
            rule.bind(ctx)

    def seed_added(self, uri: str) -> None:
        """Tell every rule of a new seed (see :meth:`DecideRule.seed_added`)."""
        for rule in self.rules:
            rule.seed_added(uri)

    def decide(self, curi: CrawlURI) -> DecideResult:
        """The last non-NONE decision of the rules, or NONE."""
        # The last non-NONE answer wins, so asking from the last rule backwards and stopping at
        # the first answer gives the same result with fewer calls (rules have no side effects).
        none = DecideResult.NONE
        for _, rule in self._backwards:
            answer = rule.decide(curi)
            if answer is not none:
                if answer is DecideResult.ACCEPT and self._gates:
                    return self._through_gates(curi)[0]
                return answer
        return none

    def decide_with_rule(self, curi: CrawlURI) -> tuple[DecideResult, int]:
        """Like :meth:`decide`, also giving the index of the deciding rule (-1 if none)."""
        for i, rule in self._backwards:
            answer = rule.decide(curi)
            if answer is not DecideResult.NONE:
                if answer is DecideResult.ACCEPT and self._gates:
                    result, gate = self._through_gates(curi)
                    return result, (i if gate < 0 else gate)
                return answer, i
        return DecideResult.NONE, -1

    def _through_gates(self, curi: CrawlURI) -> tuple[DecideResult, int]:
        """ACCEPT and -1 when every gate lets ``curi`` through, else REJECT and the gate's index."""
        for i, gate in self._gates:
            if gate.decide(curi) is DecideResult.REJECT:
                return DecideResult.REJECT, i
        return DecideResult.ACCEPT, -1

    def accepts(self, curi: CrawlURI) -> bool:
        """True when the sequence's decision is ACCEPT."""
        return self.decide(curi) is DecideResult.ACCEPT

    def __len__(self) -> int:
        return len(self.rules)
