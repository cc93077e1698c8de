"""``grade`` over a Parquet dataset: grades are written back into the dataset as Parquet files
(``grades/``, with the spec in ``documents/``) and read back by the next grade; on a local Ray
cluster of two workers, whose tasks read their own key slices of the dataset, the answer is the
single-process one; and the grades are those the SQLite ledger of the same runs gives.
"""

from __future__ import annotations

import json

import pytest

from fluke.ledger import open_ledger

from .test_lake import cli, generated

pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")

SPEC = {"tools": ["tool0", "tool1", "tool2", "tool3", "tool4"], "required": ["tool0"],
        "before": [["tool1", "tool2"]]}


@pytest.fixture
def lake(tmp_path):
    from fluke.lake import write_dataset

    db = str(tmp_path / "fluke.db")
    with open_ledger(db) as ledger:
        runs = generated(1200, seed=3)
        ledger.ingest(runs[:800])
        ledger.ingest(runs[500:])
        write_dataset(ledger, tmp_path / "lake")
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(SPEC))
    return db, str(tmp_path / "lake"), str(spec)


def _grade(ledger: str, spec: str, *extra: str) -> dict:
    code, out = cli(ledger, "grade", "--spec", spec, *extra)
    assert code in (0, 1), out     # 1: the gate failed, as it does on these runs
    return json.loads(out)


def _by_run(doc: dict) -> list:
    return sorted(doc["runs"], key=lambda r: r["run_hash"])


def test_grades_are_written_back_as_parquet_and_read_back(lake):
    import pyarrow.parquet as pq

    db, folder, spec = lake
    first = _grade(f"parquet:{folder}", spec, "--jobs", "1")
    assert (first["stored"], first["reused"]) == (1200, 0)
    files = sorted((__import__("pathlib").Path(folder) / "grades").glob("*.parquet"))
    stored = [row for f in files for row in pq.read_table(f).to_pylist()]
    assert sorted(r["run_hash"] for r in stored) == [r["run_hash"] for r in _by_run(first)]
    again = _grade(f"parquet:{folder}", spec, "--jobs", "1")
    assert (again["stored"], again["reused"]) == (0, 1200)
    assert _by_run(again) == _by_run(first)
    # the SQLite ledger of the same runs grades them the same (its runs listed in its own storage order)
    sqlite = _grade(db, spec, "--no-store", "--jobs", "1")
    assert _by_run(sqlite) == _by_run(first)
    for key in ("gate", "luck", "unknowns", "unknowns_by_version", "runs_total"):
        assert sqlite[key] == first[key], key


@pytest.mark.slow
def test_grade_on_a_two_worker_ray_cluster_equals_the_single_process_grade(lake):
    ray = pytest.importorskip("ray")
    _, folder, spec = lake
    single = _grade(f"parquet:{folder}", spec, "--no-store", "--executor", "local")
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        on_ray = _grade(f"parquet:{folder}", spec, "--no-store", "--executor", "ray", "--jobs", "2")
    finally:
        ray.shutdown()
    assert on_ray == single and single["runs"]
