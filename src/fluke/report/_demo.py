"""The main job on the embedded default, as a library call: simulate, record, grade, analyse,
compare, report.

A simulated support desk (:func:`fluke.simulate.support_desk`) runs at two versions, the
second with a planted change. Version 1's runs go into a fresh SQLite ledger in two batches,
with predictions recorded between them; version 2 follows. Every run is graded against the
desk's spec; the report gets the suite board, the suite questions, the luck rate, the
comparison of the two versions with its detection limit, the boundary chart, the calibration
of the predictions, a factorial policy study (memory × retry) and a null calibration of the
comparison itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from ..design import factorial_contrasts
from ..grading import grade_run, load_spec
from ..inference import posterior, score_predictions
from ..ledger import open_ledger, utcnow
from ..simulate import calibrate_null, simulate_support, support_desk
from ._collect import collect_report
from ._enrich import enrich
from ._feed import calibration_from, contrasts_from, null_from, violations_from
from ._html import render_html
from ._model import ReportData


@dataclass(frozen=True)
class DemoResult:
    """What the demo made: the report's data, and where the ledger, spec and HTML file are."""

    data: ReportData
    ledger: Path
    spec: Path
    html: Path
    runs: int
    planted_step: str


def _fresh(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)


def run_demo(folder: str | Path = "fluke-demo", *, seed: int = 7, null_pairs: int = 200) -> DemoResult:
    """Run the whole demo into ``folder`` (its ledger is made afresh) and write the report.

    >>> import tempfile
    >>> result = run_demo(tempfile.mkdtemp(), null_pairs=20)
    >>> result.runs, result.data.comparison.verdict
    (2304, 'different')
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    db, spec_path, html = folder / "fluke.db", folder / "spec.yaml", folder / "report.html"
    _fresh(db)
    desk = support_desk(seed=seed)
    spec_path.write_text(yaml.safe_dump(desk.spec, sort_keys=False), encoding="utf-8")
    spec = load_spec(spec_path)
    v1, v2 = desk.version(1), desk.version(2)
    half = max(r.trial for r in v1) // 2 + 1
    with open_ledger(str(db)) as ledger:
        ledger.ingest([r for r in v1 if r.trial < half])
        # Predictions for version 1's second batch, from its first batch, before it runs.
        first = ledger.counts(version=v1[0].version)
        belief = posterior([c.passes for c in first], [c.trials for c in first])
        made_at = utcnow()
        predicted = {
            (c.scenario, c.condition): float(p) for c, p in zip(first, np.atleast_1d(belief.mean), strict=True)
        }
        for (scenario, condition), p in predicted.items():
            ledger.put_document("prediction", {"version": v1[0].version, "scenario": scenario,
                                               "condition": condition, "probability": p, "made_at": made_at,
                                               "prior": "uniform", "family": None, "carried": None})
        second = [r for r in v1 if r.trial >= half]
        ledger.ingest(second)
        ledger.ingest(v2)
        runs = list(ledger.runs())
        grades = [grade_run(r, spec) for r in runs]
        ledger.put_document("spec", spec.body)
        ledger.put_grades(spec.digest, [(g.run_hash, g.to_dict()) for g in grades])
        data = collect_report(ledger, versions=[v1[0].version, v2[0].version], runs=runs,
                              violations=violations_from(grades),
                              title="fluke demo: a support desk, version 1 against version 2")
        data = enrich(data, runs, grades, spec_path=str(spec_path), alpha=0.05, power=0.8, ceiling=5.0)

    score = score_predictions([predicted[(r.scenario, r.condition_key())] for r in second],
                              [int(r.outcome.passed) for r in second]).overall
    study = simulate_support(environments=60, seed=seed)
    fc = factorial_contrasts([float(r.outcome.passed) for r in study.runs], [r.sampling_unit for r in study.runs],
                             {f: [r.condition[f] for r in study.runs] for f in ("memory", "retry")})
    null = calibrate_null(null_pairs, rng=np.random.default_rng(seed))
    missing = {k: v for k, v in data.missing.items() if k not in ("calibration", "contrasts", "null_calibration")}
    data = data.model_copy(update={
        "calibration": calibration_from(score, conditional_on=(
            f"version 1's second batch ({len(second)} runs), predicted from its first batch under a uniform prior")),
        "contrasts": contrasts_from(fc),
        "null_calibration": null_from(null.calibration, conditional_on=(
            f"{null_pairs} unchanged pairs of the staged workload (50 tasks x 40 runs per arm)")),
        "missing": missing})
    html.write_text(render_html(data), encoding="utf-8")
    return DemoResult(data, db, spec_path, html, len(runs), desk.planted_step)
