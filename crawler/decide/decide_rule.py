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

A rule may say what of the URI it reads (``DecideRule.reads``): a rule that reads only the hops
(:data:`HOPS`) answers the same for every URI with the same hop path, hops dropped, seed hop limit
and seed flag, so a sequence works such rules out once per combination (see
:class:`DecideRuleSequence`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Generic, NamedTuple, TypeVar

from crawler.bounded_memo import remember
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

HOPS = "hops"
"""A rule's ``reads`` item: the URI's ``hop_path``, ``hops_dropped``, ``seed_max_hops`` and
``is_seed`` (nothing else of the URI)."""
ANYTHING = "*"
"""A rule's ``reads`` item: anything of the URI (the default)."""
PLANS_KEPT = 1024
"""Hop combinations whose plan a :class:`DecideRuleSequence` remembers at most."""


class DecideRule(Generic[P]):
    """Base of all rules. Subclasses implement :meth:`decide`; parameters come from the order.

    Thread-safety: ``decide`` must not mutate ``self`` (rules are shared by all ToeThreads).
    """

    params_model: ClassVar[type[Params]] = Params
    sheet_params: ClassVar[frozenset[str]] = frozenset()
    """The params a sheet may override: those this rule reads per URI via :meth:`params_for`."""
    gate: ClassVar[bool] = False
    """True for a rule with memory, asked only about URIs the rest of its sequence accepts."""
    reads: ClassVar[frozenset[str]] = frozenset({ANYTHING})
    """What of the URI :meth:`decide` reads: ``{HOPS}`` for the hops alone (its answer is then
    a function of them and of its params, changed only by :meth:`bind` and
    :meth:`seed_added`), ``{ANYTHING}`` by default. A declaration counts
    only for the class that makes it and the subclasses that change neither ``decide`` nor
    ``evaluate`` (a subclass with its own test must declare again)."""

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

    def params_vary(self) -> bool:
        """Whether sheets in force may give this rule other params for some URIs (then its
        answer may depend on the URI's place, whatever :attr:`reads` says)."""
        sheets = self._sheets
        return bool(self.sheet_params) and sheets is not None and sheets.active

    def predicate(self) -> tuple[Callable[[CrawlURI], object], DecideResult] | None:
        """``(test, answer)`` when :meth:`decide` is ``answer`` if ``test(curi)`` is true and
        NONE otherwise (a sequence then calls ``test`` itself); None (the default) when not."""
        return None

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


_Test = Callable[["CrawlURI"], Any]


class _Step(NamedTuple):
    """One rule as a sequence asks it: ``test(curi)`` is its answer when ``decision`` is None,
    else (a predicated rule's test) whether it answers ``decision`` (NONE when not)."""

    position: int
    test: _Test
    decision: DecideResult | None


class _Plan(NamedTuple):
    """The steps left to ask, from the last rule backwards, and the answer (with the index of
    the rule giving it, -1 for none) when none of them has an opinion."""

    steps: tuple[_Step, ...]
    answer: DecideResult
    position: int


def _declared_reads(rule: DecideRule[Any]) -> frozenset[str]:
    """``rule.reads`` when the class declaring it is the one whose test the rule runs (no
    subclass in between overrides ``decide`` or ``evaluate``), else ``{ANYTHING}``."""
    for cls in type(rule).__mro__:
        if "reads" in cls.__dict__:
            return rule.reads
        if "decide" in cls.__dict__ or "evaluate" in cls.__dict__:
            return frozenset({ANYTHING})
    return frozenset({ANYTHING})


def _step(index: int, rule: DecideRule[Any]) -> _Step:
    """The step of ``rule``: a predicated rule is asked its test directly."""
    predicate = rule.predicate()
    if predicate is not None:
        return _Step(index, predicate[0], predicate[1])
    return _Step(index, rule.decide, None)


class DecideRuleSequence:
    """The last non-NONE result of the rules wins (NONE if every rule abstains).

    Rules must be free of side effects: the sequence asks them from the last one backwards and
    stops at the first answer, which gives the same result as asking all in order. Gates (see
    the module docstring) are asked last, in list order, about what the other rules ACCEPT;
    the first gate that REJECTs decides.

    Rules that read only the hops (``reads = {HOPS}``) are asked once per combination of hop
    path, hops dropped, seed hop limit and seed flag: the sequence keeps, per combination (at
    most :data:`PLANS_KEPT`, forgotten all at once when full), a *plan*: the other rules to ask,
    from the last backwards, down to the last hops rule with an opinion, which answers when
    none of them has one. The answer and the deciding rule are those of asking every rule.
    While sheets may change a hops rule's params for some URIs (:meth:`DecideRule.params_vary`)
    every rule is asked. A hops rule that raises while a plan is made leaves the plan unmade
    (the rules are then asked one by one, raising where they would have). Thread-safety: the
    plans' dict is only read and assigned whole entries (atomic); two threads may make the
    same plan, both right.
    """

    __slots__ = ("_every", "_gates", "_hop_rules", "_plans", "_varying", "rules")

    def __init__(self, rules: Sequence[DecideRule[Any]] = ()) -> None:
        self.rules: tuple[DecideRule[Any], ...] = tuple(rules)
        backwards = tuple(
            _step(i, rule) for i, rule in reversed(list(enumerate(self.rules))) if not rule.gate
        )
        self._every = _Plan(backwards, DecideResult.NONE, -1)
        self._gates: tuple[tuple[int, DecideRule[Any]], ...] = tuple(
            (i, rule) for i, rule in enumerate(self.rules) if rule.gate
        )
        self._hop_rules = frozenset(
            i
            for i, rule in enumerate(self.rules)
            if not rule.gate and _declared_reads(rule) == {HOPS}
        )
        self._varying = tuple(
            rule for i, rule in enumerate(self.rules) if i in self._hop_rules and rule.sheet_params
        )
        self._plans: dict[tuple[str, int, int, bool], _Plan] = {}

    def bind(self, ctx: RuleContext) -> None:
        """Bind every rule (see :meth:`DecideRule.bind`); plans made before are forgotten."""
        for rule in self.rules:
            rule.bind(ctx)
        self._plans = {}

    def seed_added(self, uri: str) -> None:
        """Tell every rule of a new seed (see :meth:`DecideRule.seed_added`); plans made
        before are forgotten."""
        for rule in self.rules:
            rule.seed_added(uri)
        self._plans = {}

    def decide(self, curi: CrawlURI) -> DecideResult:
        """The last non-NONE decision of the rules, or NONE."""
        # The last non-NONE answer wins, so asking from the last rule backwards and stopping at
        # the first answer gives the same result with fewer calls (rules have no side effects).
        none = DecideResult.NONE
        plan = self._plan(curi)
        for _, test, decision in plan.steps:
            if decision is None:
                answer = test(curi)
                if answer is none:
                    continue
            elif test(curi):
                answer = decision
            else:
                continue
            if answer is DecideResult.ACCEPT and self._gates:
                return self._through_gates(curi)[0]
            return answer  # type: ignore[no-any-return]
        answer = plan.answer
        if answer is DecideResult.ACCEPT and self._gates:
            return self._through_gates(curi)[0]
        return answer

    def decide_with_rule(self, curi: CrawlURI) -> tuple[DecideResult, int]:
        """Like :meth:`decide`, also giving the index of the deciding rule (-1 if none)."""
        plan = self._plan(curi)
        answer, index = plan.answer, plan.position
        for i, test, decision in plan.steps:
            if decision is None:
                result = test(curi)
                if result is DecideResult.NONE:
                    continue
            elif test(curi):
                result = decision
            else:
                continue
            answer, index = result, i
            break
        if answer is DecideResult.ACCEPT and self._gates:
            result, gate = self._through_gates(curi)
            return result, (index if gate < 0 else gate)
        return answer, index

    def decide_each(self, curi: CrawlURI) -> tuple[DecideResult, int]:
        """The decision and the deciding rule's index the plain way: every rule asked in list
        order (gates as in :meth:`decide`), no plan. For checks of the fast path."""
        answer, index = DecideResult.NONE, -1
        for i, rule in enumerate(self.rules):
            if rule.gate:
                continue
            result = rule.decide(curi)
            if result is not DecideResult.NONE:
                answer, index = result, i
        if answer is DecideResult.ACCEPT and self._gates:
            result, gate = self._through_gates(curi)
            return result, (index if gate < 0 else gate)
        return answer, index

    def _plan(self, curi: CrawlURI) -> _Plan:
        """The plan for ``curi``'s hops (every rule when there is no hops rule or sheets may
        change one's params)."""
        if not self._hop_rules:
            return self._every
        for rule in self._varying:  # DecideRule.params_vary, inlined (once per candidate)
            sheets = rule._sheets
            if sheets is not None and sheets.active:
                return self._every
        key = (curi.hop_path, curi.hops_dropped, curi.seed_max_hops, curi.is_seed)
        plans = self._plans
        plan = plans.get(key)
        if plan is None:
            plan = self._make_plan(curi)
            if plan is not self._every:
                remember(plans, key, plan, PLANS_KEPT)
        return plan

    def _make_plan(self, curi: CrawlURI) -> _Plan:
        """The plan for the hops of ``curi``: the hops rules asked now, about it."""
        steps: list[_Step] = []
        hop_rules = self._hop_rules
        for step in self._every.steps:
            if step.position not in hop_rules:
                steps.append(step)
                continue
            try:
                result = step.test(curi)
            except Exception:  # noqa: BLE001 - asked one by one, it raises where it would have
                return self._every
            if step.decision is not None:
                result = step.decision if result else DecideResult.NONE
            if result is not DecideResult.NONE:
                return _Plan(tuple(steps), result, step.position)
        return _Plan(tuple(steps), DecideResult.NONE, -1)

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
