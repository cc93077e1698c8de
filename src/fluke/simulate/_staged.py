"""The staged workload: a synthetic agent whose failures are pure chance, with a known answer.

Each episode is a chain of calls — review, then sample, then measure — and then a reply. Each
call fails independently at its stage's rate; the episode ends at the failed call (the run dies
there). Arms: A (the baseline), A′ (A again under a fresh salt: nothing changed) and B (one
stage's rate multiplied; which stage is drawn from the operating system's random source and
sealed by digest before any run). Outcomes are drawn with numpy in one pass; :meth:`StagedArm.runs`
turns an arm into fluke :class:`~fluke.record.Run` objects only when they are to be stored.

>>> arm = draw_arm(BASELINE_RATES, tasks=50, runs_per_task=40, salt="doc")
>>> arm.died.size, round(float(arm.died.mean()), 2)
(2000, 0.27)
>>> run = arm.runs()[0]
>>> [e.kind for e in run.events][:2], run.outcome.died_at in (None, 1, 2, 3)
(['user', 'tool'], True)
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass, field

import numpy as np

from ..errors import UsageError
from ..record import AgentMessage, Identity, Outcome, Run, ToolCall, UserMessage, digest

__all__ = [
    "BASELINE_RATES",
    "STAGES",
    "PlantedChange",
    "StagedArm",
    "draw_arm",
    "draw_failures",
    "plant_change",
    "verify_seal",
]

#: The calls of one episode, in order; a reply follows when none failed.
STAGES = ("review", "sample", "measure")
#: Seed 002's rates: every stage fails 10% of the time, so 1 − 0.9³ = 27.1% of episodes fail.
BASELINE_RATES = {"review": 0.10, "sample": 0.10, "measure": 0.10}


def _rates_vector(rates: dict[str, float]) -> np.ndarray:
    unknown = sorted(set(rates) - set(STAGES))
    if unknown:
        raise UsageError(f"rates names unknown stage(s) {unknown}; the stages are {list(STAGES)}", argument="rates")
    vec = np.array([float(rates.get(s, 0.0)) for s in STAGES])
    if np.any((vec < 0) | (vec > 1)):
        raise UsageError(f"rates={rates!r}: every rate must lie in [0, 1]", argument="rates")
    return vec


def draw_failures(rates: dict[str, float], shape, *, rng: np.random.Generator) -> np.ndarray:
    """Index of the stage at which each episode failed (−1 when it reached the reply).

    ``shape`` is the shape of the episode array (e.g. ``(pairs, runs)``).

    >>> draw_failures({"review": 1.0}, (3,), rng=np.random.default_rng(0)).tolist()
    [0, 0, 0]
    """
    vec = _rates_vector(rates)
    shape = tuple(int(x) for x in np.atleast_1d(shape))
    # One uniform per episode: P(fail at stage j) = r_j · Π_{i<j} (1 − r_i), cut into consecutive
    # intervals of [0, 1); past the last cut the episode reaches the reply.
    reach = np.concatenate([[1.0], np.cumprod(1 - vec)[:-1]])
    cuts = np.cumsum(reach * vec)
    stage = np.searchsorted(cuts, rng.random(shape), side="right")
    return np.where(stage < len(STAGES), stage, -1)


def _salt_rng(salt: str) -> np.random.Generator:
    seed = int.from_bytes(hashlib.sha256(salt.encode()).digest()[:8], "big")
    return np.random.default_rng(seed)


@dataclass(frozen=True)
class StagedArm:
    """One arm of the staged workload: ``tasks × runs_per_task`` episodes as arrays."""

    name: str
    salt: str
    tasks: int
    runs_per_task: int
    failed_stage: np.ndarray = field(repr=False)

    @property
    def task(self) -> np.ndarray:
        return np.repeat(np.arange(self.tasks), self.runs_per_task)

    @property
    def trial(self) -> np.ndarray:
        return np.tile(np.arange(self.runs_per_task), self.tasks)

    @property
    def died(self) -> np.ndarray:
        return self.failed_stage >= 0

    @property
    def time(self) -> np.ndarray:
        """Event index: the failed call (1 + stage), or the reply (1 + len(STAGES))."""
        return np.where(self.died, self.failed_stage + 1, len(STAGES) + 1)

    def identity(self) -> Identity:
        """The arm's identity. It names the arm and salt, never the rates (B's are sealed)."""
        return Identity(model=f"staged-{self.name}", harness="fluke.simulate.staged",
                        world={"workload": "staged", "tasks": self.tasks,
                               "runs_per_task": self.runs_per_task},
                        policy={"salt": self.salt})

    def runs(self) -> list[Run]:
        """The arm as fluke runs, with ``died_at`` at the failed call and one ToolCall per call."""
        identity = self.identity()
        out = []
        for task, trial, stage in zip(self.task.tolist(), self.trial.tolist(), self.failed_stage.tolist(), strict=True):
            scenario = f"task-{task:03d}"
            events: list = [UserMessage(text=f"run the staged chain for {scenario}")]
            last = stage if stage >= 0 else len(STAGES) - 1
            for j in range(last + 1):
                failed = j == stage
                events.append(ToolCall(tool=STAGES[j], args={"task": scenario}, call_id=f"c{j}",
                                       ok=not failed, result=None if failed else "ok",
                                       error="rejected: wrong state" if failed else None))
            if stage < 0:
                events.append(AgentMessage(text=f"{scenario} done"))
            outcome = Outcome(passed=stage < 0, reward=1.0 if stage < 0 else 0.0,
                              label="complete" if stage < 0 else "fail",
                              died_at=None if stage < 0 else stage + 1)
            out.append(Run(scenario=scenario, trial=trial, identity=identity, events=events,
                           outcome=outcome, seed=f"{self.salt}/{task}/{trial}", tags=["workload:staged"]))
        return out


def draw_arm(rates: dict[str, float], *, tasks: int = 50, runs_per_task: int = 40, salt: str,
             name: str = "A") -> StagedArm:
    """Draw one arm; the salt alone fixes its randomness (a fresh salt is a fresh draw).

    >>> a = draw_arm(BASELINE_RATES, tasks=3, runs_per_task=2, salt="s")
    >>> again = draw_arm(BASELINE_RATES, tasks=3, runs_per_task=2, salt="s")
    >>> a.task.tolist(), (a.failed_stage == again.failed_stage).all()
    ([0, 0, 1, 1, 2, 2], np.True_)
    """
    if tasks < 1:
        raise UsageError(f"tasks={tasks} must be at least 1", argument="tasks")
    if runs_per_task < 1:
        raise UsageError(f"runs_per_task={runs_per_task} must be at least 1", argument="runs_per_task")
    failed = draw_failures(rates, (tasks * runs_per_task,), rng=_salt_rng(salt))
    return StagedArm(name, salt, tasks, runs_per_task, failed)


@dataclass(frozen=True)
class PlantedChange:
    """Which stage's rate is multiplied in arm B. Keep it unread until the comparison is done."""

    stage: str
    factor: float
    nonce: str

    def body(self) -> dict:
        """What is sealed. The nonce stops anyone guessing the stage from the digest."""
        return {"kind": "planted-change", "workload": "staged", "stage": self.stage,
                "factor": self.factor, "nonce": self.nonce}

    @property
    def digest(self) -> str:
        """SHA-256 of the canonical JSON of :meth:`body`: publish this, not the stage."""
        return digest(self.body())

    def rates(self, baseline: dict[str, float] = BASELINE_RATES) -> dict[str, float]:
        """Arm B's rates: the baseline with the planted stage's rate multiplied (capped at 1)."""
        out = dict(baseline)
        out[self.stage] = min(1.0, out.get(self.stage, 0.0) * self.factor)
        return out


def plant_change(*, factor: float = 2.0) -> PlantedChange:
    """Draw the stage to change from the operating system's random source (``secrets``).

    >>> change = plant_change()
    >>> change.stage in STAGES, verify_seal(change.digest, change.body())
    (True, True)
    """
    if factor <= 0:
        raise UsageError(f"factor={factor!r} must be positive", argument="factor")
    return PlantedChange(STAGES[secrets.randbelow(len(STAGES))], float(factor), secrets.token_hex(16))


def verify_seal(sealed_digest: str, body: dict) -> bool:
    """Whether ``body`` is what was sealed under ``sealed_digest``.

    >>> verify_seal("0" * 64, {"stage": "review"})
    False
    """
    return digest(body) == sealed_digest
