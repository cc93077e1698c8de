"""Start-up: ``fluke --help`` loads neither scipy nor pydantic, nor does ``summary``, which answers from the
counts table; the CLI's format names are the registry's."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
sys.argv = ["fluke", *json.loads(sys.argv[1])]
from fluke.cli import main
try:
    main()
except SystemExit:
    pass
heavy = ("scipy", "pydantic", "numpy", "fluke.record", "fluke.record._run", "fluke.record._events",
         "fluke.adapters._registry")
print(json.dumps(sorted(m for m in heavy if m in sys.modules)), file=sys.stderr)
"""


def loaded(*args: str, cwd=None) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(list(args))], capture_output=True, text=True,
                          cwd=cwd, timeout=120)
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
