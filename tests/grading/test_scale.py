"""Grading a ledger at scale: worker processes give the one-process grades, a grade killed
part-way resumes without regrading what it stored, and faults are one line.

The oracle is the grader on pydantic Runs read by the adapter (``grade_run``), never the
chunked path itself; the luck rate on the τ-bench gpt-4o airline runs (11 of 84 green runs
lucky, 13.1%) is the figure the airline test derives from the raw JSON.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.grading import evaluate_gate, grade_run, load_spec, luck_rate, row_order

from ..conftest import TAU_AIRLINE, need

SPEC = Path(__file__).resolve().parents[2] / "examples" / "specs" / "airline.yaml"


@pytest.fixture(scope="module")
def airline(tmp_path_factory):
    """A SQLite ledger of the 200 real airline runs, and their grades by the pydantic path."""
    from fluke.adapters import read_file
    from fluke.ledger import open_ledger

    runs = list(read_file(need(TAU_AIRLINE), identity={"model": "gpt-4o"}))
    url = str(tmp_path_factory.mktemp("airline") / "airline.db")
    with open_ledger(url) as ledger:
        ledger.ingest(runs)
    spec = load_spec(SPEC)
    by_hash = {r.hash: grade_run(r, spec) for r in runs}
    return url, spec, [by_hash[h] for h in _stored_order(url)]


def _stored_order(url: str) -> list[str]:
    """The run hashes in the file's storage order (rowid), read with sqlite3 itself."""
    import hashlib

    with sqlite3.connect(url) as db:
        return [
            hashlib.sha256(body.encode()).hexdigest() for (body,) in db.execute("SELECT body FROM runs ORDER BY rowid")
        ]


def _every(ledger, spec, **options):
    """grade_ledger's answer, and every grade it streamed (in the order streamed)."""
    import orjson

    from fluke.analysis import grade_ledger
    from fluke.grading import RunGrade

    lines: list = []
    got = grade_ledger(ledger, spec, sink=lines.extend, **options)
    return got, [RunGrade.from_dict(orjson.loads(raw)) for raw in lines]


def _copy(url: str, tmp_path: Path) -> str:
    out = str(tmp_path / "copy.db")
    with sqlite3.connect(url) as src, sqlite3.connect(out) as dst:
        src.backup(dst)
    return out


@pytest.mark.parametrize("executor, jobs", [("local", 1), ("processes", 2)])
def test_chunked_grades_equal_the_pydantic_grades_and_the_known_luck_rate(airline, tmp_path, executor, jobs):
    from fluke.ledger import open_ledger

    url, spec, expected = airline
    with open_ledger(_copy(url, tmp_path)) as ledger:
        got, grades = _every(ledger, spec, executor=executor, jobs=jobs, chunk=16, batch=40)
        assert (got.executor, got.graded, got.stored, got.reused) == (executor, 200, 200, 0)
        assert grades == expected        # every grade, in the order the file stores the runs
        assert [g.reference for g in grades] == [g.reference for g in expected]
        pooled = got.tally.luck(grades[0].version).pooled
        assert (pooled.lucky, pooled.green) == (11, 84) == (luck_rate(expected).pooled.lucky, 84)
        assert got.tally.gate() == evaluate_gate(expected)
        # the worst rows: the 25 first of the pydantic grades sorted worst first (a stable sort)
        assert list(got.worst[grades[0].version]) == sorted(expected, key=row_order)[:25]
        stored = ledger.grades(spec.digest)
    assert stored == {g.run_hash: g.to_dict() for g in expected}


def test_cli_on_two_processes_answers_as_one_process(airline, tmp_path):
    import json

    url, _, _ = airline
    one = CliRunner().invoke(group, ["--ledger", _copy(url, tmp_path), "grade", "--spec", str(SPEC), "--jobs", "1",
                                     "--json"], catch_exceptions=False)
    (tmp_path / "copy.db").unlink()
    two = CliRunner().invoke(group, ["--ledger", _copy(url, tmp_path), "grade", "--spec", str(SPEC),
                                     "--executor", "processes", "--jobs", "2", "--json"], catch_exceptions=False)
    assert one.exit_code == two.exit_code == 1   # the airline runs fail the gate
    a, b = json.loads(one.output), json.loads(two.output)
    assert a == b
    assert a["luck"][next(iter(a["luck"]))]["pooled"]["lucky"] == 11 and a["stored"] == 200


KILLED = textwrap.dedent("""
    import sys, time
    from fluke.analysis import grade_ledger
    from fluke.grading import load_spec
    from fluke.ledger import open_ledger

    def progress(done, total):
        print(done, flush=True)
        if done >= 60:
            time.sleep(600)          # stored three batches; wait here to be killed

    with open_ledger(sys.argv[1]) as ledger:
        grade_ledger(ledger, load_spec(sys.argv[2]), executor="processes", jobs=2, chunk=20, batch=20,
                     progress=progress)
""")


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT])
def test_a_grade_killed_part_way_resumes_without_regrading_what_it_stored(airline, tmp_path, how):
    """SIGKILL to the grading process alone; SIGINT to its whole process group, as Ctrl-C
    on a terminal sends it (its worker processes too)."""
    from fluke.ledger import open_ledger

    url, spec, expected = airline
    copy = _copy(url, tmp_path)
    # Ctrl-C reaches the child as on a terminal: its SIGINT at the default, whatever the test
    # process was handed (Python turns an inherited SIG_IGN into "ignore Ctrl-C" for good)
    proc = subprocess.Popen([sys.executable, "-c", KILLED, copy, str(SPEC)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        for line in proc.stdout:
            if int(line) >= 60:
                break
        if how == signal.SIGKILL:
            proc.send_signal(signal.SIGKILL)
        else:
            os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(120)
        except subprocess.TimeoutExpired:   # say where it stood, then fail
            stuck = subprocess.run(["ps", "-o", "pid,ppid,stat,wchan:24,etime,cmd", "-s", str(proc.pid)],
                                   capture_output=True, text=True).stdout
            pytest.fail(f"the grade did not stop within 120 s of {how.name}; its session:\n{stuck}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        workers = _session(proc.pid)
        with contextlib.suppress(ProcessLookupError):   # (only if the check below is to fail)
            os.killpg(proc.pid, signal.SIGKILL)
    assert workers == [], "worker processes outlived their killed parent"
    if how == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL
    else:   # the parent stopped on KeyboardInterrupt; the workers (which ignore SIGINT) said nothing
        err = proc.stderr.read()
        assert proc.returncode == -signal.SIGINT and err.count("Traceback") == 1 and "KeyboardInterrupt" in err
    with open_ledger(copy) as ledger:
        kept = len(ledger.grades(spec.digest))
        assert kept == 60             # three whole batches of 20; nothing of a fourth
        again, grades = _every(ledger, spec, executor="processes", jobs=2, chunk=20, batch=20)
        assert (again.graded, again.stored, again.reused) == (200 - kept, 200 - kept, kept)
        assert grades == expected
        assert len(ledger.grades(spec.digest)) == 200


def _session(sid: int, wait: float = 10.0) -> list[int]:
    """The processes still alive in session ``sid`` after up to ``wait`` seconds."""
    import time

    deadline = time.monotonic() + wait
    while True:
        alive = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = Path(f"/proc/{entry}/stat").read_text()
                except OSError:
                    continue
                fields = stat.rsplit(")", 1)[1].split()
                if fields[0] != "Z" and int(fields[3]) == sid:   # state, ..., session id
                    alive.append(int(entry))
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.2)


def _cli(*args):
    return CliRunner().invoke(group, list(args))


def test_a_corrupt_body_met_by_a_worker_is_one_line_naming_the_ledger_and_exit_2(airline, tmp_path):
    url, _, _ = airline
    copy = _copy(url, tmp_path)
    with sqlite3.connect(copy) as db:
        db.execute("UPDATE runs SET body = '{\"scenario\": ' WHERE rowid = (SELECT MAX(rowid) FROM runs)")
    result = _cli("--ledger", copy, "grade", "--spec", str(SPEC), "--executor", "processes", "--jobs", "2")
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "copy.db: stored run" in lines[0] and "not valid JSON" in lines[0]
    assert "Traceback" not in result.output


@pytest.mark.parametrize("args, words", [
    (["--jobs", "0"], "--jobs"),
    (["--executor", "processes", "--address", "127.0.0.1:6379"], "--address is for --executor ray"),
    (["--executor", "threads"], "--executor"),
])
def test_bad_options_are_one_line_and_exit_2(airline, tmp_path, args, words):
    url, _, _ = airline
    result = _cli("--ledger", _copy(url, tmp_path), "grade", "--spec", str(SPEC), *args)
    assert result.exit_code == 2 and words in result.output and "Traceback" not in result.output


def test_a_bad_spec_is_refused_before_any_worker_starts(airline, tmp_path):
    url, _, _ = airline
    bad = tmp_path / "bad.yaml"
    bad.write_text("tools: [a]\nforbiden: [b]\n")
    result = _cli("--ledger", _copy(url, tmp_path), "grade", "--spec", str(bad), "--jobs", "2")
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert "forbiden" in result.output


def test_the_ledger_is_untouched_by_a_missing_ledger_path(tmp_path):
    missing = tmp_path / "none.db"
    result = _cli("--ledger", str(missing), "grade", "--spec", str(SPEC), "--jobs", "2")
    assert result.exit_code == 2 and "no ledger at" in result.output and not os.path.exists(missing)


def test_on_each_backend_batches_are_stored_between_reads_and_a_second_grade_reads_them_back(ledger):
    """The runs stream through the ledger's cursor while batches commit between reads (a
    PostgreSQL server and a SQLite file alike); a second grade grades nothing."""
    from fluke.adapters import read_file

    runs = list(read_file(need(TAU_AIRLINE), identity={"model": "gpt-4o"}))
    ledger.ingest(runs)
    spec = load_spec(SPEC)
    expected = {r.hash: grade_run(r, spec) for r in ledger.runs()}
    first, grades = _every(ledger, spec, executor="processes", jobs=2, chunk=16, batch=16)
    assert (first.graded, first.stored, {g.run_hash: g for g in grades}) == (200, 200, expected)
    again, regrades = _every(ledger, spec, executor="local", chunk=16)
    assert (again.graded, again.stored, again.reused, regrades) == (0, 0, 200, grades)   # the same order
    assert again.worst == first.worst and again.tally.gate() == evaluate_gate(list(expected.values()))


def test_on_each_backend_many_slices_on_two_workers_give_every_run_once_as_one_process(ledger):
    """Slices of a few runs each (rowid ranges on SQLite, hash ranges on PostgreSQL), filtered
    by version: each selected run is graded exactly once, and two worker processes (each with
    its own connection) stream the grades one process streams, in the same order."""
    from fluke.adapters import read_file

    for model in ("gpt-4o", "other"):
        ledger.ingest(read_file(need(TAU_AIRLINE), identity={"model": model}))
    spec = load_spec(SPEC)
    chosen = ledger.resolve_version("model=gpt-4o")
    expected = {r.hash: grade_run(r, spec) for r in ledger.runs(version=chosen)}
    one, grades = _every(ledger, spec, version=chosen, store=False, executor="local", chunk=7)
    two, graded = _every(ledger, spec, version=chosen, store=False, executor="processes", jobs=2, chunk=7)
    assert len(grades) == 200 and {g.run_hash: g for g in grades} == expected   # each once, none of "other"
    assert graded == grades and two.worst == one.worst and two.tally.gate() == one.tally.gate()
    assert (one.graded, two.graded, two.executor) == (200, 200, "processes")
