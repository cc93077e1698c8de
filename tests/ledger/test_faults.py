"""The drills of ../shared/repro/drills/repro_defects.sh, each as a test: hostile runs and
environment faults end in one fluke error (exit 2 at the command line), and the ledger
stays readable and whole."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import threading
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from fluke.adapters import read_file
from fluke.cli import group
from fluke.errors import FlukeError, FormatVersionError, InputError, LedgerError
from fluke.ledger import open_ledger
from fluke.record import Run, ToolCall, content_json

RUN = {"format_version": 1, "scenario": "s", "trial": 0}


def _write(path: Path, *lines: dict) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _cli(ledger_url: str, *args: str):
    return CliRunner().invoke(group, ["--ledger", ledger_url, *map(str, args)], catch_exceptions=False)


def _one_line_error(result) -> str:
    lines = [ln for ln in (result.stderr or result.output).strip().splitlines() if ln]
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert len(lines) == 1, lines
    return lines[0]


# -- pg-nul, pg-bigtrial: one run must not make a PostgreSQL ledger unreadable ---------------

NUL_RUN = {"format_version": 1, "scenario": "nul", "events": [
    {"kind": "tool", "tool": "t", "ok": True, "result": "a\u0000b", "args": {"q": "x\u0000y"}},
    {"kind": "user", "text": "hello\u0000"}]}


def test_a_nul_in_a_tool_result_is_stored_and_the_ledger_answers_every_read(ledger_url, tmp_path):
    path = _write(tmp_path / "a.jsonl", NUL_RUN, RUN)
    assert _cli(ledger_url, "ingest", path).exit_code == 0
    runs = _cli(ledger_url, "--json", "runs")
    assert runs.exit_code == 0, runs.output
    listed = json.loads(runs.output)
    assert sorted(r["run"]["scenario"] for r in listed["runs"]) == ["nul", "s"]
    out = tmp_path / "export.jsonl"
    assert _cli(ledger_url, "export", "-o", out).exit_code == 0, "export"
    exported = [Run.model_validate_json(line) for line in out.read_text().splitlines()]
    nul = next(r for r in exported if r.scenario == "nul")
    assert nul.events[0].result == "a\x00b" and nul.events[1].text == "hello\x00"
    assert {r.hash for r in exported} == {r.hash for r in read_file(path)}     # lossless
    with open_ledger(ledger_url) as ledger:
        assert ledger.count(since="0000") == 0 and len(list(ledger.runs(scenario="nu*"))) == 1
    summary = _cli(ledger_url, "summary")
    assert summary.exit_code == 0, summary.output


def test_a_nul_in_a_name_is_refused_at_read_naming_file_record_and_field(tmp_path):
    path = _write(tmp_path / "a.jsonl", RUN, {"format_version": 1, "scenario": "bad\u0000name"})
    with pytest.raises(InputError) as caught:
        list(read_file(path))
    assert (caught.value.file, caught.value.record, caught.value.field) == (str(path), "line 2", "scenario")
    assert "NUL" in str(caught.value)
    cond = _write(tmp_path / "c.jsonl", dict(RUN, condition={"lang": "f\u0000r"}))
    with pytest.raises(InputError, match="field condition.*NUL"):
        list(read_file(cond))


def test_a_trial_of_2_to_the_63_is_refused_at_read_naming_the_field(ledger_url, tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text('{"format_version":1,"scenario":"big","trial":9223372036854775808}\n' + json.dumps(RUN) + "\n")
    with pytest.raises(InputError) as caught:
        list(read_file(path))
    assert (caught.value.record, caught.value.field) == ("line 1", "trial")
    ok = _write(tmp_path / "ok.jsonl", dict(RUN, trial=2 ** 63 - 1))
    assert _cli(ledger_url, "ingest", ok).exit_code == 0
    line = _one_line_error(_cli(ledger_url, "ingest", path))
    assert re.search(r"a\.jsonl: line 1: field trial: .*9223372036854775807", line), line
    assert _cli(ledger_url, "runs").exit_code == 0
    with open_ledger(ledger_url) as ledger:
        assert [r.trial for r in ledger.runs()] == [2 ** 63 - 1]


@pytest.mark.postgres
def test_a_postgres_ledger_poisoned_by_an_older_fluke_still_reads(postgres_url):
    """Rows an older fluke let in (a NUL escape in a body, a trial past BIGINT) no longer make
    every query of the ledger fail."""
    with open_ledger(postgres_url) as ledger:
        ledger.ingest([Run(scenario="s", trial=t) for t in range(3)])
        good = Run(scenario="z", trial=5)
        nul = content_json(Run(scenario="nul", events=[ToolCall(tool="t", result="a\x00b")]))
        big = content_json(good).replace(b'"trial":5', b'"trial":9223372036854775808')
        with ledger.atomic():
            for key, body in ((11, nul), (12, big)):
                ledger.execute("INSERT INTO runs (k, vid, ingest, scenario, source, body) "
                               "VALUES (?, 1, 1, 'x', NULL, ?)", (key, body.decode()))
        trials = [json.loads(b)["trial"] for (b,) in ledger.query(
            f"SELECT body FROM runs ORDER BY {ledger._json_field('trial', integer=True)}")]
        assert trials == [0, 0, 1, 2, 2 ** 63]
        assert ledger.count(until="9999") == 0     # a date filter reads every body


# -- deep-args, tau-missing-id ----------------------------------------------------------------

def test_args_nested_300_deep_are_refused_at_read_and_by_the_cli(tmp_path):
    deep = None
    for _ in range(300):
        deep = [deep]
    path = _write(tmp_path / "a.jsonl",
                  {"format_version": 1, "scenario": "deep", "events": [{"kind": "tool", "tool": "t", "args": deep}]},
                  RUN)
    with pytest.raises(InputError) as caught:
        list(read_file(path))
    assert (caught.value.record, caught.value.field) == ("line 1", "events.0.tool.args")
    assert "nested deeper than 200" in str(caught.value)
    line = _one_line_error(_cli(str(tmp_path / "l.db"), "ingest", path))
    assert "line 1: field events.0.tool.args" in line
    nested_ok = None
    for _ in range(150):
        nested_ok = [nested_ok]
    run = Run(scenario="ok", events=[ToolCall(tool="t", args=nested_ok)])
    with open_ledger(str(tmp_path / "m.db")) as ledger:
        ledger.ingest([run])
        assert next(ledger.runs()) == run


def test_a_tau_bench_record_without_task_id_names_it(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('[{"task_id":0,"reward":1,"traj":[]},{"reward":1,"traj":[]}]')
    line = _one_line_error(_cli(str(tmp_path / "l.db"), "ingest", path))
    assert re.search(r"t\.json: record 2: field task_id: is missing", line), line


# -- stored bodies that do not read: newer format, edited, corrupted ------------------------------

def _stored(tmp_path: Path) -> str:
    url = str(tmp_path / "l.db")
    with open_ledger(url) as ledger:
        ledger.ingest([Run(scenario="s", trial=t) for t in range(2)])
    return url


def _edit_first_body(url: str, change) -> None:
    conn = sqlite3.connect(url)
    rowid, body = conn.execute("SELECT rowid, body FROM runs ORDER BY rowid LIMIT 1").fetchone()
    conn.execute("UPDATE runs SET body = ? WHERE rowid = ?", (change(body), rowid))
    conn.commit()
    conn.close()


def test_a_stored_run_of_a_newer_format_says_to_upgrade(tmp_path):
    url = _stored(tmp_path)
    _edit_first_body(url, lambda b: b.replace('"format_version":1', '"format_version":2'))
    with open_ledger(url) as ledger, pytest.raises(FormatVersionError) as caught:
        list(ledger.runs())
    assert caught.value.field == "format_version" and "pip install -U fluke" in str(caught.value)
    line = _one_line_error(_cli(url, "runs"))
    assert "newer fluke" in line and "pip install -U fluke" in line


@pytest.mark.parametrize("change, field", [
    (lambda b: b.replace('"scenario":"s"', '"scenario":""'), "scenario"),        # no longer a run
    (lambda b: b.replace('"trial":0', '"trial":"zero"'), "trial"),
    (lambda b: b[:40], None),                                                     # not JSON at all
    (lambda b: "[1, 2]", None),                                                   # JSON, not a run
])
def test_a_stored_run_that_no_longer_reads_names_the_ledger_and_the_run(tmp_path, change, field):
    url = _stored(tmp_path)
    _edit_first_body(url, change)
    with open_ledger(url) as ledger:
        with pytest.raises(LedgerError) as caught:
            list(ledger.runs())
        assert str(caught.value).startswith(f"{url}: ")
        if field:
            assert f"field {field}" in str(caught.value)
        else:
            with pytest.raises(LedgerError):
                list(ledger.runs(condition="a=1"))       # the condition filter parses the body too
        assert "changed outside fluke" in str(caught.value)
    _one_line_error(_cli(url, "runs"))


def test_a_corrupted_sqlite_file_is_one_ledger_error(tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 300)
    with pytest.raises(LedgerError, match="not a fluke ledger"):
        open_ledger(str(junk))
    _one_line_error(_cli(str(junk), "summary"))
    url = str(tmp_path / "l.db")
    with open_ledger(url) as ledger:
        ledger.ingest([Run(scenario=f"s{i}", events=[ToolCall(tool="t", result="x" * 3000)]) for i in range(300)])
        ledger.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(Path(url).read_bytes())
    page = 16384
    for start in range(2 * page, len(data) - page, 3 * page):   # damage pages past the schema
        data[start:start + page] = b"\xa5" * page
    Path(url).write_bytes(bytes(data))
    with pytest.raises(LedgerError, match="is damaged|not a fluke ledger"):
        with open_ledger(url) as ledger:
            list(ledger.runs())
            ledger.ingest([Run(scenario="after", trial=t) for t in range(500)])
    _one_line_error(_cli(url, "runs"))


def test_a_ledger_of_a_newer_schema_says_to_upgrade(ledger_url):
    with open_ledger(ledger_url) as ledger, ledger.atomic():
        ledger.execute("INSERT INTO migrations (name, applied_at) VALUES ('9999_from_the_future', 'x')")
    with pytest.raises(LedgerError, match="newer fluke.*pip install -U fluke"):
        open_ledger(ledger_url)
    assert "9999_from_the_future" in _one_line_error(_cli(ledger_url, "summary"))


def test_the_fuzz_kept_stored_bodies_give_ledger_errors():
    """The ledger inputs kept by the outside fuzzing (fuzz_repro/ledger): one fluke error each."""
    from .._repro import FUZZ_REPRO, GOOD_BODY

    folder = FUZZ_REPRO / "ledger"
    if not folder.is_dir():
        pytest.skip(f"no kept inputs at {folder}")
    from fluke.ledger._rows import row_run

    seen = 0
    for path in sorted(p for p in folder.glob("*.json") if p.name != "summary.json"):
        text = path.read_text()
        with pytest.raises(FlukeError):
            if path.name.endswith(".source.json"):
                row_run(GOOD_BODY, text)
            else:
                with open_ledger(":memory:") as ledger:
                    ledger.ingest([row_run(GOOD_BODY)])
                    ledger.execute("UPDATE runs SET body = ?", (text,))
                    list(ledger.runs())
                    list(ledger.runs(condition="a=1"))
        seen += 1
    assert seen == 6


# -- pg-down: the connection lost mid-ingest --------------------------------------------------

@pytest.mark.postgres
def test_postgres_lost_mid_ingest_is_one_ledger_error_and_keeps_nothing(postgres_url):
    import psycopg

    with open_ledger(postgres_url) as ledger:
        ledger.ingest([Run(scenario="before", trial=t) for t in range(5)])
    ledger = open_ledger(postgres_url)
    ledger.HOLD_RUNS = 1          # write each batch as it is built, so the loss is mid-write
    pid = ledger.query("SELECT pg_backend_pid()")[0][0]
    written = []

    def runs():
        for i in range(20_000):
            if i == 12_000:   # two batches are written by now; the server ends this session
                written.append(ledger.query("SELECT COUNT(*) FROM runs")[0][0])
                with psycopg.connect(postgres_url, autocommit=True) as admin:
                    admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            yield Run(scenario=f"s{i % 50}", trial=i)

    with pytest.raises(LedgerError, match="connection to PostgreSQL was lost.*nothing of this write was kept"):
        ledger.ingest(runs())
    ledger.close()
    assert written and written[0] >= 10_005
    with open_ledger(postgres_url) as fresh:
        assert fresh.count() == 5 and fresh.query("SELECT COUNT(*) FROM runs")[0][0] == 5
        assert len(fresh.query("SELECT id FROM ingests")) == 1


# -- disk-full ---------------------------------------------------------------------------------

def test_a_full_disk_mid_ingest_is_one_ledger_error_and_keeps_nothing(tmp_path):
    url = str(tmp_path / "l.db")
    with open_ledger(url) as ledger:
        ledger.ingest([Run(scenario="before", trial=t) for t in range(5)])
        pages = ledger.query("PRAGMA page_count")[0][0]
        ledger.execute(f"PRAGMA max_page_count = {pages + 40}")   # SQLite's own SQLITE_FULL, as on ENOSPC
        big = [Run(scenario=f"p{i}", events=[ToolCall(tool="t", result="x" * 600)]) for i in range(3000)]
        with pytest.raises(LedgerError, match="disk is full.*nothing of this write was kept"):
            ledger.ingest(big)
        assert ledger.count() == 5 and ledger.query("SELECT COUNT(*) FROM runs")[0][0] == 5


def _mount(*args: str) -> bool:
    return subprocess.run(["mount", *args], capture_output=True).returncode == 0


def test_a_full_tmpfs_through_the_cli_is_one_line_and_exit_2(tmp_path):
    mnt = tmp_path / "m"
    mnt.mkdir()
    # 8 MiB: a new ledger is its tables' first pages of 64 KiB each (PAGE_SIZE), written through the log
    if not _mount("-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mnt)):
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        url = str(mnt / "l.db")
        assert _cli(url, "ingest", _write(tmp_path / "s.jsonl", RUN)).exit_code == 0
        big = _write(tmp_path / "big.jsonl", *({"format_version": 1, "scenario": f"p{i}",
                                                "events": [{"kind": "user", "text": "x" * 3000}]}
                                               for i in range(3000)))
        line = _one_line_error(_cli(url, "ingest", big))
        assert "disk is full" in line
        with open_ledger(url) as ledger:
            assert ledger.count() == 1
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


# -- ro-mount ----------------------------------------------------------------------------------

def test_a_ledger_on_a_read_only_mount_can_still_be_read(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    url = str(home / "l.db")
    with open_ledger(url) as ledger:
        ledger.ingest([Run(scenario="s", trial=t) for t in range(3)])
    ro = tmp_path / "ro"
    ro.mkdir()
    if not (_mount("--bind", str(home), str(ro)) and _mount("-o", "remount,bind,ro", str(ro))):
        subprocess.run(["umount", str(ro)], check=False)
        pytest.skip("cannot make a read-only bind mount here (needs root)")
    try:
        with open_ledger(str(ro / "l.db")) as ledger:
            assert ledger.read_only
            assert sorted(r.trial for r in ledger.runs()) == [0, 1, 2]
            assert sum(c.trials for c in ledger.counts()) == 3
            with pytest.raises(LedgerError, match="read-only"):
                ledger.ingest([Run(scenario="new")])
        summary = _cli(str(ro / "l.db"), "summary")
        assert summary.exit_code == 0, summary.output
        line = _one_line_error(_cli(str(ro / "l.db"), "ingest", _write(tmp_path / "a.jsonl", RUN)))
        assert "read-only" in line
    finally:
        subprocess.run(["umount", "-l", str(ro)], check=False)


# -- the stored body reads back exactly --------------------------------------------------------

def test_hostile_but_storable_values_round_trip_through_each_backend(ledger):
    run = Run(scenario="s", trial=-(2 ** 63), seed=2 ** 63 - 1, condition={"big": 2 ** 62, "x": "é"},
              events=[ToolCall(tool="t", args={"n": 2 ** 64 - 1, "neg": -(2 ** 63), "s": "\x1b[2J\x00"},
                               result=[1.5e308, -0.0, "\ud7ff"])])
    ledger.ingest([run])
    [back] = list(ledger.runs())
    assert back == run and back.hash == run.hash
    assert orjson.loads(ledger.query("SELECT body FROM runs")[0][0])["trial"] == -(2 ** 63)


def test_concurrent_reads_do_not_see_a_half_written_ingest(tmp_path):
    url = str(tmp_path / "l.db")
    with open_ledger(url) as ledger:
        ledger.ingest([Run(scenario="s", trial=0)])
    seen = []
    writer = open_ledger(url)
    writer.HOLD_RUNS = 1

    def runs():
        for i in range(12_000):
            if i == 11_000:
                with open_ledger(url) as reader:   # another connection, mid-ingest
                    seen.append(reader.count())
            yield Run(scenario="t", trial=i)

    thread = threading.Thread(target=lambda: writer.ingest(runs()))
    thread.start()
    thread.join()
    writer.close()
    assert seen == [1]
    with open_ledger(url) as ledger:
        assert ledger.count() == 12_001
