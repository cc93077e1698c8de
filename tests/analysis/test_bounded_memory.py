"""Bounded memory: a verb's peak memory does not grow with the ledger; past the machine, it says so first."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run, ToolCall, UserMessage

PEAK = """
import json, sys
from fluke.ledger import open_ledger
from fluke.analysis import {verb}
ledger = open_ledger(sys.argv[1], create=False)
result = {call}
doc = result.to_dict()
peak = [int(r.split()[1]) for r in open("/proc/self/status") if r.startswith("VmHWM:")][0]
print(json.dumps({{"peak_kb": peak, "answer": {answer}}}))
"""


def _runs(n: int):
    for i in range(n):
        k = i // 2
        passed = (i * 2654435761) % 100 < 60
        events = [UserMessage(text=f"order W{k:07d} " + "x" * 400)]
        events += [ToolCall(tool=("lookup", "refund")[j % 2], args={"order": f"W{k}", "j": j}, ok=True,
                            result={"status": "ok", "pad": "y" * 300}) for j in range(8)]
        yield Run(scenario=f"s{k % 100}", trial=k // 100, identity=Identity(model="ab"[i % 2]),
                  events=events, outcome=Outcome(passed=passed, died_at=None if passed else 1 + i % 7))


def _ledger(path, n: int) -> str:
    ledger = open_ledger(str(path))
    ledger.ingest(_runs(n))
    ledger.close()
    return str(path)


def _peak(url: str, verb: str, call: str, answer: str) -> dict:
    code = PEAK.format(verb=verb, call=call, answer=answer)
    done = subprocess.run([sys.executable, "-c", code, url], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def ledgers(tmp_path_factory):
    """Ledgers of 5,000 and 50,000 runs, for the verbs whose peak memory is compared."""
    where = tmp_path_factory.mktemp("bounded")
    return _ledger(where / "5k.db", 5_000), _ledger(where / "50k.db", 50_000)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmHWM from /proc")
def test_compare_peak_memory_does_not_grow_with_the_ledger(ledgers):
    small, big = ledgers
    call, answer = 'compare(ledger, "model=a", "model=b", record=False)', 'doc["a"]["runs"]'
    got_small, got_big = _peak(small, "compare", call, answer), _peak(big, "compare", call, answer)
    assert (got_small["answer"], got_big["answer"]) == (2_500, 25_000)   # every run of arm a was read
    # Holding the runs costs ~40 KB each (45,000 more runs: ~1.8 GB more); a reduction ~0.3 KB (~14 MB).
    grown_mb = (got_big["peak_kb"] - got_small["peak_kb"]) / 1024
    assert grown_mb < 60, (got_small, got_big)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmHWM from /proc")
def test_grade_peak_memory_does_not_grow_with_the_ledger_even_streaming_every_grade(ledgers, tmp_path):
    """One process reads, grades and streams every grade (as ``--jsonl`` does) of 5k and of
    50k runs; the second holds no more than the first."""
    small, big = ledgers
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"tools": ["lookup", "refund"], "required": ["lookup"], "forbidden": ["refund"]}))
    out = tmp_path / "grades.jsonl"
    call = (f'grade(ledger, {str(spec)!r}, store=False, jobs=1, '
            f'sink=GradeWriter(open({str(out)!r}, "wb"), lines=True))')
    answer = '[doc["runs_total"], len(doc["worst_runs"]), doc["gate"]["passed"]]'
    got_small = _peak(small, "grade, GradeWriter", call, answer)
    with open(out, "rb") as fh:
        assert sum(1 for _ in fh) == 5_000        # every grade was written (the answer comes last, on close)
    got_big = _peak(big, "grade, GradeWriter", call, answer)
    with open(out, "rb") as fh:
        assert sum(1 for _ in fh) == 50_000
    # every run calls the forbidden refund: the gate fails; 25 worst rows kept for each of 2 versions
    assert (got_small["answer"], got_big["answer"]) == ([5_000, 50, False], [50_000, 50, False])
    # Holding every grade costs ~1 KB each here (45,000 more runs: ~45 MB more); counts hold nothing per run.
    grown_mb = (got_big["peak_kb"] - got_small["peak_kb"]) / 1024
    assert grown_mb < 15, (got_small, got_big)


def test_a_report_past_the_memory_budget_is_refused_before_it_starts(tmp_path, monkeypatch):
    url = _ledger(tmp_path / "l.db", 400)
    out = tmp_path / "r.html"
    monkeypatch.setenv("FLUKE_MEMORY_BUDGET", "4M")   # 400 runs × 48 KB ≈ 18 MB
    done = CliRunner().invoke(group, ["--ledger", url, "report", "--out", str(out)])
    assert done.exit_code == 2
    assert "report on 400 runs would need about 18.3 MB of memory and 4.0 MB is available" in done.output
    assert "--version" in done.output and not out.exists()
    monkeypatch.setenv("FLUKE_MEMORY_BUDGET", "1G")
    assert CliRunner().invoke(group, ["--ledger", url, "report", "--out", str(out)]).exit_code == 0
    assert out.exists()


def test_grade_and_compare_say_the_limit_too(tmp_path, monkeypatch):
    url = _ledger(tmp_path / "l.db", 400)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"tools": ["lookup", "refund"], "required": ["lookup"]}))
    monkeypatch.setenv("FLUKE_MEMORY_BUDGET", "20K")   # 200 runs × 400 B = 80 KB for an arm
    # from the counts a comparison holds nothing per run; under a spec it reads (and holds) every run
    done = CliRunner().invoke(group, ["--ledger", url, "compare", "model=a", "model=b", "--no-record"])
    assert done.exit_code == 0, done.output
    done = CliRunner().invoke(group, ["--ledger", url, "compare", "model=a", "model=b", "--no-record",
                                      "--spec", str(spec)])
    assert done.exit_code == 2 and "the arm 'model=a' on 200 runs would need about 78.1 KB" in done.output
    # grading holds counts, not grades, unless every row is asked for (--all)
    done = CliRunner().invoke(group, ["--ledger", url, "grade", "--spec", str(spec), "--no-store"])
    assert done.exit_code == 0 and "… and 175 more runs" in done.output, done.output
    done = CliRunner().invoke(group, ["--ledger", url, "grade", "--spec", str(spec), "--all"])
    assert done.exit_code == 2 and "grade --all on 400 runs would need about 1.5 MB" in done.output
    assert "--version" in done.output and "--jsonl" in done.output


def test_fixcheck_says_the_limit_of_the_arrays_it_builds_from_the_trial_table(tmp_path, monkeypatch):
    url = _ledger(tmp_path / "l.db", 400)
    monkeypatch.setenv("FLUKE_MEMORY_BUDGET", "30K")   # 200 runs × 200 B = 39.1 KB for an arm
    done = CliRunner().invoke(group, ["--ledger", url, "fixcheck", "model=a", "model=b"])
    assert done.exit_code == 2 and "the arm 'model=a' on 200 runs would need about 39.1 KB" in done.output
    assert "--scenario" in done.output and "Traceback" not in done.output
    monkeypatch.setenv("FLUKE_MEMORY_BUDGET", "50K")
    done = CliRunner().invoke(group, ["--ledger", url, "fixcheck", "model=a", "model=b"])
    assert done.exit_code == 0, done.output
    assert "trial_outcomes table" in done.output
