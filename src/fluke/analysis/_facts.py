"""Each run reduced, as it streams, to what the verbs that read runs need of it: one reduction.

``compare``, ``fixcheck`` and ``consistency`` (an arm's runs), ``contrast`` (the runs in
scope) and ``report`` (its one pass over the runs) all read a stored run through
:class:`RunFacts`, made by :func:`reduce_body` from the stored JSON or :func:`reduce_run` from
a :class:`fluke.record.Run`. It keeps the run's scenario, trial, hash, version and label, its
sampling unit, condition and tags, its outcome (passed, reward, died_at, label), and of its
events their number, the last one and the one at each step it may have died at (``died_at``,
or its first hard violation under a grading spec), in a few hundred bytes whatever the run's
size. It reads like a :class:`fluke.record.Run` for those fields, so the statistics in
:mod:`fluke.comparison` (``compare_versions``, ``outcome_arrays``) take it unchanged and give
the same answer. Outcomes, conditions, tags and the handful of kept events are shared between
runs of the same shape, so a million runs hold a million small objects, not twenty million
events. A fact a verb newly needs of every run is one slot here and one line in each of the
two functions.

>>> from fluke.record import Outcome, Run, ToolCall, UserMessage
>>> run = Run(scenario="s", trial=2, unit="u1", condition={"temp": 0}, outcome=Outcome(passed=False, reward=0.5),
...           events=[UserMessage(text="hi " * 1000), ToolCall(tool="refund", ok=False)])
>>> facts = reduce_run(run)
>>> facts.scenario, facts.trial, facts.outcome.passed, len(facts.events), facts.events[-1].tool
('s', 2, False, 2, 'refund')
>>> facts.hash == run.hash, facts.condition_key(), facts.condition, facts.sampling_unit, facts.outcome.reward
(True, 'temp=0', {'temp': 0}, 'u1', 0.5)

:func:`reduce_body` gives the same from a run's stored JSON without building the Run (several
times faster; a test holds the two equal on real runs):

>>> import orjson
>>> from fluke.record import content_json
>>> body = content_json(run)
>>> same = reduce_body(body, orjson.loads(body))
>>> (same.hash, same.version, same.events[-1].tool, len(same.events)) == (run.hash, run.version, 'refund', 2)
True

Where a verb needs only counts, :func:`counted_arm` reads an arm from the ledger's ``counts``
and ``steps`` tables instead (no run is read), as :class:`CountedArm`:

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "facts.db"))
>>> _ = ledger.ingest([run, Run(scenario="s", trial=3, condition={"temp": 0}, outcome=Outcome(passed=None))])
>>> arm = counted_arm(ledger, run.version[:8], places=True)
>>> arm.size, arm.counted.pass_counts("fail"), arm.counted.pass_counts("exclude")
(2, ({('s', 'temp=0'): (0, 2)}, 1), ({('s', 'temp=0'): (0, 1)}, 1))
>>> arm.counted.places
{('s', 'temp=0', 'failed call', 1, 'refund'): 1}
>>> counted_arm(ledger, run.version[:8] + "@0-1") is None    # trials are read from the runs
True
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Mapping

from ..policies import UnknownPolicy

# fluke.record's pydantic models are imported where a run is reduced: the counted arms (what
# ``compare`` reads from the tables) never build one.

#: Shared stand-ins: one outcome per (passed, reward, died_at, label), one event per (tool, ok) or kind,
#: one condition mapping per condition key, one tuple per set of tags.
_OUTCOMES: dict[tuple, "_Outcome"] = {}
_CONDITIONS: dict[str, dict] = {}
_TAGS: dict[tuple, tuple] = {}
_MARKS: dict[tuple, Any] = {}
_EVENTS: dict[tuple, "_Events"] = {}
_STRINGS: dict[str, str] = {}
_IDENTITIES: dict[bytes, tuple[str, str]] = {}


class _Outcome:
    __slots__ = ("passed", "reward", "died_at", "label")

    def __init__(self, passed, reward, died_at, label):
        self.passed, self.reward, self.died_at, self.label = passed, reward, died_at, label


class _Kind:
    """A non-tool event reduced to its kind (all the comparison reads of it)."""

    __slots__ = ("kind",)

    def __init__(self, kind: str):
        self.kind = kind


def _mark_of(doc: dict) -> Any:
    """The stand-in of a stored event (a JSON object)."""
    if doc.get("kind") == "tool":
        key = ("tool", doc.get("tool"), doc.get("ok"))
        if key not in _MARKS:
            from ..record import ToolCall

            _MARKS[key] = ToolCall.model_construct(tool=doc.get("tool"), ok=doc.get("ok"))
        return _MARKS[key]
    key = ("kind", doc.get("kind"))
    if key not in _MARKS:
        _MARKS[key] = _Kind(doc.get("kind"))
    return _MARKS[key]


def _mark(event) -> Any:
    from ..record import ToolCall

    if isinstance(event, ToolCall):
        key = ("tool", event.tool, event.ok)
        if key not in _MARKS:
            _MARKS[key] = ToolCall.model_construct(tool=event.tool, ok=event.ok)
        return _MARKS[key]
    key = ("kind", event.kind)
    if key not in _MARKS:
        _MARKS[key] = _Kind(event.kind)
    return _MARKS[key]


class _Events:
    """The length of a run's event list and the few events a comparison looks at."""

    __slots__ = ("size", "kept")

    def __init__(self, size: int, kept: tuple):
        self.size, self.kept = size, dict(kept)

    def __len__(self) -> int:
        return self.size

    def __bool__(self) -> bool:
        return self.size > 0

    def __getitem__(self, index: int):
        if index < 0:
            index += self.size
        return self.kept[index]


def _intern(text: str) -> str:
    return _STRINGS.setdefault(text, text)


class RunFacts:
    """One run reduced: ``scenario``, ``trial``, ``hash``, ``version``, ``label`` (the identity
    label of its version), ``sampling_unit`` (its declared unit, else its scenario), ``condition``
    (the mapping; :meth:`condition_key` its key), ``tags``, ``outcome`` (passed, reward, died_at,
    label) and ``events`` (its length, the last event and the event at each step it may have died at)."""

    __slots__ = ("scenario", "trial", "hash", "version", "label", "sampling_unit", "condition", "tags", "outcome",
                 "events", "_condition")

    def __init__(self, scenario, trial, run_hash, version, label, sampling_unit, condition, tags, outcome, events):
        self.scenario, self.trial, self.hash, self.version = scenario, trial, run_hash, version
        self.label, self.sampling_unit, self.tags = label, sampling_unit, tags
        self.outcome, self.events = outcome, events
        self._condition, self.condition = condition

    def condition_key(self) -> str:
        return self._condition

    def __repr__(self) -> str:
        return f"RunFacts({self.scenario!r}, trial={self.trial}, passed={self.outcome.passed})"


def _shape(size: int, kept: tuple) -> _Events:
    ekey = (size, tuple((i, id(m)) for i, m in kept))
    shape = _EVENTS.get(ekey)
    if shape is None:
        shape = _EVENTS[ekey] = _Events(size, kept)
    return shape


def _outcome(passed, reward, died_at, label) -> _Outcome:
    okey = (passed, reward, died_at, label)
    outcome = _OUTCOMES.get(okey)
    if outcome is None:
        outcome = _OUTCOMES[okey] = _Outcome(*okey)
    return outcome


def _condition(condition: Mapping) -> tuple[str, dict]:
    """``(key, mapping)`` of a condition, the mapping shared by every run with that key."""
    from ..record import condition_key

    key = condition_key(condition) if condition else ""
    shared = _CONDITIONS.get(key)
    if shared is None:
        shared = _CONDITIONS[_intern(key)] = dict(condition or {})
    return _intern(key), shared


def _tags(tags) -> tuple:
    if not tags:
        return ()
    key = tuple(tags)
    return _TAGS.setdefault(key, key)


def identity_names(ident: dict) -> tuple[str, str]:
    """``(version hash, label)`` of a stored identity (a JSON object), worked out once per identity."""
    ikey = repr(sorted(ident.items())).encode()
    named = _IDENTITIES.get(ikey)
    if named is None:
        from ..record import Identity

        identity = Identity.model_validate(ident)
        named = _IDENTITIES[ikey] = (_intern(identity.version), _intern(identity.label()))
    return named


def _kept(size: int, died_at, hard, run_hash: str) -> list[int]:
    """The steps whose event a reduction keeps: the last, ``died_at`` and the first hard violation."""
    steps = {size - 1} if size else set()
    if died_at is not None:
        steps.add(died_at)
    if hard is not None and hard.get(run_hash) is not None:
        steps.add(int(hard[run_hash]))
    return sorted(i for i in steps if 0 <= i < size)


def reduce_body(body: str | bytes, doc: dict, hard: Mapping[str, int | None] | None = None) -> RunFacts:
    """:func:`reduce_run` of the run stored as ``body`` (its JSON; ``doc`` is it parsed), without the Run."""

    raw = body.encode() if isinstance(body, str) else body
    run_hash = hashlib.sha256(raw).hexdigest()
    events = doc.get("events") or ()
    size = len(events)
    outcome = doc.get("outcome") or {}
    died_at = outcome.get("died_at")
    kept = tuple((i, _mark_of(events[i])) for i in _kept(size, died_at, hard, run_hash))
    named = identity_names(doc.get("identity") or {})
    scenario = _intern(doc["scenario"])
    unit = doc.get("unit")
    return RunFacts(scenario, doc.get("trial", 0), run_hash, named[0], named[1],
                    scenario if unit is None else _intern(unit), _condition(doc.get("condition")),
                    _tags(doc.get("tags")),
                    _outcome(outcome.get("passed"), outcome.get("reward"), died_at, outcome.get("label")),
                    _shape(size, kept))


def reduce_run(run, hard: Mapping[str, int | None] | None = None) -> RunFacts:
    """``run`` reduced to :class:`RunFacts`; ``hard`` (hash → first hard violation) names one more
    step whose event is kept (see :func:`fluke.comparison.survival_data`)."""
    events = run.events
    run_hash = run.hash
    o = run.outcome
    kept = tuple((i, _mark(events[i])) for i in _kept(len(events), o.died_at, hard, run_hash))
    identity = run.identity
    return RunFacts(_intern(run.scenario), run.trial, run_hash, _intern(identity.version), _intern(identity.label()),
                    _intern(run.sampling_unit), _condition(run.condition), _tags(run.tags),
                    _outcome(o.passed, o.reward, o.died_at, o.label), _shape(len(events), kept))


def scoped_runs(ledger, version: str | None, condition: str | None) -> list[RunFacts]:
    """The runs of the versions ``version`` names (all when ``None``) with ``condition``, each
    reduced as it streams (:func:`reduce_body`); never empty.

    >>> import os, tempfile
    >>> from fluke.ledger import open_ledger
    >>> from fluke.record import Outcome, Run
    >>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "scoped.db"))
    >>> _ = ledger.ingest([Run(scenario="s", trial=t, unit="u", outcome=Outcome(passed=t == 0)) for t in range(3)])
    >>> [(r.sampling_unit, r.trial, r.outcome.passed) for r in scoped_runs(ledger, None, None)]
    [('u', 0, True), ('u', 1, False), ('u', 2, False)]
    """
    import orjson

    from ..errors import InputError
    from ..format import fluke_command
    from ._budget import check_budget
    from ._select import FACT_BYTES, require_runs, select_versions

    require_runs(ledger)
    chosen = select_versions(ledger, version)
    check_budget(ledger.count(version=chosen), "the runs in scope", FACT_BYTES,
                 hint="narrow the scope with --version or --condition")
    runs = [reduce_body(body, orjson.loads(body)) for body, _ in ledger.run_bodies(version=chosen, condition=condition)]
    if not runs:
        raise InputError(ledger.url, None, None, "no runs match",
                         hint="loosen --version/--condition; see what the ledger holds with: "
                              f"{fluke_command(ledger, 'summary')}")
    return runs


@dataclass(frozen=True)
class CountedArm:
    """An arm as the ledger counts it: ``cells`` maps ``(scenario, condition)`` to ``(trials,
    passes, unknowns)`` summed over the arm's versions, ``places`` maps ``(scenario, condition,
    cause, step, event)`` to runs (the ``steps`` table; empty unless asked for)."""

    cells: dict[tuple[str, str], tuple[int, int, int]]
    places: dict[tuple, int]

    def pass_counts(self, unknown: str) -> tuple[dict[tuple[str, str], tuple[int, int]], int]:
        """``({(scenario, condition): (passes, trials)}, unknowns)`` under the unknown-outcome
        policy, as :func:`fluke.comparison.pass_counts` gives it from the runs (a cell whose runs
        are all left out is absent)."""
        out, unknowns = {}, 0
        for key, (n, k, u) in self.cells.items():
            unknowns += u
            trials, _ = UnknownPolicy.of(unknown).apply(n, k, u)
            if trials:
                out[key] = (k, trials)
        return out, unknowns

    def failure_counts(self, unknown: str):
        """``(inputs, failures, trials)`` per input (scenario, with the condition) under the policy,
        as :func:`fluke.comparison.failure_counts` gives it from the runs: inputs in sorted order."""
        import numpy as np

        per: dict[str, list[int]] = {}
        for (scenario, condition), (passes, trials) in self.pass_counts(unknown)[0].items():
            row = per.setdefault(f"{scenario}|{condition}" if condition else scenario, [0, 0])
            row[0] += trials - passes
            row[1] += trials
        names = np.array(sorted(per), dtype=str)
        return (names, np.array([per[n][0] for n in names.tolist()], dtype=int),
                np.array([per[n][1] for n in names.tolist()], dtype=np.int64))


def counted_arm(ledger, text: str, *, scenario: str | None = None, condition: str | None = None,
                places: bool = False):
    """The arm ``text`` names, read from the ledger's counts (and with ``places`` its steps), or
    None when the selector picks trials (``@0-4``), which only the runs themselves can tell.

    The versions, labels and errors are those of :func:`fluke.analysis.select_arm`.
    """
    from ..errors import SelectorError
    from ._select import Arm, versions

    selector, _, trials_text = text.partition("@")
    if trials_text:
        return None
    chosen = _chosen(ledger, selector)
    cells: dict[tuple[str, str], list[int]] = {}
    seen: set[str] = set()
    for row in ledger.counts(version=chosen, scenario=scenario, condition=condition):
        if row.trials:
            seen.add(row.version)
            cell = cells.setdefault((row.scenario, row.condition), [0, 0, 0])
            cell[0] += row.trials
            cell[1] += row.passes
            cell[2] += row.unknowns
    if not cells:
        raise SelectorError(f"{text!r} names {len(chosen)} version(s) but no runs"
                            + (f" in scenario {scenario!r}" if scenario else ""))
    where = ledger.places(version=chosen, scenario=scenario, condition=condition) if places else {}
    label = {i.version: i.label() for i in versions(ledger)}
    kept = tuple(v for v in chosen if v in seen)
    counted = CountedArm({k: (n, p, u) for k, (n, p, u) in cells.items()}, where)
    return Arm(text, kept, tuple(label[v] for v in kept), None, (), None, counted,
               sum(n for n, _, _ in counted.cells.values()))


def _chosen(ledger, selector: str) -> list[str]:
    """The versions an arm's selector names, as :func:`fluke.analysis.select_arm` picks them."""
    from ._select import require_runs

    infos = require_runs(ledger)
    chosen = ledger.select_versions(selector) if selector else [i.version for i in infos]
    if not chosen:
        ledger.resolve_version(selector)  # raises, listing what the ledger holds
    return chosen


#: What the fix check holds per run read from ``trial_outcomes`` (the arrays it builds), for the memory check.
OUTCOME_BYTES = 200


def trial_arm(ledger, text: str, *, scenario: str | None = None, sequences: bool = False):
    """``(arm, outcomes)``: the arm ``text`` names (trials picked with ``@``) and its runs'
    :class:`fluke.ledger.TrialOutcomes`, read from the ledger's ``trial_outcomes`` table (no run
    is read); with ``sequences``, its :class:`fluke.ledger.OutcomeSequences` instead (each input's
    outcomes in trial order, what the fix check streams). The arm, its versions and the errors are
    those of :func:`fluke.analysis.select_arm`.

    >>> import os, tempfile
    >>> from fluke.ledger import open_ledger
    >>> from fluke.record import Outcome, Run
    >>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "ta.db"))
    >>> _ = ledger.ingest([Run(scenario="s", trial=t, outcome=Outcome(passed=t == 1)) for t in range(4)])
    >>> arm, got = trial_arm(ledger, "@1-2")
    >>> arm.trials, arm.size, got.trial.tolist(), got.outcome.tolist()
    ((1, 2), 2, [1, 2], [0, 1])
    """
    from ..errors import SelectorError
    from ._budget import check_budget
    from ._select import Arm, parse_trials, versions

    selector, _, trials_text = text.partition("@")
    chosen = _chosen(ledger, selector)
    trials = parse_trials(trials_text, text) if trials_text else None
    check_budget(ledger.count(version=chosen, scenario=scenario), f"the arm {text!r}",
                 (ledger.SEQUENCE_BYTES or OUTCOME_BYTES) if sequences else OUTCOME_BYTES,
                 hint="narrow the arm to fewer versions, trials (@0-4) or scenarios (--scenario)")
    read = ledger.outcome_sequences if sequences else ledger.trial_outcomes
    got = read(version=chosen, scenario=scenario, trials=trials)
    if not len(got):
        raise SelectorError(f"{text!r} names {len(chosen)} version(s) but no runs"
                            + (f" in scenario {scenario!r}" if scenario else "")
                            + (f" with trials {sorted(trials)}" if trials else ""))
    label = {i.version: i.label() for i in versions(ledger)}
    kept = tuple(v for v in chosen if v in set(got.versions))
    return Arm(text, kept, tuple(label[v] for v in kept), tuple(sorted(trials)) if trials is not None else None,
               (), size=len(got)), got
