"""Grade a run against a reference: the calls it was expected to make.

The reference is the spec's ``reference`` list (an item is a call ``{tool, args, requestor}``
or a list of calls: one expected turn, unordered inside) or ``gold``, the run's own
:attr:`fluke.record.Run.gold` (τ-bench and τ²-bench readers keep it). ``reference_mode``:

============  ===============================================================================
``superset``  every expected call was made; other calls allowed (the default)
``subset``    every made call was expected; expected calls may be skipped
``unordered`` both: the same calls, in any order
``in_order``  every expected call was made, in the reference's order across turns; others
              allowed in between
``strict``    the same calls, in the reference's order across turns
``state``     the calls that change state only (the spec's ``writes``): the same successful
              writes, in any order; an extra write fails like a missing one, reads are free
``state_ordered``  ``state``, and the writes in the reference's order across turns
============  ===============================================================================

In the state modes a failed write attempt changed nothing and is left out
(``reference_failed_writes: ignore``, the default), or is a write made like any other
(``count``: then it is extra unless ``reference_failed_ok`` lets it answer an expected one);
a write that got no result may have changed state, so it always counts.

A made call satisfies an expected one when the tool and requestor are the same, the
arguments match (exactly, or under the spec's ``match`` table: see ``_matchers``) and the
call succeeded (``reference_failed_ok: true`` lets a failed call count). Repeated calls are
paired optimally (``_pairing``). Calls of tools in ``reference_ignore`` are neither expected
nor extra, on either side (a gold call to an ignored tool is dropped from the reference);
calls the simulated user made count only when the reference expects user calls.

>>> from fluke.record import Run, ToolCall, Outcome
>>> from fluke.grading import load_spec, grade_run
>>> spec = load_spec({"reference": [{"tool": "update_reservation", "args": {"reservation_id": "ZFA04Y"}}],
...                   "ground": False})
>>> run = Run(scenario="s", events=[ToolCall(tool="update_reservation", ok=True,
...           args={"reservation_id": "zfa04y"})], outcome=Outcome(passed=True))
>>> grade = grade_run(run, spec)
>>> print(grade.violations[0].message)
expected `update_reservation(reservation_id='ZFA04Y')`, got `reservation_id='zfa04y'` at event 0
>>> grade.reference.recall, grade.reference.precision, grade.lucky
(0.0, 0.0, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from ._matchers import compile_rules, diffs, distance, matches, restrict
from ._pairing import pair_ordered, pair_unordered
from ._text import redact

MODES = ("superset", "subset", "unordered", "in_order", "strict", "state", "state_ordered")
_NEEDS_ALL = {"superset", "unordered", "in_order", "strict", "state", "state_ordered"}
_NO_EXTRA = {"subset", "unordered", "strict", "state", "state_ordered"}
_ORDERED = {"in_order", "strict", "state_ordered"}
_STATE = {"state", "state_ordered"}


class Expected(NamedTuple):
    """One expected call, in reference order; ``group`` is its expected turn."""

    tool: str
    args: Any
    requestor: str
    compare: list[str] | None
    group: int


@dataclass(frozen=True)
class ReferenceResult:
    """How a run's calls met its reference.

    ``made`` counts the calls considered (the agent's, less ``reference_ignore``; the user's
    too when the reference expects user calls). ``precision`` = matched / made, ``recall`` =
    matched / expected, ``score`` = 2 matched / (expected + made): it charges missing and
    extra calls alike (1.0 when both are empty). Undefined shares are None, and a reference
    that could not be read (``reference: gold`` on a run without gold) has ``reason``.
    ``pairs`` are (position in the reference, event index).
    """

    mode: str
    expected: int
    made: int
    matched: int
    precision: float | None
    recall: float | None
    score: float | None
    pairs: tuple[tuple[int, int], ...] = ()
    reason: str | None = None

    @property
    def complete(self) -> bool | None:
        """Every expected call was made (recall 1); None when there was no reference."""
        return None if self.reason else self.matched == self.expected

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "expected": self.expected, "made": self.made,
                "matched": self.matched, "precision": self.precision, "recall": self.recall,
                "score": self.score, "pairs": [list(p) for p in self.pairs], "reason": self.reason}

    @classmethod
    def from_dict(cls, body: dict[str, Any]) -> "ReferenceResult":
        return cls(**{**body, "pairs": tuple(tuple(p) for p in body.get("pairs", ()))})


class ReferencePlan:
    """What a spec's reference keys compile to, once per spec."""

    def __init__(self, model: Any, callables: dict[str, Callable]) -> None:
        self.gold = model.reference == "gold"
        self.mode = model.reference_mode
        self.failed_ok = model.reference_failed_ok
        self.ignore = frozenset(model.reference_ignore)
        self.state = self.mode in _STATE
        self.writes = frozenset(model.writes)
        self.failed_writes = model.reference_failed_writes
        self.rules = {tool: compile_rules(table, callables) for tool, table in model.match.items()}
        self.listed: list[Expected] = []
        if not self.gold:
            for g, item in enumerate(model.reference):
                for call in (item if isinstance(item, list) else [item]):
                    self.listed.append(Expected(call.tool, call.args, call.requestor, None, g))

    def expected_for(self, run: Any) -> list[Expected] | None:
        if not self.gold:
            return self.listed
        if run.gold is None:
            return None
        return [Expected(c.tool, c.args, c.requestor, c.compare, g) for g, c in enumerate(run.gold)
                if self.compared(c.tool)]

    def compared(self, tool: str) -> bool:
        """Does this reference compare calls of ``tool`` (not ignored; a write in the state modes)?"""
        return tool not in self.ignore and (not self.state or tool in self.writes)


def call_text(tool: str, args: Any, limit: int = 120) -> str:
    """``tool(key='value', ...)``, redacted and cut to ``limit`` characters.

    >>> call_text("cancel", {"reservation_id": "ZFA04Y", "reason": "change of plan"})
    "cancel(reservation_id='ZFA04Y', reason='change of plan')"
    """
    return call_texts([(tool, args)], limit)[0]


def call_texts(calls: list[tuple[str, Any]], limit: int = 120) -> list[str]:
    """:func:`call_text` of many calls with one redaction over them all (the texts hold no
    newline: values are shown by ``repr``); a redaction that spans two texts (it can only hide
    more) falls back to one redaction each."""
    raw = []
    for tool, args in calls:
        if isinstance(args, dict):
            inner = ", ".join(f"{k}={_cut(v)}" for k, v in args.items())
        else:
            inner = "" if args is None else _cut(args)
        raw.append(f"{tool}({inner})".replace("\n", " "))
    shown_texts = redact("\n".join(raw)).split("\n")
    if len(shown_texts) != len(raw):
        shown_texts = [redact(t) for t in raw]
    return [t if len(t) <= limit else t[: limit - 2] + "…)" for t in shown_texts]


def _cut(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 2] + "…" + text[-1]


def _turns(events: list) -> list[int]:
    """Each event's turn: consecutive tool calls by one requestor with the same (known) start
    time are one turn (the parallel calls of one message); every other call starts a new one."""
    out, turn, prev = [], -1, None
    for e in events:
        if e.kind == "tool" and not (prev is not None and prev.kind == "tool" and e.t_start is not None
                                     and e.t_start == prev.t_start and e.requestor == prev.requestor):
            turn += 1
        out.append(turn)
        prev = e
    return out


def grade_reference(events: list, plan: ReferencePlan, expected: list[Expected] | None,
                    sev: dict[str, str], violation: Callable) -> tuple[ReferenceResult, list]:
    """Match ``events`` against ``expected``; the result and the violations it gives."""
    mode = plan.mode
    if expected is None:
        return ReferenceResult(mode, 0, 0, 0, None, None, None,
                               reason="the run carries no gold actions (reference: gold)"), []
    users = any(x.requestor == "user" for x in expected)
    turn_of = _turns(events)
    made: list[int] = []            # event indices of the calls considered
    skip_failed = plan.state and plan.failed_writes == "ignore"
    compared = plan.compared
    failed_at: dict[tuple[str, str], int] = {}     # a failed write left out -> its first event
    for i, e in enumerate(events):
        if e.kind == "tool" and compared(e.tool) and (e.requestor == "agent" or users):
            if skip_failed and e.ok is False:
                failed_at.setdefault((e.tool, e.requestor), i)
            else:
                made.append(i)
    by_key: dict[tuple[str, str], list[int]] = {}
    for k, i in enumerate(made):
        e = events[i]
        by_key.setdefault((e.tool, e.requestor), []).append(k)
    edges: dict[int, list[int]] = {}
    near: dict[int, tuple[int, list[str], str]] = {}   # expected -> (made, diffs, how it failed)
    for x, exp in enumerate(expected):
        rules = plan.rules.get(exp.tool, {})
        fits, closest = [], None
        want = restrict(exp.args, exp.compare)
        for k in by_key.get((exp.tool, exp.requestor), ()):
            call = events[made[k]]
            got = restrict(call.args, exp.compare)
            same = matches(want, got, rules)
            failed = call.ok is not True and not plan.failed_ok
            if same and not failed:
                fits.append(k)
            rank = (0 if same else 1 + distance(want, got), failed)
            if closest is None or rank < closest[0]:
                closest = (rank, k, same, failed)
        edges[x] = fits
        if closest is not None:   # the texts only for the nearest call: messages are rare
            _, k, same, failed = closest
            call = events[made[k]]
            near[x] = (k, [] if same else diffs(want, restrict(call.args, exp.compare), rules),
                       "" if not failed else "failed" if call.ok is False else "got no result")
    if mode in _ORDERED:
        groups: list[list[int]] = []
        for x, exp in enumerate(expected):
            if not groups or expected[groups[-1][0]].group != exp.group:
                groups.append([])
            groups[-1].append(x)
        turns: list[list[int]] = []
        for k, i in enumerate(made):
            if not turns or turn_of[made[turns[-1][0]]] != turn_of[i]:
                turns.append([])
            turns[-1].append(k)
        pairs = pair_ordered(groups, turns, edges)
    else:
        pairs = pair_unordered(edges, {x: (e.tool, e.requestor) for x, e in enumerate(expected)})
    taken = {x: k for x, k in pairs}
    used = set(taken.values())
    out = []
    cited: set[int] = set()
    noun = "write " if plan.state else ""
    if mode in _NEEDS_ALL:
        for x, exp in enumerate(expected):
            if x in taken:
                continue
            want = call_text(exp.tool, exp.args)
            loose = [k for k in edges[x] if k not in used]
            if loose and mode in _ORDERED:
                k = loose[0]
                cited.add(k)
                out.append(violation("reference_order", sev["reference_order"], made[k],
                                     f"{noun}`{want}` made at event {made[k]}, out of the reference's order"))
                continue
            tried = failed_at.get((exp.tool, exp.requestor)) if x not in near else None
            if tried is not None:
                out.append(violation("reference", sev["reference"], tried,
                                     f"expected write `{want}`: the attempt at event {tried} failed, and "
                                     "a failed write changes nothing"))
                continue
            out.append(_missing(noun + f"`{want}`", near.get(x), made, sev, violation))
    if mode in _NO_EXTRA:
        extra = [i for k, i in enumerate(made)
                 if k not in used and k not in cited and events[i].requestor == "agent"]
        texts = call_texts([(events[i].tool, events[i].args) for i in extra]) if extra else []
        for i, text in zip(extra, texts, strict=True):
            if plan.state:
                how = "" if events[i].ok is True else " (it failed)" if events[i].ok is False else \
                    " (it got no result, so it may have changed state)"
                message = f"extra write `{text}` at event {i}{how}: the reference makes no such change"
            else:
                message = f"`{text}` at event {i} is not in the reference ({mode} allows no other calls)"
            out.append(violation("reference_extra", sev["reference_extra"], i, message))
    n_exp, n_made, m = len(expected), len(made), len(pairs)
    result = ReferenceResult(
        mode, n_exp, n_made, m, precision=m / n_made if n_made else None,
        recall=m / n_exp if n_exp else None,
        score=2 * m / (n_exp + n_made) if n_exp + n_made else 1.0,
        pairs=tuple(sorted((x, made[k]) for x, k in pairs)))
    return result, out


def _missing(want: str, near: tuple | None, made: list[int], sev: dict, violation: Callable):
    """The violation of an expected call not made; ``want`` is its text, quoted (and named a
    write in the state modes); ``near`` the nearest call of that tool, how it differs."""
    if near is None:
        return violation("reference", sev["reference"], None, f"expected {want}, never called")
    k, d, failed = near
    i = made[k]
    if d:
        tail = f" (and that call {failed})" if failed else ""
        text = f"expected {want}, got `{', '.join(d)}` at event {i}{tail}"
    elif failed:
        text = f"expected {want}, got it at event {i} but the call {failed}"
    else:
        text = (f"expected {want} once more: the matching call at event {i} already answers "
                "another expected call")
    return violation("reference", sev["reference"], i, text)
