"""The staged synthetic agent with a sealed planted change: ``simulate`` draws it, ``reveal`` opens it.

``simulate`` draws which stage arm B makes worse from the OS random source, records only its
digest in the ledger before any run, writes the body to a private seal file, then ingests arms
A, A′ (a fresh salt) and B for each size. ``reveal`` checks four things before it names the
stage: the file's digest matches its body, the digest was sealed in this ledger, the seal came
before every arm's first run, and every B arm was compared (a ``comparison`` document) first.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> folder = tempfile.mkdtemp()
>>> ledger = open_ledger(os.path.join(folder, "sim.db"))
>>> sim = simulate(ledger, tasks=3, runs_per_task=(2,), seal_file=os.path.join(folder, "seal.json"))
>>> sorted(sim.arms)
["A'/2", 'A/2', 'B/2']
>>> early = reveal(ledger, sim.seal_file)
>>> early.holds, early.stage, early.checks["compared_before_reveal"]
(False, None, False)
>>> print(early.render()) # doctest: +ELLIPSIS
the seal was not opened: a check below failed (compare every B arm first, or --force)
...
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..errors import InputError, UsageError
from ..format import fluke_command, fmt_share
from ._document import Column, Span, Table, line, note
from ._result import Result

#: The ledger document kind holding a planted change's digest (the body stays in the seal file).
SEAL_KIND = "planted-change-seal"


def _write_private(path: Path, doc: dict) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(doc, handle, indent=2)


@dataclass(frozen=True)
class SimulationResult(Result):
    """The arms drawn (``"A/2"`` → version, runs, failed, added) under one sealed planted change."""

    kind = "simulation"
    seal_digest: str
    seal_file: str
    arms: dict
    tasks: int
    runs_per_task: tuple[int, ...]
    ledger: str | None = None  # the ledger's URL, so that the hints name it

    def payload(self) -> dict[str, Any]:
        return {"seal_digest": self.seal_digest, "seal_file": self.seal_file, "arms": self.arms,
                "tasks": self.tasks, "runs_per_task": list(self.runs_per_task)}

    def blocks(self) -> list:
        size = self.runs_per_task[-1]
        a, b = self.arms[f"A/{size}"]["version"][:12], self.arms[f"B/{size}"]["version"][:12]
        rows = [[name, row["version"][:12], fmt_share(row["failed"], row["runs"])] for name, row in self.arms.items()]
        return [
            line("sealed before any run: ", Span(self.seal_digest, "code")),
            Table(f"staged workload: {self.tasks} tasks; arm/runs per task",
                  [Column("arm", key=True), Column("version"), Column("failed", "right")], rows, limit=None),
            line(f"the planted stage is in {self.seal_file}; compare first, e.g. ",
                 Span(fluke_command(self.ledger, "compare", a, b), "code"), ", then ",
                 Span(fluke_command(self.ledger, "simulate", "--reveal", self.seal_file), "code")),
        ]


def simulate(ledger, *, tasks: int = 50, runs_per_task: Sequence[int] = (2, 40), factor: float = 2.0,
             seal_file: str | os.PathLike | None = None) -> SimulationResult:
    """Draw arms A, A′ and B of the staged agent for each size, under one planted change sealed first.

    The seal file (default ``./planted-<digest>.json``) must not exist yet; it is written
    readable by its owner only, and gets the arms' versions once they are ingested.
    """
    from ..simulate import BASELINE_RATES, draw_arm, plant_change

    if tasks < 1:
        raise UsageError(f"tasks={tasks!r} must be at least 1")
    sizes = tuple(dict.fromkeys(int(n) for n in runs_per_task))
    if not sizes or min(sizes) < 1:
        raise UsageError(f"runs_per_task={list(runs_per_task)!r} must name sizes of at least 1")
    if not factor > 0:
        raise UsageError(f"factor={factor!r} must be above 0")
    change = plant_change(factor=factor)
    digest = change.digest
    path = Path(seal_file or f"planted-{digest[:12]}.json")
    if path.exists():
        raise InputError(str(path), None, None, "already exists", hint="choose another --seal-file")
    _write_private(path, {"digest": digest, "sealed": change.body()})
    ledger.put_document(SEAL_KIND, {"digest": digest, "workload": "staged", "tasks": tasks,
                                    "runs_per_task": list(sizes)})
    b_rates = change.rates(BASELINE_RATES)
    del change  # nothing below may read the planted stage
    info = {}
    for size in sizes:
        for name, rates in (("A", BASELINE_RATES), ("A'", BASELINE_RATES), ("B", b_rates)):
            arm = draw_arm(rates, tasks=tasks, runs_per_task=size, salt=secrets.token_hex(8), name=name)
            added = ledger.ingest(arm.runs()).added
            info[f"{name}/{size}"] = {"version": arm.identity().version, "runs": int(arm.died.size),
                                      "failed": int(arm.died.sum()), "added": added}
    doc = json.loads(path.read_text())
    doc["arms"] = {k: v["version"] for k, v in info.items()}
    path.write_text(json.dumps(doc, indent=2))
    return SimulationResult(digest, str(path), info, tasks, sizes, ledger=getattr(ledger, "url", None))


@dataclass(frozen=True)
class RevealResult(Result):
    """The reveal's checks; ``stage`` is named only when every check holds (or it was forced)."""

    kind = "reveal"
    checks: dict
    stage: str | None
    factor: float | None
    forced: bool = False
    uncompared: tuple[tuple[str, str, str], ...] = ()  # (B arm, its A version, its B version) not yet compared
    ledger: str | None = None

    @property
    def holds(self) -> bool:
        """Whether every check passed (``fluke simulate --reveal`` exits 1 otherwise)."""
        return all(self.checks.values())

    def payload(self) -> dict[str, Any]:
        return {"checks": self.checks, "stage": self.stage, "factor": self.factor,
                "uncompared": [{"arm": arm, "a": a, "b": b} for arm, a, b in self.uncompared]}

    def blocks(self) -> list:
        out: list = []
        if self.stage is not None:
            out.append(line("planted change: stage ", Span(str(self.stage), "bold"), f", rate × {self.factor}"))
            if not self.holds:
                out.append(line("opened with --force although a check below failed", style="warn"))
        else:
            out.append(line("the seal was not opened: a check below failed (compare every B arm first, or --force)",
                            style="bad"))
            for arm, a, b in self.uncompared:
                hint = fluke_command(self.ledger, "compare", a, b)
                out.append(line(f"  {arm} has not been compared yet: ", Span(hint, "code")))
        out += [line(Span("ok", "good") if ok else Span("NO", "bad"), f"  {name.replace('_', ' ')}")
                for name, ok in self.checks.items()]
        out.append(note("the digest was recorded in the ledger before any run; the stage was drawn from the OS "
                        "random source"))
        return out


def reveal(ledger, seal_file: str | os.PathLike, *, force: bool = False) -> RevealResult:
    """Open a planted change's seal file once its checks hold (or with ``force``)."""
    from ..simulate import verify_seal

    path = Path(seal_file)
    try:
        doc = json.loads(path.read_text())
        digest, body = doc["digest"], doc["sealed"]
        if not isinstance(body, dict):
            raise TypeError("'sealed' is not an object")
    except FileNotFoundError:
        raise InputError(
            str(path), None, None, "no such seal file", hint="pass the file fluke simulate wrote"
        ) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(str(path), None, "digest/sealed", f"not a seal file ({exc})") from None
    seals = [d for d in ledger.documents(SEAL_KIND) if d.body.get("digest") == digest]
    stored = seals[0] if seals else None
    checks = {"digest_matches": verify_seal(digest, body), "sealed_in_ledger": stored is not None}
    arms = doc.get("arms") or {}
    infos = {v.version: v for v in ledger.versions()}
    present = [infos[v] for v in arms.values() if v in infos]
    checks["sealed_before_runs"] = bool(stored is not None and present and len(present) == len(arms)
                                        and all(stored.recorded_at <= i.first_recorded for i in present))
    compared: set[str] = set()
    for d in ledger.documents("comparison"):
        compared.update(d.body.get("a", {}).get("versions", []) + d.body.get("b", {}).get("versions", []))
    b_versions = [v for k, v in arms.items() if k.split("/")[0] == "B"]
    checks["compared_before_reveal"] = bool(b_versions) and all(v in compared for v in b_versions)
    left = tuple((k, arms.get("A/" + k.split("/", 1)[-1], "")[:12], v[:12]) for k, v in arms.items()
                 if k.split("/")[0] == "B" and v not in compared)
    opened = all(checks.values()) or force
    return RevealResult(checks, body.get("stage") if opened else None, body.get("factor"), forced=force,
                        uncompared=left, ledger=getattr(ledger, "url", None))
