"""A fluke Parquet dataset: written by ``export --format parquet``, read back by ``ingest``, and the
count verbs answered from it in place (``--ledger parquet:DIR`` and ``duckdb:FILE``) with the
SQLite ledger's JSON, on generated runs (unknown outcomes, conditions, units, rewards, costs, two
overlapping ingests, several versions) and on τ²-bench.
"""

from __future__ import annotations

import json
from dataclasses import astuple

import pytest

from fluke.errors import InputError, LedgerError
from fluke.ledger import open_ledger
from fluke.record import Run

from .._runs import cli_json as cli
from .._runs import generated

from ..conftest import TAU2_RESULTS, need

pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A SQLite ledger of generated runs (two overlapping ingests), its Parquet export and a DuckDB copy."""
    from fluke.lake import materialise

    folder = tmp_path_factory.mktemp("lake")
    db = str(folder / "fluke.db")
    runs = generated(1500, seed=11)
    with open_ledger(db) as ledger:
        ledger.ingest(runs[:1000])
        ledger.ingest(runs[600:])
    assert cli(db, "export", "--format", "parquet", "-o", str(folder / "lake"))[0] == 0
    materialise(folder / "lake", folder / "lake.duckdb")
    return db, str(folder / "lake"), str(folder / "lake.duckdb")


VERBS = [("summary",), ("believe",), ("passk",), ("compare", "--no-record", "model=m1", "model=m2"),
         ("compare", "--no-record", "model=m*", "model=x3", "--unknown", "exclude"),
         ("compare", "--no-record", "model=m1", "model=m2", "--condition", "noise=typos"),
         ("leaderboard",), ("consistency", "model=m1", "model=m2", "model=x3"),
         ("consistency", "model=m1@0-200", "model=m*@100-399"),
         ("fixcheck", "model=m1@0-99", "model=m2@100-399", "--control", "model=x3@100-399"),
         ("fixcheck", "model=m1", "model=m2"), ("interval",), ("interval", "--version", "model=m1")]


@pytest.mark.parametrize("args", VERBS, ids=[" ".join(a) for a in VERBS])
def test_every_count_verb_on_the_lake_prints_the_sqlite_ledgers_json(made, args):
    db, lake, duck = made
    code, expected = cli(db, *args)
    assert code == 0, expected
    assert json.loads(expected)["kind"]
    assert cli(f"parquet:{lake}", *args) == (0, expected)
    assert cli(f"duckdb:{duck}", *args) == (0, expected)


def test_the_tables_read_from_the_lake_are_the_ledgers(made):
    import numpy as np

    db, lake, _ = made
    with open_ledger(db) as ledger, open_ledger(f"parquet:{lake}") as copy:
        assert copy.counts() == ledger.counts() and copy.steps() == ledger.steps()
        cells, want = copy.unit_cells(), ledger.unit_cells()
        assert [c[:8] for c in map(astuple, cells)] == [c[:8] for c in map(astuple, want)] and want
        assert [x for c in cells for x in astuple(c)[8:]] == pytest.approx([x for c in want for x in astuple(c)[8:]],
                                                                           rel=1e-12)
        assert copy.versions() == ledger.versions()
        assert copy.spend().keys() == ledger.spend().keys()
        for version, sums in ledger.spend().items():
            got = copy.spend()[version]
            assert got.keys() == sums.keys() and sums
            for key, (runs, total) in sums.items():
                assert got[key][0] == runs and got[key][1] == pytest.approx(total, rel=1e-12)
        for kwargs in ({}, {"condition": "noise=typos"}, {"trials": range(50, 130)}, {"scenario": "case3"}):
            a, b = ledger.trial_outcomes(**kwargs), copy.trial_outcomes(**kwargs)
            assert (a.versions, a.inputs) == (b.versions, b.inputs)
            for field in ("version", "input", "trial", "outcome"):
                assert np.array_equal(getattr(a, field), getattr(b, field)), (kwargs, field)
        assert list(copy.run_bodies(scenario="case2")) == list(ledger.run_bodies(scenario="case2"))


def test_the_exported_tally_tables_are_the_ledgers(made):
    import pyarrow.parquet as pq

    db, lake, _ = made
    with open_ledger(db) as ledger:
        names = {v.version: v for v in ledger.versions()}
        vid = {int(v[:15], 16): v for v in names}
        counts = pq.read_table(f"{lake}/counts.parquet").to_pylist()
        assert sorted((vid[r["vid"]], r["scenario"], r["condition"], r["trials"], r["passes"], r["unknowns"])
                      for r in counts) == sorted((r.version, r.scenario, r.condition, r.trials, r.passes, r.unknowns)
                                                 for r in ledger.counts())
        steps = pq.read_table(f"{lake}/steps.parquet").to_pylist()
        assert sum(r["runs"] for r in steps) == sum(r.runs for r in ledger.steps())


def _round_trip(db: str, tmp_path) -> None:
    lake, copy = tmp_path / "rt-lake", str(tmp_path / "copy.db")
    assert cli(db, "export", "--format", "parquet", "-o", str(lake))[0] == 0
    code, out = cli(copy, "ingest", str(lake))
    assert code == 0, out
    with open_ledger(db) as a, open_ledger(copy) as b:
        # the content (the stored body, whose SHA-256 is the hash) comes back byte for byte; a
        # source comes back as stored, and a run stored without one (from Python) is given the
        # dataset as its source, as fluke JSONL's reader does for the lines of an export
        want = sorted(a.run_bodies(), key=lambda r: r[0])
        got = sorted(b.run_bodies(), key=lambda r: r[0])
        assert [r[0] for r in got] == [r[0] for r in want] and want
        assert [s for (_, s), (_, t) in zip(got, want, strict=True) if t is not None] == [t for _, t in want
                                                                                          if t is not None]
        assert sorted(r.hash for r in b.runs()) == sorted(r.hash for r in a.runs())
        assert b.counts() == a.counts() and b.steps() == a.steps()
    assert json.loads(cli(copy, "ingest", str(lake))[1])["files"][0]["added"] == 0   # the same runs: none new


def test_export_then_ingest_gives_back_the_ledgers_runs_on_generated_runs(made, tmp_path):
    _round_trip(made[0], tmp_path)


@pytest.fixture(scope="module")
def tau2(tmp_path_factory):
    from fluke.adapters import read_file

    files = sorted(need(TAU2_RESULTS).glob("*gpt-4.1*1trials.json"))
    assert len(files) >= 6
    folder = tmp_path_factory.mktemp("tau2")
    db = str(folder / "tau2.db")
    with open_ledger(db) as ledger:
        for path in files:
            ledger.ingest(read_file(path))
    assert cli(db, "export", "--format", "parquet", "-o", str(folder / "lake"))[0] == 0
    return db, str(folder / "lake")


def test_export_then_ingest_gives_back_the_ledgers_runs_on_tau2_bench(tau2, tmp_path):
    _round_trip(tau2[0], tmp_path)


TAU2_VERBS = [("summary",), ("believe",), ("passk",), ("compare", "--no-record", "model=gpt-4.1", "model=ft:*"),
              ("consistency", "model=gpt-4.1", "model=ft:*"), ("fixcheck", "model=gpt-4.1", "model=ft:*"),
              ("interval",), ("leaderboard",)]


@pytest.mark.parametrize("args", TAU2_VERBS, ids=[" ".join(a) for a in TAU2_VERBS])
def test_every_count_verb_on_a_tau2_bench_lake_prints_the_sqlite_ledgers_json(tau2, args):
    db, lake = tau2
    expected = cli(db, *args)
    # τ²-bench's versions ran different domains, so the leaderboard has no common scenario to rank
    # them on: both ledgers refuse it in the same words
    assert expected[0] == (2 if args == ("leaderboard",) else 0), expected
    assert cli(f"parquet:{lake}", *args) == expected


def test_a_lake_keeps_its_runs_and_records_a_verdict_as_a_new_file(made, tmp_path):
    import shutil

    db, lake, duck = made
    copy = tmp_path / "rec"
    shutil.copytree(lake, copy)
    shutil.copy(db, tmp_path / "rec.db")
    code, out = cli(f"parquet:{copy}", "compare", "model=m1", "model=m2")
    assert code == 0, out
    assert cli(str(tmp_path / "rec.db"), "compare", "model=m1", "model=m2") == (0, out)
    with open_ledger(f"parquet:{copy}") as ledger, open_ledger(str(tmp_path / "rec.db")) as sqlite:
        assert [d.body for d in ledger.documents("comparison")] == [d.body for d in sqlite.documents("comparison")]
        assert len(ledger.documents("comparison")) == 1
        with pytest.raises(LedgerError, match="read-only"):
            ledger.ingest([Run(scenario="new")])
    assert len(list((copy / "documents").glob("*.parquet"))) == 1
    code, out = cli(f"duckdb:{duck}", "compare", "model=m1", "model=m2")
    assert code == 2 and "--no-record" in out and "Traceback" not in out


def test_what_is_not_a_lake_is_named(tmp_path):
    with pytest.raises(LedgerError, match="no fluke Parquet dataset at .*export --format parquet"):
        open_ledger(f"parquet:{tmp_path}")
    (tmp_path / "fluke-lake.json").write_text('{"format": "fluke-lake", "layout": 99}')
    with pytest.raises(InputError, match="layout 99 is newer"):
        open_ledger(f"parquet:{tmp_path}")
    with pytest.raises(LedgerError, match="no DuckDB ledger"):
        open_ledger(f"duckdb:{tmp_path / 'none.duckdb'}")


def test_an_outcome_only_dataset_answers_counts_but_is_not_ingested(tmp_path, made):
    """A dataset made elsewhere without bodies: the count verbs read it; ingest names the row."""
    import pyarrow.parquet as pq

    _, lake, _ = made
    import shutil

    copy = tmp_path / "thin"
    shutil.copytree(lake, copy)
    for path in sorted(copy.glob("runs/*/*.parquet")):
        table = pq.read_table(path)
        table = table.set_column(table.schema.get_field_index("body"), "body",
                                 __import__("pyarrow").nulls(table.num_rows, "string"))
        pq.write_table(table, path)
    assert cli(f"parquet:{copy}", "summary") == cli(f"parquet:{lake}", "summary")
    code, out = cli(str(tmp_path / "x.db"), "ingest", str(copy))
    assert code == 2 and "row 1" in out and "body" in out and "Traceback" not in out


def test_a_damaged_parquet_file_is_named_on_ingest(tmp_path, made):
    import shutil

    _, lake, _ = made
    copy = tmp_path / "broken"
    shutil.copytree(lake, copy)
    victim = sorted(copy.glob("runs/*/*.parquet"))[0]
    victim.write_bytes(b"PAR1 not really")
    code, out = cli(str(tmp_path / "x.db"), "ingest", str(copy))
    assert code == 2 and victim.name in out and "Parquet" in out and "Traceback" not in out


def test_export_refuses_an_existing_folder_and_standard_output(made, tmp_path):
    db = made[0]
    code, out = cli(db, "export", "--format", "parquet", "-o", str(tmp_path))
    assert code == 2 and "already exists" in out
    code, out = cli(db, "export", "--format", "parquet")
    assert code == 2 and "-o DIR" in out
    assert not list(tmp_path.glob("*.part"))


def test_an_outcome_only_lake_is_not_exported_again(tmp_path, made):
    import shutil

    import pyarrow
    import pyarrow.parquet as pq

    copy = tmp_path / "thin"
    shutil.copytree(made[1], copy)
    for path in sorted(copy.glob("runs/*/*.parquet")):
        table = pq.read_table(path)
        pq.write_table(table.set_column(table.schema.get_field_index("body"), "body",
                                        pyarrow.nulls(table.num_rows, "string")), path)
    code, out = cli(f"parquet:{copy}", "export", "--format", "parquet", "-o", str(tmp_path / "again"))
    assert code == 2 and "outcome-only" in out and not (tmp_path / "again").exists()
    assert not list(tmp_path.glob("*.part"))
