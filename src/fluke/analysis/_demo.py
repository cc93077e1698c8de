"""``demo``: the main job on the embedded default, as a chain of the verbs a user would run.

A simulated support desk (:func:`fluke.simulate.support_desk`) runs at two versions, the
second with a planted change. Version 1's first batch goes into a fresh SQLite ledger, then
:func:`~fluke.analysis.predict` records what it predicts for the next batch; version 1's second
batch and version 2 follow. :func:`~fluke.analysis.grade` grades every run against the desk's
spec (the grades are stored), :func:`~fluke.analysis.calibration` scores the predictions,
:func:`~fluke.analysis.contrast` reads a factorial policy study (memory × retry, in a ledger of
its own), :func:`~fluke.analysis.calibrate` checks the comparison on unchanged pairs, and
:func:`~fluke.analysis.report` draws all of it: every number on the page is one of these verbs'.

>>> import tempfile
>>> made = run_demo(tempfile.mkdtemp(), null_pairs=20)
>>> made.runs, made.data.comparison.verdict
(2304, 'different')
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._document import Span, line
from ._result import Result


@dataclass(frozen=True)
class DemoResult:
    """What the demo made: the report's data, and where the ledger, spec and HTML file are."""

    data: Any
    ledger: Path
    spec: Path
    html: Path
    runs: int
    planted_step: str


#: The demo's loss table (docs/decisions.md): what a failed task, a hand-off and a broken hard
#: check cost the desk, in one unit; a version that may break hard checks in over 10% of runs is out.
DEMO_LOSS = """\
failure: 1
ask: 0.2
severity: {hard: 25}
eligible: {hard: 0.1}
"""


def _fresh(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)


def run_demo(folder: str | Path = "fluke-demo", *, seed: int = 7, null_pairs: int = 200) -> DemoResult:
    """Run the whole demo into ``folder`` (its ledgers are made afresh) and write the report there."""
    import yaml

    from ..ledger import open_ledger
    from ..simulate import simulate_support, support_desk
    from ._believe import predict
    from ._null_calibration import calibrate
    from ._prediction_calibration import calibration
    from ._contrast import contrast
    from ._decide import decide
    from ._grade import grade
    from ._report import report

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    db, study_db = folder / "fluke.db", folder / "study.db"
    spec_path, html = folder / "spec.yaml", folder / "report.html"
    loss_path = folder / "loss.yaml"
    _fresh(db)
    _fresh(study_db)
    desk = support_desk(seed=seed)
    spec_path.write_text(yaml.safe_dump(desk.spec, sort_keys=False), encoding="utf-8")
    loss_path.write_text(DEMO_LOSS, encoding="utf-8")
    v1, v2 = desk.version(1), desk.version(2)
    half = max(r.trial for r in v1) // 2 + 1
    with open_ledger(str(study_db)) as ledger:
        ledger.ingest(simulate_support(environments=60, seed=seed).runs)
        policies = contrast(ledger, factors=("memory", "retry"))
    with open_ledger(str(db)) as ledger:
        ledger.ingest([r for r in v1 if r.trial < half])
        predict(ledger, version=v1[0].version)          # for version 1's second batch, before it runs
        ledger.ingest([r for r in v1 if r.trial >= half])
        ledger.ingest(v2)
        grade(ledger, str(spec_path), rows=0)           # stored: the report reads them back
        scored = calibration(ledger, version=v1[0].version)
        null = calibrate(pairs=null_pairs, seed=seed)
        decision = decide(ledger, loss_path, versions=[v1[0].version, v2[0].version], spec=str(spec_path))
        written = report(ledger, out=html, versions=[v1[0].version, v2[0].version],
                         title="fluke demo: a support desk, version 1 against version 2",
                         extras={"calibration": scored, "contrasts": policies, "null_calibration": null,
                                 "decision": decision})
        runs = ledger.count()
    return DemoResult(written.data, db, spec_path, html, runs, desk.planted_step)


@dataclass(frozen=True)
class DemoSummary(Result):
    """What ``fluke demo`` made and what its report shows."""

    kind = "demo"
    demo: Any
    seconds: float

    def payload(self) -> dict[str, Any]:
        d = self.demo
        return {"ledger": str(d.ledger), "spec": str(d.spec), "html": str(d.html), "runs": d.runs,
                "planted_step": d.planted_step, "seconds": self.seconds, "report": d.data.model_dump(mode="json")}

    def blocks(self) -> list:
        from ._report import ReportResult

        d = self.demo
        inner = ReportResult(d.data, Path(d.html))
        return [line(f"simulated a support desk at two versions: {d.runs} runs recorded into {d.ledger}, graded "
                     f"against {d.spec}"), *inner.blocks(),
                line("the planted change was in ", Span(d.planted_step, "bold"), ": compare it with the per-step "
                     f"q-values in the report ({self.seconds:.1f} s in all)"),
                line(f"next: fluke --ledger {d.ledger} believe   ·   fluke --ledger {d.ledger} compare "
                     "model=support-desk-v1 model=support-desk-v2")]


def demo(out: str | Path = "fluke-demo", *, seed: int = 7) -> DemoSummary:
    """The main job on the embedded default: simulate, record, grade, compare, report (into ``out``)."""
    start = time.perf_counter()
    made = run_demo(out, seed=seed)
    return DemoSummary(made, time.perf_counter() - start)
