"""``fixcheck`` (did a fix fix the first run's failures, beyond chance?) and ``consistency`` (C, p, κ).

Both read arms out of the ledger's tables (``trial_outcomes`` for the fix check, ``counts`` for
consistency; every run with ``stream=True``) and hand arrays to :func:`fluke.comparison.fix_check`
and :func:`fluke.comparison.consistency`.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "fix.db"))
>>> _ = ledger.ingest([Run(scenario=f"s{i}", trial=t, identity=Identity(model="m"),
...                        outcome=Outcome(passed=(i + t) % 3 == 0)) for i in range(6) for t in range(4)])
>>> check = fixcheck(ledger, "model=m@0", "model=m@1-3")
>>> check.check.candidate.rows, check.check.reference
(4, 'first run')
>>> c = consistency(ledger, ["model=m"])
>>> round(c.agents[0][1].p, 3)
0.667
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import InputError, UsageError
from ..format import fmt_interval, fmt_is, fmt_num, fmt_p, fmt_pct, fmt_share, fmt_share_interval, natural_key, plural
from ._document import Column, Span, Table, blank, line, note
from ._result import Result
from ._facts import counted_arm, trial_arm
from ._select import Arm, disjoint, select_arm
from ._unknowns import UnknownPolicy, check_unknown, outcome_arrays, unknown_fields, unknown_note


def _pct_interval(lo: float, hi: float) -> str:
    """The interval of a share printed in percent, in percent too."""
    return "—" if not (math.isfinite(lo) and math.isfinite(hi)) else fmt_interval(lo, hi, percent=True)


def _interval(lo: float, hi: float) -> str:
    return fmt_interval(lo, hi)


def _mean(m, *, test: bool = True) -> dict[str, Any] | None:
    """A clustered mean; ``test`` adds the p-value of "it is 0" (meaningful for differences only)."""
    if m is None:
        return None
    out = {"estimate": m.estimate, "low": m.low, "high": m.high, "se": m.se, "rows": m.rows,
           "clusters": m.clusters, "reason": m.reason, "method": m.method, "df": m.df}
    if test:
        out["pvalue"] = m.pvalue
    return out


def _rule(r) -> dict[str, Any] | None:
    if r is None:
        return None
    return {"fixed_once": _mean(r.fixed_once, test=False), "fixed_within": _mean(r.fixed_within, test=False),
            "tries": r.tries, "rows": r.rows, "inputs": r.inputs, "unmatched": r.unmatched}


def _share_cell(m) -> str:
    if m is None or not math.isfinite(m.estimate):
        return "—"
    low, high = max(0.0, m.low), min(1.0, m.high)
    if not (math.isfinite(low) and math.isfinite(high)):
        return fmt_share(round(m.estimate * m.rows), m.rows)
    return fmt_share_interval(round(m.estimate * m.rows), m.rows, low, high)  # share and interval, both in percent


@dataclass(frozen=True)
class FixCheckResult(Result):
    """The re-run rule on the candidate (and the control), per-input flags and the by-input sign test.

    ``check`` is a :class:`fluke.comparison.FixCheck`; ``chance`` the first run's
    :class:`fluke.comparison.Consistency` (what re-running would call "fixed" by pure chance).
    """

    kind = "fixcheck"
    first: Arm
    candidate: Arm
    control: Arm | None
    check: Any
    chance: Any
    within: int
    unknowns: tuple[int, int, int] = (0, 0, 0)    # runs of unknown outcome in first, candidate, control
    unknown_policy: str = "fail"
    streamed: bool = False                         # read run by run, not from the trial_outcomes table

    @property
    def tries(self) -> int:
        return self.check.candidate.tries or self.within

    def payload(self) -> dict[str, Any]:
        check, chance = self.check, self.chance
        return {
            "first": self.first.describe(), "candidate": self.candidate.describe(),
            "control": self.control.describe() if self.control else None, "within": self.within,
            "candidate_rule": _rule(check.candidate), "control_rule": _rule(check.control),
            "difference_once": _mean(check.difference_once), "difference_within": _mean(check.difference_within),
            "chance": {"p": chance.p, "c": chance.c, "kappa": chance.kappa,
                       "fixed_once_if_pure_chance": chance.chance_fixed_once,
                       "fixed_within3_if_pure_chance": chance.chance_fixed_within3,
                       "tries": check.candidate.tries,
                       "fixed_within_tries_if_pure_chance": 1 - chance.p ** self.tries},
            "flags": [dataclasses.asdict(f) for f in check.flags], "flags_against": check.reference,
            "by_input": dataclasses.asdict(check.by_input) if check.control is not None else None,
            "bar": None if check.bar is None else {**dataclasses.asdict(check.bar), "clears": check.clears_bar},
            "conditional_on": ("first-run failing episodes as rows; intervals clustered by input (cluster means "
                               "with t on G−1 when inputs hold equal rows, else CR2 with Bell–McCaffrey df; "
                               "Wilson score for shares)"),
            "statement": check.statement,
            **unknown_fields(sum(self.unknowns), self.unknown_policy),
            "unknowns_by_arm": dict(zip(("first", "candidate", "control"), self.unknowns, strict=True)),
        }

    def blocks(self) -> list:
        check, chance, within = self.check, self.chance, self.within
        out: list = []
        if check.difference_once is not None:
            for label, m in (("once", check.difference_once), (f"within {within}", check.difference_within)):
                out.append(line(Span(f"candidate − control, fixed {label}: ", "bold"),
                                f"{100 * m.estimate:+.1f} points [{100 * m.low:+.1f}, {100 * m.high:+.1f}], "
                                f"{fmt_is('p', m.pvalue, kind='p')} ({m.clusters} inputs)"))
        else:
            bar, cand = check.bar, check.candidate
            pure = (f"; were its failures pure chance it would be {fmt_pct(chance.chance_fixed_once, 1)} once "
                    f"(1 − p, the table's last row)" if not bar.method.startswith("pure chance") else "")
            out.append(line(Span("No control: nothing is called improved. ", "warn"),
                            f"A re-run of the unchanged agent would call {fmt_pct(bar.once, 1)} of its failures "
                            f"'fixed' once and {fmt_pct(bar.within, 1)} within {bar.tries} tries, from the "
                            f"{bar.method}{pure}; "
                            f"the first figure is the bar the candidate must clear."))
            low = cand.fixed_once.low if cand.fixed_once is not None else float("nan")
            high = cand.fixed_once.high if cand.fixed_once is not None else float("nan")
            at = fmt_pct(bar.once, 1)
            if high < bar.once:
                short = f"lies below the bar of {at}: its whole interval does"
            elif cand.fixed_once.estimate < bar.once:
                short = f"sits below the bar of {at}, though its interval reaches up to {fmt_pct(high, 1)}"
            else:
                short = f"is above the bar of {at} but not clearly: its interval reaches down to {fmt_pct(low, 1)}"
            verdict = {True: "clears the bar: its whole interval lies above it (a reason to run a control, "
                             "not a finding)",
                       False: short, None: "cannot be set against the bar"}[check.clears_bar]
            out.append(line(f"candidate: {_share_cell(cand.fixed_once)} fixed once, which {verdict}. Re-run the "
                            "unchanged agent the same way and pass it as --control to test the fix."))
        arms = [("candidate", check.candidate, self.candidate)]
        if check.control is not None:
            arms.append(("control", check.control, self.control))
        rows = [[name, arm.selector, _share_cell(rule.fixed_once),
                 _share_cell(rule.fixed_within) + (f" (within {plural(rule.tries, 'try', 'tries')})"
                                                   if rule.tries != self.tries else "")]
                for name, rule, arm in arms]
        k = self.tries
        header = f"fixed within {k}" + (f" ({within} asked, {k} recorded)" if k < within else "")
        rows.append(["pure chance", f"1 − p, 1 − p^{k}", fmt_pct(chance.chance_fixed_once, 1),
                     fmt_pct(1 - chance.p ** k, 1)])
        out.append(Table(f"re-run rule on the first run's {check.candidate.rows} failing episodes "
                         f"({check.candidate.inputs} inputs), 95% intervals clustered by input",
                         [Column("arm"), Column("selector", key=True), Column("fixed once", "right"),
                          Column(header, "right")], rows, limit=None))
        flagged = sorted((f for f in check.flags if f.flagged), key=lambda f: (f.qvalue, natural_key(f.input)))
        out.append(line(f"per input (against the {check.reference}): {len(flagged)} of {len(check.flags)} "
                        "flagged at q < 0.05"))
        if flagged:
            out.append(Table("", [Column("input", key=True), Column("candidate failed", "right"),
                                  Column(check.reference + " failed", "right"), Column("p", "right"),
                                  Column("q", "right")],
                             [[f.input, fmt_share(f.failures_candidate, f.trials_candidate),
                               fmt_share(f.failures_reference, f.trials_reference), fmt_p(f.pvalue),
                               Span(fmt_p(f.qvalue), "bad")] for f in flagged], more="inputs"))
        if check.control is not None:
            bi = check.by_input
            out.append(line(f"by input (sign test against the control): {bi.improved} improved, {bi.worsened} "
                            f"worsened, {bi.unchanged} unchanged; {fmt_is('p', bi.pvalue, kind='p')}"))
        read = ("read run by run" if self.streamed else
                "read from the ledger's trial_outcomes table, which keeps each run's outcome in trial order")
        out += [blank(), note(f"Conditional on: {self.payload()['conditional_on']}; {read}."), note(check.statement),
                unknown_note(sum(self.unknowns), self.unknown_policy)]
        return out


def fixcheck(ledger, first: str, candidate: str, *, control: str | None = None, scenario: str | None = None,
             within: int = 3, q: float = 0.05, unknown: str = "fail", stream: bool = False) -> FixCheckResult:
    """Check a fix: the first run's failing inputs, re-run on the candidate and on a control.

    ``first``, ``candidate`` and ``control`` are arm selectors (``@TRIALS`` picks trials); the
    three must select different runs. Without a control the "fixed" share cannot be told from
    failures that pass on a re-run by chance; the chance share is reported beside it. A run whose
    outcome is unknown is a failure (``unknown="fail"``) or is left out (``"exclude"``), in every arm.

    Each arm's outcomes are read from the ledger's ``trial_outcomes`` table (no run is read), one
    byte a run, and reduced a part of whole inputs at a time (:func:`read_fix_tally`); ``stream``
    reads every run instead (the same answer: the check that the table is right). Runs are taken
    per input in trial order (:func:`fix_arrays`).
    """
    from ..comparison import check_tally, fix_tally
    from ..comparison import consistency_from_counts as consistency_of

    unknown = check_unknown(unknown)
    if within < 1:
        raise UsageError(f"within={within!r} must be at least 1")
    if not 0 <= q <= 1:
        raise UsageError(f"q={q!r} must lie between 0 and 1")
    import numpy as np

    if not stream:
        arms, unknowns, tally, names = read_fix_tally(ledger, first, candidate, control, scenario=scenario,
                                                      unknown=unknown, within=within)
        arm_first, arm_cand, arm_ctrl = arms
    else:
        arm_first, first_a, u_first, n_first = fix_arrays(ledger, first, scenario=scenario, unknown=unknown,
                                                          stream=True)
        arm_cand, cand_a, u_cand, n_cand = fix_arrays(ledger, candidate, scenario=scenario, unknown=unknown,
                                                      stream=True)
        disjoint(arm_first, arm_cand)
        arm_ctrl, ctrl_a, u_ctrl, n_ctrl = (fix_arrays(ledger, control, scenario=scenario, unknown=unknown,
                                                       stream=True) if control else (None, None, 0, None))
        if arm_ctrl is not None:
            disjoint(arm_first, arm_cand, arm_ctrl)
        # one set of input names for the three arms; each arm's codes moved into it (no label per run)
        names = np.unique(np.concatenate([x for x in (n_first, n_cand, n_ctrl) if x is not None]))

        def recode(arrays, own):
            return (np.searchsorted(names, own)[arrays[0]], *arrays[1:]) if arrays is not None else None

        tally = fix_tally(recode(first_a, n_first), recode(cand_a, n_cand), recode(ctrl_a, n_ctrl), within=within,
                          names=names)
        unknowns = (u_first, u_cand, u_ctrl)
    if not tally.first_failures.any():
        raise InputError(None, first, "outcome.passed", "the first run has no failing inputs to re-run",
                         hint="pick a first run with failures, or a wider --scenario")
    check = check_tally(tally, names, q=q)
    present = tally.first_runs > 0
    return FixCheckResult(arm_first, arm_cand, arm_ctrl, check,
                          consistency_of(tally.first_failures[present], tally.first_runs[present]), within,
                          unknowns, unknown, stream)


def _input_label(scenario: str, condition: str) -> str:
    return f"{scenario}|{condition}" if condition else scenario


#: Runs of each arm the fix check reduces at a time (:func:`read_fix_tally`): its arrays are of that length.
PART_RUNS = 1_000_000


def _parts(sequences: list, limit: int):
    """The inputs of every arm's :class:`fluke.ledger.OutcomeSequences` side by side, in input
    order, in parts of about ``limit`` runs of each arm: lists holding, for each arm, ``(first
    input, end input, first run, end run)`` of the inputs in that part (None where it has none)."""
    keys = sorted(set().union(*(s.inputs for s in sequences)))
    # each arm's inputs, where they fall among all of them (both lists are in input order)
    place = {key: i for i, key in enumerate(keys)}
    import numpy as np

    at = [np.fromiter((place[k] for k in s.inputs), dtype=np.int64, count=len(s.inputs)) for s in sequences]
    ends = [np.cumsum(s.sizes) for s in sequences]
    runs = np.zeros(len(keys), dtype=np.int64)
    for where, s in zip(at, sequences, strict=True):
        runs[where] = np.maximum(runs[where], s.sizes)
    start = 0
    total = np.cumsum(runs)
    while start < len(keys):
        before = total[start - 1] if start else 0
        stop = max(int(np.searchsorted(total, before + limit, side="right")), start + 1)
        part = []
        for where, end in zip(at, ends, strict=True):
            lo, hi = np.searchsorted(where, [start, stop])
            part.append(None if lo == hi else (int(lo), int(hi), int(end[lo - 1]) if lo else 0, int(end[hi - 1])))
        yield part
        start = stop


def read_fix_tally(ledger, first: str, candidate: str, control: str | None = None, *, scenario: str | None = None,
                   unknown: str = "fail", within: int = 3):
    """``(arms, unknowns, tally, names)``: each of the fix check's arms read as its inputs' outcome
    sequences, one byte a run (:meth:`fluke.ledger.Ledger.outcome_sequences`), then reduced side
    by side a part of whole inputs at a time (:data:`PART_RUNS` runs of each arm) to a
    :class:`fluke.comparison.FixTally`, so the fix check's arrays never hold a whole arm;
    ``names`` are the inputs (``scenario`` or ``scenario|condition``) sorted, one per entry of the
    tally. The errors are those of :func:`fix_arrays` (an arm with no runs; two arms selecting
    the same runs), in the same order.

    >>> import os, tempfile
    >>> from fluke.ledger import open_ledger
    >>> from fluke.record import Outcome, Run
    >>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "rt.db"))
    >>> _ = ledger.ingest([Run(scenario=s, trial=t, outcome=Outcome(passed=t > 1)) for s in "ab" for t in range(4)])
    >>> arms, unknowns, tally, names = read_fix_tally(ledger, "@0", "@1-3")
    >>> names.tolist(), tally.first_failures.tolist(), tally.candidate_once.tolist(), arms[1].size
    (['a', 'b'], [1, 1], [0, 0], 6)
    """
    import numpy as np

    from ..comparison import FixTally, fix_tally
    from ._facts import trial_arm

    texts = [first, candidate] + ([control] if control else [])
    arms, sequences = [], []
    for i, text in enumerate(texts):
        arm, got = trial_arm(ledger, text, scenario=scenario, sequences=True)
        arms.append(arm)
        sequences.append(got)
        if i:
            disjoint(*arms)
    unknowns = tuple(int((s.outcome == 2).sum()) for s in sequences)
    labels = [np.asarray([_input_label(*k) for k in s.inputs], dtype=str) for s in sequences]
    tallies, named = [], []
    for part in _parts(sequences, PART_RUNS):
        names = np.unique(np.concatenate([lab[p[0]:p[1]] for lab, p in zip(labels, part, strict=True) if p]))
        arrays = []
        for s, lab, p in zip(sequences, labels, part, strict=True):
            if p is None:
                arrays.append((np.zeros(0, np.intp), np.zeros(0, bool), np.zeros(0, float)))
                continue
            lo, hi, start, end = p
            sizes = s.sizes[lo:hi]
            codes = np.repeat(np.searchsorted(names, lab[lo:hi]), sizes)
            # each run's place within its input: the order the sequences already give
            order = (np.arange(end - start) - np.repeat(np.cumsum(sizes) - sizes, sizes)).astype(float)
            outcome = s.outcome[start:end]
            keep = outcome != 2 if UnknownPolicy.of(unknown).excludes else slice(None)
            arrays.append((codes[keep], outcome[keep] != 0, order[keep]))
        arrays += [None] * (3 - len(arrays))
        tallies.append(fix_tally(*arrays, within=within, names=names))
        named.append(names)
    names = np.concatenate(named)
    order = np.argsort(names, kind="stable")
    names = names[order]
    if names.size > 1 and not bool(np.all(names[1:] > names[:-1])):
        # two (scenario, condition) pairs printed as one input ("a|b=1" and ("a", "b=1")) in
        # different parts: read the arms whole, which counts them as one input, as the runs do
        got = [fix_arrays(ledger, text, scenario=scenario, unknown=unknown)[1:] for text in texts]
        names = np.unique(np.concatenate([g[2] for g in got]))
        coded = [(np.searchsorted(names, g[2])[g[0][0]], *g[0][1:]) for g in got] + [None] * (3 - len(got))
        tally = fix_tally(*coded, within=within, names=names)
    else:
        tally = FixTally.joined(tallies).take(order)
    return (tuple(arms) + (None,) * (3 - len(arms)), unknowns + (0,) * (3 - len(unknowns)), tally, names)


def fix_arrays(ledger, text: str, *, scenario: str | None = None, unknown: str = "fail", stream: bool = False):
    """``(arm, (inputs, failed, order), unknowns, names)`` of one arm selector, as the fix check takes
    them: one entry per run (an unknown outcome a failure, or left out under ``unknown="exclude"``),
    ordered by input, then trial, then version, and runs tied on all three in the order the ledger
    gives them (:meth:`fluke.ledger.Ledger.runs`: ingest, then content key). ``inputs`` are integer
    codes into ``names``, the arm's inputs (``scenario`` or ``scenario|condition``) sorted.

    Read from the ledger's ``trial_outcomes`` table, or with ``stream`` from every run (the
    arrays are then equal: ``tests/analysis/test_counted.py``).

    >>> import os, tempfile
    >>> from fluke.ledger import open_ledger
    >>> from fluke.record import Outcome, Run
    >>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "fa.db"))
    >>> _ = ledger.ingest([Run(scenario=s, trial=t, outcome=Outcome(passed=t == 1)) for t in (2, 1, 0) for s in "ba"])
    >>> arm, (inputs, failed, order), _, names = fix_arrays(ledger, "@0-1")
    >>> names[inputs].tolist(), failed.tolist(), order.tolist()
    (['a', 'a', 'b', 'b'], [True, False, True, False], [0.0, 1.0, 0.0, 1.0])
    """
    import numpy as np

    if stream:
        arm = select_arm(ledger, text, scenario=scenario)
        inputs, failed, order, unknowns = outcome_arrays(arm.runs, unknown)
        versions = [r.version for r in arm.runs if UnknownPolicy.of(unknown).keeps(r.outcome.passed)]
        names, codes = np.unique(inputs, return_inverse=True)
        codes = codes.reshape(-1)
        # stable: runs tied on input, trial and version keep the order they streamed in
        at = np.lexsort((np.unique(np.asarray(versions, dtype=str), return_inverse=True)[1].reshape(-1), order,
                         codes))
        return arm, (codes[at], failed[at], order[at]), unknowns, names
    arm, got = trial_arm(ledger, text, scenario=scenario)
    known = got.outcome != 2
    unknowns = int(len(got) - known.sum())
    keep = known if UnknownPolicy.of(unknown).excludes else slice(None)
    labels = np.asarray([f"{s}|{c}" if c else s for s, c in got.inputs], dtype=str)
    names, rank = np.unique(labels, return_inverse=True)    # the table's inputs are distinct
    rank = rank.reshape(-1)
    inputs, failed, order = rank[got.input[keep]], got.outcome[keep] != 0, got.trial[keep].astype(float)
    # The table gives runs by (scenario, condition), trial, version (hash order), then as stored:
    # the fix check's order already, unless "scenario|condition" sorts another way than the pair.
    if (np.diff(rank) < 0).any():
        at = np.lexsort((got.version[keep], order, inputs))
        inputs, failed, order = inputs[at], failed[at], order[at]
    return arm, (inputs, failed, order), unknowns, names


@dataclass(frozen=True)
class ConsistencyResult(Result):
    """Failure consistency per agent: ``agents`` holds ``(arm, Consistency)`` in the order asked."""

    kind = "consistency"
    agents: tuple[tuple[Arm, Any], ...]
    unknowns: tuple[int, ...] = ()      # per agent: runs whose outcome is unknown
    unknown_policy: str = "fail"

    def payload(self) -> dict[str, Any]:
        per = self.unknowns or (0,) * len(self.agents)
        return {
            **unknown_fields(sum(per), self.unknown_policy),
            "agents": [
                {
                    **arm.describe(),
                    "c": c.c,
                    "c_interval": list(c.c_interval),
                    "p": c.p,
                    "p_interval": list(c.p_interval),
                    "kappa": c.kappa,
                    "kappa_interval": list(c.kappa_interval),
                    "failures": c.failures,
                    "trials": c.trials,
                    "scenarios": c.scenarios,
                    "scenarios_failed": c.scenarios_failed,
                    "fixed_once_if_pure_chance": c.chance_fixed_once,
                    "fixed_within3_if_pure_chance": c.chance_fixed_within3,
                    "reason": c.reason,
                    "unknowns": u,
                }
                for (arm, c), u in zip(self.agents, per, strict=True)
            ],
            "conditional_on": "intervals clustered by scenario (CR1, t on G−1)",
        }

    def blocks(self) -> list:
        right = "right"
        cols = [Column("agent", key=True), Column("runs", right), Column("scenarios", right),
                Column("p (fail)", right), Column("p 95%", right), Column("C (fail again)", right),
                Column("C 95%", right), Column("κ", right), Column("κ 95%", right),
                Column("chance 'fixed' once / in 3", right)]
        rows = [[arm.selector, str(c.trials), str(c.scenarios), fmt_share(c.failures, c.trials),
                 _pct_interval(*c.p_interval), fmt_num(c.c), _interval(*c.c_interval), fmt_num(c.kappa),
                 _interval(*c.kappa_interval),
                 f"{fmt_pct(c.chance_fixed_once, 1)} / {fmt_pct(c.chance_fixed_within3, 1)}"]
                for arm, c in self.agents]
        out: list = [Table("failure consistency (95% intervals clustered by scenario)", cols, rows, more="agents")]
        out += [line(f"{arm.selector}: {c.reason}", style="warn") for arm, c in self.agents if c.reason]
        out += [note(arm.line()) for arm, _ in self.agents]
        out.append(note("κ = 0: failures are pure chance (a re-run 'fixes' 1 − p); κ = 1: an input that failed "
                        "always fails. Conditional on the scenarios and trials listed; intervals clustered by "
                        "scenario (CR1, t on G−1)."))
        out.append(unknown_note(sum(self.unknowns), self.unknown_policy))
        return out


def consistency(ledger, agents: Sequence[str], *, scenario: str | None = None,
                unknown: str = "fail", stream: bool = False) -> ConsistencyResult:
    """C = P(fail again | failed once), p and κ for each arm selector in ``agents``; a run whose
    outcome is unknown is a failure (``unknown="fail"``) or is left out (``"exclude"``).

    They need only failures and trials per input, read from the ledger's counts, or for an arm
    that picks trials (``@0-4``) from its ``trial_outcomes`` table; with ``stream`` every arm
    reads its runs instead (the same answer: the check that the tables are right).
    """
    from ..comparison import consistency_from_counts as consistency_of
    from ..comparison import failure_counts

    unknown = check_unknown(unknown)
    if isinstance(agents, str):
        agents = [agents]
    if not agents:
        raise UsageError("agents is empty: name at least one arm selector")
    rows, unknowns = [], []
    for text in agents:
        arm = None if stream else counted_arm(ledger, text, scenario=scenario)
        if arm is not None:     # no trials picked: the counts tell it all
            _, f, n = arm.counted.failure_counts(unknown)
            u = arm.counted.pass_counts(unknown)[1]
        elif not stream:        # trials picked: their outcomes, from the trial table
            arm, (inputs, failed, _), u, _ = fix_arrays(ledger, text, scenario=scenario, unknown=unknown)
            _, f, n = failure_counts(inputs, failed)
        else:
            arm = select_arm(ledger, text, scenario=scenario)
            inputs, failed, _, u = outcome_arrays(arm.runs, unknown)
            _, f, n = failure_counts(inputs, failed)
        rows.append((arm, consistency_of(f, n)))
        unknowns.append(u)
    return ConsistencyResult(tuple(rows), tuple(unknowns), unknown)
