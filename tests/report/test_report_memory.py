"""The report streams: its peak memory does not grow with the ledger, and the explorer says what it shows."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from fluke.ledger import open_ledger

from ..analysis.test_bounded_memory import _runs  # 9 events (~3 KB) a run, versions a and b alternating

PEAK = """
import json, sys
from fluke.ledger import open_ledger
from fluke.analysis import report
ledger = open_ledger(sys.argv[1], create=False)
result = report(ledger, out=sys.argv[2], versions=["model=a", "model=b"])
doc = result.to_dict()
peak = [int(r.split()[1]) for r in open("/proc/self/status") if r.startswith("VmHWM:")][0]
print(json.dumps({"peak_kb": peak, "runs": [v["runs"] for v in doc["versions"]],
                  "shown": len(doc["explorer"]["runs"]), "total": doc["explorer"]["total"],
                  "passes": doc["comparison"]["passes"]}))
"""


def _peak(tmp_path, n: int) -> dict:
    path = tmp_path / f"{n}.db"
    with open_ledger(str(path)) as ledger:
        ledger.ingest(_runs(n))
    done = subprocess.run([sys.executable, "-c", PEAK, str(path), str(tmp_path / f"{n}.html")],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmHWM from /proc")
def test_report_peak_memory_does_not_grow_with_the_ledger(tmp_path):
    """Before the report streamed it held every run whole (~40 KB each parsed): 45,000 more runs
    cost ~1.8 GB more. Now each run not shown is a reduction of a few hundred bytes."""
    small, big = _peak(tmp_path, 5_000), _peak(tmp_path, 50_000)
    # Every run was read and counted (the oracle: how _runs made them), yet the explorer holds 1,000.
    passes = [sum((i * 2654435761) % 100 < 60 for i in range(side, 50_000, 2)) for side in (0, 1)]
    assert big["runs"] == [25_000, 25_000] and big["passes"] == passes
    assert (small["shown"], small["total"], big["shown"], big["total"]) == (1_000, 5_000, 1_000, 50_000)
    grown_mb = (big["peak_kb"] - small["peak_kb"]) / 1024
    assert grown_mb < 60, (small, big)


def test_the_page_written_a_piece_at_a_time_is_the_page_rendered_whole(tmp_path):
    """report() writes its page section by section (a board, a chart, a table at a time) in chunks; the
    file is exactly the page rendered as one string from the same data, with 120 scenario cells so the
    boards' "show all" charts, their tables and the paired view's charts are all drawn."""
    from fluke.analysis import report
    from fluke.record import Identity, Outcome, Run
    from fluke.report import render_redacted

    runs = [Run(scenario=f"s{s}", trial=t, identity=Identity(model=m),
                outcome=Outcome(passed=(s * 7 + t * 3 + (m == "b")) % 5 != 0))
            for m in ("a", "b") for s in range(120) for t in range(3)]
    with open_ledger(str(tmp_path / "p.db")) as ledger:
        ledger.ingest(runs)
        result = report(ledger, out=tmp_path / "p.html")
    page = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert page == render_redacted(result.data)
    assert page.count('data-chart="suite-board-') >= 4 and "show all 120 cells" in page
    assert len(result.data.paired.rows) == 120 and len(page) > 200_000


def test_redacting_a_section_at_a_time_equals_redacting_the_whole_page(tmp_path):
    """redacted() dumps, redacts and reads back one section at a time; the result is the model read
    back from the whole page's JSON redacted at once, on a report whose explorer carries secrets."""
    from fluke._redact import redact
    from fluke.analysis import report
    from fluke.record import Identity, Outcome, Run, ToolCall
    from fluke.report import ReportData, redacted

    secret = "sk-proj-abcdefghijklmnopqrstuvwx"
    runs = [Run(scenario=f"s{s}", trial=t, identity=Identity(model=m), tags=[f"family/{s % 3}"],
                events=[ToolCall(tool="login", args={"key": secret, "note": f"token {secret}"}, ok=t % 2 == 0)],
                outcome=Outcome(passed=(s + t + (m == "b")) % 3 != 0))
            for m in ("a", "b") for s in range(60) for t in range(2)]
    with open_ledger(str(tmp_path / "r.db")) as ledger:
        ledger.ingest(runs)
        data = report(ledger, out=tmp_path / "r.html").data
    raw = data.model_copy(update={"title": f"title {secret}"})
    got = redacted(raw)
    want = ReportData.model_validate(redact(raw.model_dump(mode="json")))
    assert got == want and got.model_dump(mode="json") == want.model_dump(mode="json")
    assert secret not in got.model_dump_json() and secret in raw.model_dump_json()
    assert got.explorer is not None and len(got.explorer.runs) == 240
