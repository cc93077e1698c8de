"""Start-up: ``fluke --help`` loads neither scipy nor pydantic, nor does ``summary``, which answers from the
counts table; the CLI's format names are the registry's."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
watch = json.loads(sys.argv[2])
sys.argv = ["fluke", *json.loads(sys.argv[1])]
from fluke.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps(sorted(m for m in watch if m in sys.modules)), file=sys.stderr)
"""
HEAVY = ("scipy", "pydantic", "numpy", "fluke.record", "fluke.record._run", "fluke.record._events",
         "fluke.adapters._registry")
#: What a count verb printing to a pipe or a file does without (issue 37: summary's start-up): rich's
#: console and table (its text is drawn plainly, ``fluke.analysis._render.plain_text``), the ingest
#: machinery, the secret patterns compiled only when a string may hold one, difflib (a misspelt verb), and
#: rich's table of character widths (every character of a count table is one cell wide).
LAZY = ("rich.console", "rich.table", "rich.cells", "fluke.ledger._ingest", "fluke.ledger._overlap", "difflib",
        "shutil")


def loaded(*args: str, cwd=None, watch=HEAVY) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(list(args)), json.dumps(list(watch))],
                          capture_output=True, text=True, cwd=cwd, timeout=120)
    return json.loads(done.stderr.strip().splitlines()[-1])


def test_help_imports_no_scipy_nor_pydantic():
    assert loaded("--help") == []


def test_verb_help_imports_no_scipy_nor_pydantic():
    # the verbs whose options list the input formats (ingest, grade) used to import every reader
    for verb in ("ingest", "grade", "compare", "runs"):
        assert loaded(verb, "--help") == [], verb


def test_format_names_are_the_registry():
    from fluke.adapters import FORMAT_NAMES, FORMATS

    assert FORMAT_NAMES == tuple(FORMATS)[:len(FORMAT_NAMES)]   # plugins' formats come after fluke's own
    assert all(FORMATS[name].load().name == name for name in FORMAT_NAMES)


def test_verbs_that_need_no_statistics_import_no_scipy(tmp_path):
    from fluke.ledger import open_ledger
    from fluke.record import Identity, Outcome, Run

    url = str(tmp_path / "l.db")
    open_ledger(url).ingest([Run(scenario=f"s{i}", identity=Identity(model="m"), outcome=Outcome(passed=i % 2 == 0))
                             for i in range(6)])
    for args in (["summary"], ["runs"], ["runs", "--jsonl"], ["--json", "runs"], ["export", "-o", str(tmp_path / "x")]):
        found = loaded("--ledger", url, *args, cwd=tmp_path)
        assert "scipy" not in found and "numpy" not in found, (args, found)


def test_summary_builds_no_run_model(tmp_path):
    """The count path reads the counts table and the stored identities as JSON: the pydantic run model
    (``fluke.record._run``, its events) and pydantic itself are never imported, for a version selected by
    a field too; ``runs`` (which builds every run) does import them, so the probe can see them."""
    from fluke.ledger import open_ledger
    from fluke.record import Identity, Outcome, Run

    url = str(tmp_path / "l.db")
    open_ledger(url).ingest([Run(scenario=f"s{i}", identity=Identity(model="m"), outcome=Outcome(passed=i % 2 == 0))
                             for i in range(6)])
    for args in (["summary"], ["--json", "summary"], ["summary", "--version", "model=m"]):
        found = loaded("--ledger", url, *args, cwd=tmp_path)
        assert not {"pydantic", "fluke.record._run", "fluke.record._events"} & set(found), (args, found)
    assert {"pydantic", "fluke.record._run"} <= set(loaded("--ledger", url, "runs", cwd=tmp_path))


def test_summary_to_a_pipe_loads_neither_rich_console_nor_the_ingest(tmp_path):
    """The probe's output is a pipe: ``summary`` draws its tables without rich's console, opens the
    ledger without the ingest machinery, and compiles none of the secret patterns its strings do not
    need; on a terminal rich draws them (checked here by what a misspelt verb loads: difflib)."""
    from fluke.ledger import open_ledger
    from fluke.record import Identity, Outcome, Run

    url = str(tmp_path / "l.db")
    open_ledger(url).ingest([Run(scenario=f"s{i}", identity=Identity(model="m"), outcome=Outcome(passed=i % 2 == 0))
                             for i in range(40)])
    for args in (["summary"], ["--json", "summary"], ["summary", "--all"]):
        assert loaded("--ledger", url, *args, cwd=tmp_path, watch=LAZY) == [], args
    assert "difflib" in loaded("--ledger", url, "sumary", cwd=tmp_path, watch=LAZY)
    probe = "import fluke._redact as r, sys; r.redact_text('scn-1 0/1'); print(r._ASSIGNED._compiled is None)"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60).stdout.strip() == "True"


BLAS_PROBE = """
import os
from fluke.cli import main
try:
    main(["--help"])
except SystemExit:
    pass
import numpy
print(os.environ.get("OPENBLAS_NUM_THREADS"))
"""


def _blas_threads_after_main(**env: str) -> str:
    import os

    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", BLAS_PROBE], env={**clean, **env}, capture_output=True, text=True,
                         check=True)
    return out.stdout.strip().splitlines()[-1]


def test_the_command_line_holds_blas_to_one_thread_unless_told_otherwise():
    from fluke.cli import BLAS_THREADS

    assert _blas_threads_after_main() == BLAS_THREADS == "1"
    assert _blas_threads_after_main(OPENBLAS_NUM_THREADS="3") == "3"      # the user's number stands
    assert _blas_threads_after_main(OMP_NUM_THREADS="2") == "None"        # and so does OpenMP's
