"""The ``trial_outcomes`` and ``unit_cells`` tables equal a recount from the stored runs, after
any mix of ingests: Run objects, files (the prepared fast path, and read by a second process),
duplicates within and across ingests, unknown outcomes, rewards, declared units, conditions,
sparse, repeated and negative trials, several versions, an ingest that fails part-way, one
that commits in batches (SQLite), one that holds more entries than it keeps in memory, two
processes ingesting at once, and a ``kill -9`` mid-ingest. On SQLite and on PostgreSQL.

The recount reads every stored body (past the tables) with the ingest and key it was stored
under, and orders each input's runs by trial, version, ingest and key: the order the fix
check takes them in from :meth:`Ledger.runs`.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import orjson
import pytest

from fluke.adapters import read_file
from fluke.errors import InputError
from fluke.ledger import _ingest, _tallies, open_ledger, row_run
from fluke.record import Identity, Outcome, Run

from . import kept, undo_trial_keys

_TRIALS = [0, 1, 2, 3, 3, 7, 255, 256, 257, 511, 1000, -1, -256, -257, 2 ** 40]


def _runs(n: int, *, seed: int) -> list[Run]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        passed = rng.choice([True, False, False, None])
        reward = rng.choice([None, round(rng.uniform(-1, 2), 3), 1.0, 0.1])
        out.append(Run(scenario=f"s{rng.randrange(6)}", trial=rng.choice(_TRIALS), seed=rng.randrange(4),
                       identity=Identity(model=rng.choice(["a", "b", "c"])),
                       unit=rng.choice([None, None, "u1", "u2"]),
                       condition=rng.choice([{}, {}, {"noise": "typos"}, {"t": 0.5, "lang": "fr"}]),
                       outcome=Outcome(passed=passed, reward=reward)))
    return out


def _recount(ledger) -> tuple[list, dict]:
    """``(outcomes, cells)`` from the stored bodies: ``(scenario, condition, trial, version, outcome)``
    in the fix check's order, and the six sums per (version, unit, scenario, condition)."""
    stored = []
    for key, ingest, body in ledger.query("SELECT k, ingest, body FROM runs WHERE ingest NOT IN "
                                          "(SELECT ingest FROM pending)"):
        run = row_run(body)
        stored.append((run.scenario, run.condition_key(), run.trial, run.version, int(ingest), int(key), run))
    stored.sort(key=lambda r: r[:6])
    outcomes = [(s, c, t, v, 2 if r.outcome.passed is None else 0 if r.outcome.passed else 1)
                for s, c, t, v, _, _, r in stored]
    groups: dict[tuple, list] = {}
    for s, c, _, v, _, _, r in stored:
        groups.setdefault((v, r.sampling_unit, s, c), []).append(r.outcome)
    cells = {g: (len(o), sum(x.passed is True for x in o), sum(x.passed is None for x in o),
                 sum(x.reward is not None for x in o), math.fsum(x.reward for x in o if x.reward is not None),
                 math.fsum(x.reward ** 2 for x in o if x.reward is not None)) for g, o in groups.items()}
    return outcomes, cells


def _tables(ledger) -> tuple[list, dict]:
    """The same two, read from the tables."""
    got = ledger.trial_outcomes()
    outcomes = [(*got.inputs[i], t, got.versions[v], o)
                for i, t, v, o in zip(got.input.tolist(), got.trial.tolist(), got.version.tolist(),
                                      got.outcome.tolist(), strict=True)]
    cells = {(c.version, c.unit, c.scenario, c.condition): (c.trials, c.passes, c.unknowns, c.rewarded,
                                                            c.reward_sum, c.reward_squares)
             for c in ledger.unit_cells()}
    return outcomes, cells


def _assert_tallied(ledger) -> None:
    want_outcomes, want_cells = _recount(ledger)
    outcomes, cells = _tables(ledger)
    assert outcomes == want_outcomes
    assert cells.keys() == want_cells.keys()
    for group, sums in cells.items():
        assert sums[:4] == want_cells[group][:4], group
        assert sums[4:] == pytest.approx(want_cells[group][4:], rel=1e-12, abs=1e-12), group
    # the stream's own order, sorted stably by input, trial and version, is the table's order
    streamed = sorted(((r.scenario, r.condition_key(), r.trial, r.version,
                        2 if r.outcome.passed is None else 0 if r.outcome.passed else 1) for r in ledger.runs()),
                      key=lambda e: e[:4])
    assert streamed == outcomes
    assert not ledger.query("SELECT 1 FROM trial_outcomes_staged")


def _jsonl(path, runs) -> str:
    with open(path, "wb") as out:
        for run in runs:
            out.write(orjson.dumps(run.model_dump(mode="json", exclude={"source"})) + b"\n")
    return str(path)


def _failing(runs, at: int):
    for i, run in enumerate(runs):
        if i == at:
            raise InputError("made.jsonl", f"line {i + 1}", "outcome", "a bad record, on purpose")
        yield run


def test_the_tables_equal_a_recount_after_ingests_of_every_kind(ledger_url, tmp_path, monkeypatch):
    runs = _runs(2400, seed=11)
    with open_ledger(ledger_url) as ledger:
        ledger.ingest(runs[:500])                                    # Run objects, one transaction
        ledger.ingest(runs[300:700] + runs[300:350])                 # stored runs again, and twice within
        _assert_tallied(ledger)
        ledger.ingest(read_file(_jsonl(tmp_path / "a.jsonl", runs[600:1200]), prepared=True))  # prepared
        with pytest.raises(InputError):
            ledger.ingest(_failing(runs[1200:1800], at=550))         # fails late: nothing of it kept
        _assert_tallied(ledger)
        monkeypatch.setattr(_ingest, "BATCH", 40)                    # many batches, committed while pending
        monkeypatch.setattr("fluke.ledger.Ledger.HOLD_RUNS", 100)
        monkeypatch.setattr(_tallies, "HOLD_ENTRIES", 70)            # entries staged in the table
        with pytest.raises(InputError):
            ledger.ingest(_failing(runs[1100:1900], at=700))
        _assert_tallied(ledger)
        ledger.ingest(read_file(_jsonl(tmp_path / "b.jsonl", runs[1100:2000]), prepared=True))
        monkeypatch.setattr("fluke.adapters._fluke_jsonl.BESIDE_BYTES", 0)   # a second process reads it
        monkeypatch.setattr("fluke.adapters._fluke_jsonl.BESIDE_LINES", 30)
        ledger.ingest(read_file(_jsonl(tmp_path / "c.jsonl", runs[1900:] + runs[:100]), prepared=True, workers=2))
        for run in runs[2390:]:
            ledger.ingest([run])                                      # one run per ingest
        _assert_tallied(ledger)
        assert ledger.count() == len(kept(runs))
        assert len(ledger.trial_outcomes(trials=[3])) == sum(r.trial == 3 for r in kept(runs))


def test_trial_selection_scenario_condition_and_version_filters(ledger_url):
    runs = _runs(800, seed=5)
    with open_ledger(ledger_url) as ledger:
        ledger.ingest(runs)
        every, _ = _tables(ledger)
        version = Identity(model="b").version
        for trials in ([0], [3, 257], range(-300, 300), [2 ** 40, 5]):
            got = ledger.trial_outcomes(version=[version], scenario="s*", condition="noise=typos", trials=trials)
            want = [e for e in every if e[3] == version and e[1] == "noise=typos" and e[2] in set(trials)]
            assert [
                (*got.inputs[i], t, got.versions[v], o)
                for i, t, v, o in zip(
                    got.input.tolist(), got.trial.tolist(), got.version.tolist(), got.outcome.tolist(), strict=True
                )
            ] == want
            assert set(got.versions) <= {version}
        assert len(ledger.trial_outcomes(scenario="nothing")) == 0


def test_migration_0006_fills_both_tables_from_the_stored_bodies(ledger_url, monkeypatch):
    from fluke.ledger import _base

    runs = _runs(1500, seed=3)
    with open_ledger(ledger_url) as made:
        made.ingest(runs[:900])
        made.ingest(runs[500:])
        made.ingest(runs[1400:] + runs[:10])
        kept = made.query("SELECT vid, scenario, condition, block, seq FROM trial_outcomes")
        sums = made.query("SELECT * FROM unit_cells")
        with made.atomic():
            for table in ("trial_outcomes", "trial_outcomes_staged", "unit_cells"):
                made.execute(f"DROP TABLE {table}")
            made.execute("DELETE FROM migrations WHERE name = '0006_trial_outcomes_and_unit_cells'")
            undo_trial_keys(made)
    monkeypatch.setattr(_base, "MIGRATIONS", _base.MIGRATIONS[:5])
    with open_ledger(ledger_url) as old:
        assert old.migrations()[-1] == "0005_steps_where_runs_die"
    monkeypatch.undo()
    with open_ledger(ledger_url) as ledger:
        assert ledger.migrations()[-2:] == ["0006_trial_outcomes_and_unit_cells", "0007_one_run_per_trial"]
        _assert_tallied(ledger)
        # byte for byte what the ingests wrote, segment by segment
        got = ledger.query("SELECT vid, scenario, condition, block, seq FROM trial_outcomes")
        assert sorted((*r[:4], bytes(r[4])) for r in got) == sorted((*r[:4], bytes(r[4])) for r in kept)
        assert {r[:4]: r[4:7] for r in ledger.query("SELECT * FROM unit_cells")} == {r[:4]: r[4:7] for r in sums}
        ledger.ingest(_runs(200, seed=4))
        _assert_tallied(ledger)


def _ingest_file(url: str, path: str, barrier) -> None:
    from fluke.adapters import read_file as read
    from fluke.ledger import open_ledger as open_

    barrier.wait()
    with open_(url) as ledger:
        ledger.ingest(read(path, prepared=True))


def test_two_processes_ingesting_overlapping_files_at_once(ledger_url, tmp_path):
    # each run once: the files then share their runs in one order (on PostgreSQL two ingests that
    # insert shared runs in different orders can deadlock, which it breaks: "run it again")
    runs = list({r.hash: r for r in _runs(3000, seed=8)}.values())
    open_ledger(ledger_url).close()
    files = [_jsonl(tmp_path / "x.jsonl", runs[:2000]), _jsonl(tmp_path / "y.jsonl", runs[1000:])]
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_ingest_file, args=(ledger_url, f, barrier)) for f in files]
    for p in procs:
        p.start()
    for p in procs:
        p.join(240)
    assert [p.exitcode for p in procs] == [0, 0]
    with open_ledger(ledger_url) as ledger:
        assert ledger.count() == len(kept(runs))
        _assert_tallied(ledger)


def test_kill_9_while_entries_are_staged_leaves_the_tables_as_they_were(tmp_path):
    db = tmp_path / "l.db"
    runs = _runs(3000, seed=9)
    with open_ledger(str(db)) as ledger:
        ledger.ingest(runs[:200])
        before = {t: ledger.query(f"SELECT * FROM {t}") for t in ("trial_outcomes", "unit_cells")}
    code = textwrap.dedent(f"""
        import sys, time
        from fluke.ledger import Ledger, _ingest, _tallies, _writer
        _ingest.BATCH = 50
        Ledger.HOLD_RUNS = 100
        _tallies.HOLD_ENTRIES = 60
        put = _writer.SqliteRunWriter.put_runs
        def slow(self, *a):
            time.sleep(0.05)
            return put(self, *a)
        _writer.SqliteRunWriter.put_runs = slow
        from fluke.cli import main
        sys.exit(main(["--ledger", {str(db)!r}, "ingest", {_jsonl(tmp_path / "big.jsonl", runs[100:])!r}]))
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    raw = sqlite3.connect(db, timeout=30)
    try:
        deadline = time.monotonic() + 240
        while raw.execute("SELECT COUNT(DISTINCT ingest) FROM trial_outcomes_staged").fetchone()[0] < 1 or \
                raw.execute("SELECT COUNT(*) FROM runs").fetchone()[0] < 450:   # of about 730 trials
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() else ""
            time.sleep(0.05)
    finally:
        raw.close()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with open_ledger(str(db)) as ledger:     # opening removes what the killed ingest left
        assert {t: ledger.query(f"SELECT * FROM {t}") for t in ("trial_outcomes", "unit_cells")} == before
        _assert_tallied(ledger)
        ledger.ingest(read_file(tmp_path / "big.jsonl", prepared=True))
        _assert_tallied(ledger)


def test_segments_appended_out_of_ingest_order_still_read_in_ingest_order(tmp_path):
    # two PostgreSQL ingests finish in the other order than they began: the later id's segment first
    from fluke.ledger._tallies import ENTRY, segment

    with open_ledger(str(tmp_path / "o.db")) as ledger:
        ledger.ingest([Run(scenario="s", trial=0, outcome=Outcome(passed=True))])
        vid, = ledger.query("SELECT vid FROM versions")[0]
        seq = segment(9, ENTRY.pack(1, 1, 5) + ENTRY.pack(2, 0, 6)) + segment(
            4, ENTRY.pack(1, 0, 7) + ENTRY.pack(1, 2, 3)
        )
        with ledger.atomic():
            ledger.execute("UPDATE trial_outcomes SET seq = ? WHERE vid = ?", (seq, vid))
        got = ledger.trial_outcomes()
        # trial 1: ingest 4 (keys 3, 7), then ingest 9; then trial 2
        assert got.trial.tolist() == [1, 1, 1, 2] and got.outcome.tolist() == [2, 0, 1, 0]


@pytest.mark.parametrize("part", [1, 5, 64])
def test_the_tables_read_in_parts_of_whole_inputs_equal_the_recount(ledger_url, monkeypatch, part):
    """``trial_outcomes`` and ``outcome_sequences`` decode the rows a part of whole inputs at a time
    (:data:`fluke.ledger._tallies.DECODE_ENTRIES`: the memory of ten million runs); however small
    the parts, the outcomes come out in the recount's order, and the sequences are those outcomes
    with each input's runs counted."""
    import numpy as np

    runs = _runs(1500, seed=23)
    with open_ledger(ledger_url) as ledger:
        ledger.ingest(runs[:700])
        ledger.ingest(runs[400:1100])          # segments of two ingests in one row
        ledger.ingest(runs[1000:])
        monkeypatch.setattr(_tallies, "DECODE_ENTRIES", part)
        _assert_tallied(ledger)
        for filters in ({}, {"trials": [3, 257, 2 ** 40]}, {"version": [Identity(model="a").version]},
                        {"condition": "noise=typos"}):
            got = ledger.trial_outcomes(**filters)
            seqs = ledger.outcome_sequences(**filters)
            assert len(got) > 0
            assert seqs.inputs == got.inputs and seqs.versions == got.versions
            assert seqs.sizes.tolist() == np.bincount(got.input, minlength=len(got.inputs)).tolist()
            assert seqs.outcome.tolist() == got.outcome.tolist()
            assert seqs.outcome.dtype == np.uint8 and seqs.sizes.dtype == np.int64
            monkeypatch.setattr(_tallies, "DECODE_ENTRIES", 10 ** 9)   # one part: the same arrays
            whole = ledger.trial_outcomes(**filters)
            monkeypatch.setattr(_tallies, "DECODE_ENTRIES", part)
            assert whole.versions == got.versions and whole.inputs == got.inputs
            for name in ("version", "input", "trial", "outcome"):
                assert np.array_equal(getattr(whole, name), getattr(got, name)), name
                assert getattr(whole, name).dtype == getattr(got, name).dtype, name
