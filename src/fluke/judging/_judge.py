"""Judging through fluke: every run blinded, asked K times, every judgment kept beside the run.

The judged copy of a run carries the judge in its identity's ``grader`` and the judge's
aggregated label as its outcome, so it is a different version from the unjudged run and every
comparison verb reads it like any other run. The judgments are stored in the ledger's grades
table under the judge's digest (one row per run: the K labels and their aggregate), and the
judge's configuration as a ``judge`` document, so a stored judgment can always be traced to the
exact prompt that made it.

>>> from fluke.record import Run, Identity, Outcome
>>> runs = [Run(scenario=f"s{i}", identity=Identity(model="agent"), outcome=Outcome(passed=i % 2 == 0))
...         for i in range(4)]
>>> config = JudgeConfig(model="fake", prompt="PASS or FAIL?", endpoint="fake", replicates=3,
...                      target={"sensitivity": 1.0, "specificity": 1.0})
>>> result = judge_runs(runs, config, FakeJudge.from_runs(runs, sensitivity=1.0, specificity=1.0))
>>> [j.labels for j in result.judgments][:2], [r.outcome.passed for r in result.judged_runs()]
([[True, True, True], [False, False, False]], [True, False, True, False])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from ..record import Outcome, Run
from ._blind import balanced_orders, blind_view
from ._config import JUDGE_KIND, JudgeConfig
from ._judges import FakeJudge, Judge  # noqa: F401 - FakeJudge for the doctests


@dataclass(frozen=True)
class Judgment:
    """The K labels one judge gave one run, and their aggregate by the declared rule."""

    run_hash: str
    labels: list[bool | None]
    label: bool | None

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run_hash, "labels": self.labels, "label": self.label}


@dataclass(frozen=True)
class JudgedRuns:
    """The runs, the judge that labelled them and every judgment (in the runs' order)."""

    config: JudgeConfig
    runs: list[Run]
    judgments: list[Judgment]
    stored: int = 0

    def judged_runs(self) -> list[Run]:
        """Each run as this judge saw it: the judge in its grader, its label as the outcome."""
        out = []
        for run, judgment in zip(self.runs, self.judgments, strict=True):
            # rebuilt, not model_copy: a copy would keep the original's cached hash
            body = run.model_dump()
            body.update(identity=self.config.judged(run.identity).model_dump(),
                        outcome=Outcome(passed=judgment.label).model_dump())
            out.append(Run.model_validate(body))
        return out

    def replicate_matrix(self) -> list[list[bool | None]]:
        """Runs x replicates: the input of the self-consistency statistics."""
        return [list(j.labels) for j in self.judgments]


def judge_runs(runs: Iterable[Run], config: JudgeConfig, judge: Judge, *, ledger: Any = None) -> JudgedRuns:
    """Ask ``judge`` about every run, ``config.replicates`` times, shown only its blinded view.

    With a ``ledger``, the configuration is stored as a ``judge`` document and the judgments in
    its grades table under the judge's digest; a run already judged by this exact judge is read
    back, not asked again (so a rerun costs nothing and cannot change a stored verdict).
    """
    runs = list(runs)
    stored: dict[str, dict] = {}
    if ledger is not None:
        ledger.put_document(JUDGE_KIND, config.model_dump(mode="json"))
        stored = ledger.grades(config.digest)
    judgments, new = [], []
    for run in runs:
        if run.hash in stored:
            body = stored[run.hash]
            judgments.append(Judgment(run.hash, list(body["labels"]), body["label"]))
            continue
        view = blind_view(run)
        labels = [judge.label(view, r) for r in range(config.replicates)]
        judgment = Judgment(run.hash, labels, config.aggregate(labels))
        judgments.append(judgment)
        new.append((run.hash, dict(judgment.to_dict(), judge=config.digest)))
    count = ledger.put_grades(config.digest, new) if ledger is not None else 0
    return JudgedRuns(config, runs, judgments, count)


@dataclass(frozen=True)
class PairVerdict:
    """One pair judged K times in balanced order: how often each side won, and which slot won.

    ``slots`` lists, per replicate, the slot the judge chose ("first", "second" or "tie"), so
    positional bias is read from the same judgments as the verdict.
    """

    a: str
    b: str
    a_wins: int
    b_wins: int
    ties: int
    slots: list[str] = field(default_factory=list)

    @property
    def winner(self) -> str:
        """"a", "b" or "tie": the side that won more replicates."""
        return "a" if self.a_wins > self.b_wins else "b" if self.b_wins > self.a_wins else "tie"


def judge_pairs(pairs: Sequence[tuple[Run, Run]], config: JudgeConfig, judge: Judge, *,
                balance: bool = True) -> list[PairVerdict]:
    """Ask ``judge`` which run of each pair is better, ``config.replicates`` times.

    With ``balance`` (the default) the two outputs swap slots every other judgment, counted
    across pairs and replicates, so each side sits first half of the time and a judge's taste
    for the first slot cancels out of the verdict; ``balance=False`` always shows ``a`` first
    (kept to measure what balancing removes).

    >>> from fluke.record import Run, Outcome
    >>> good = [Run(scenario=f"s{i}", outcome=Outcome(passed=True)) for i in range(20)]
    >>> bad = [Run(scenario=f"s{i}", outcome=Outcome(passed=False)) for i in range(20)]
    >>> cfg = JudgeConfig(model="fake", prompt="which is better?", endpoint="fake", pairwise=True)
    >>> always_first = FakeJudge.from_runs(good + bad, first_slot=1.0)
    >>> [v.winner for v in judge_pairs(list(zip(bad, good, strict=True)), cfg, always_first)][:4]
    ['a', 'b', 'a', 'b']
    """
    verdicts, turn = [], 0
    for a, b in pairs:
        va, vb = blind_view(a), blind_view(b)
        wins = {"a": 0, "b": 0, "tie": 0}
        slots = []
        for r, swap in enumerate(balanced_orders(config.replicates, turn)):
            swap = swap and balance
            first, second = (vb, va) if swap else (va, vb)
            slot = judge.prefer(first, second, r)
            slots.append(slot)
            side = "tie" if slot == "tie" else ("a" if (slot == "first") != swap else "b")
            wins[side] += 1
        turn += config.replicates
        verdicts.append(PairVerdict(a.hash, b.hash, wins["a"], wins["b"], wins["tie"], slots))
    return verdicts
