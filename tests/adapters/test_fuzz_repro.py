"""The 68 inputs the outside fuzzing kept (../shared/repro/drills/fuzz_repro), replayed as
``replay_fuzz_repro.py`` does: each reads, or gives one fluke error, never another exception.

Readers: read the file (the format forced when it was found forced), ingest the runs into a
SQLite ledger and read them back. Ledger: the stored body or source put in a ledger and read
(tests/ledger/test_faults.py replays those too). Spec: ``load_spec`` of the file or dict.
"""

from __future__ import annotations

import json
import sys

import pytest

from fluke.adapters import read_file
from fluke.errors import FlukeError
from fluke.ledger import open_ledger

from .._repro import FUZZ_REPRO, GOOD_BODY
from ..conftest import need


def _cases() -> list:
    if not FUZZ_REPRO.is_dir():
        return [pytest.param(None, None, None, marks=pytest.mark.skip(reason=f"no kept inputs at {FUZZ_REPRO}"))]
    cases = []
    for folder in sorted(p for p in FUZZ_REPRO.iterdir() if p.is_dir()):
        summary = json.loads((folder / "summary.json").read_text())
        for info in summary["failures"].values():
            cases.append(pytest.param(folder.name, info["input"], info, id=f"{folder.name}/{info['input']}"))
    return cases


def _replay(reader: str, path, info: dict) -> None:
    if reader == "spec":
        from fluke.grading import load_spec

        if path.name.endswith(".dict.json"):
            limit = sys.getrecursionlimit()
            sys.setrecursionlimit(60000)
            try:
                doc = json.loads(path.read_text())
            finally:
                sys.setrecursionlimit(limit)
            load_spec(doc)
        else:
            load_spec(path)
    elif reader == "ledger":
        from fluke.ledger._rows import row_run

        text = path.read_text()
        if path.name.endswith(".source.json"):
            row_run(GOOD_BODY, text)
            return
        with open_ledger(":memory:") as ledger:
            ledger.ingest([row_run(GOOD_BODY)])
            ledger.execute("UPDATE runs SET body = ?", (text,))
            list(ledger.runs(condition="a=1"))
            list(ledger.runs())
    else:
        runs = list(read_file(path, format=reader if info.get("forced", True) else None))
        with open_ledger(":memory:") as ledger:
            ledger.ingest(runs)
            assert sorted(r.hash for r in ledger.runs()) == sorted({r.hash for r in runs})


def test_all_68_kept_inputs_are_here():
    need(FUZZ_REPRO)
    assert len(_cases()) == 68


@pytest.mark.parametrize("reader, name, info", _cases())
def test_a_kept_fuzz_input_reads_or_gives_one_fluke_error(reader, name, info):
    try:
        _replay(reader, FUZZ_REPRO / reader / name, info)
    except FlukeError as exc:
        assert str(exc) and "\n" not in str(exc), "a fluke error prints as one line"
    except Exception:   # noqa: BLE001 - the point of the test: only fluke's own errors
        raise


@pytest.mark.parametrize("reader, name, info", [c for c in _cases() if c.values[0] not in ("spec", "ledger")])
def test_fluke_ingest_of_a_kept_input_stores_it_or_says_one_line_with_exit_2(reader, name, info, tmp_path):
    """The same inputs through the command line: exit 0, or one line on stderr naming the
    file with exit 2, and never a traceback."""
    from click.testing import CliRunner

    from fluke.cli import group

    path = FUZZ_REPRO / reader / name
    forced = ["--format", reader] if info.get("forced", True) else []
    result = CliRunner().invoke(group, ["--ledger", str(tmp_path / "l.db"), "ingest", *forced, str(path)],
                                catch_exceptions=False)
    assert result.exit_code in (0, 2), result.output
    if result.exit_code == 2:
        lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and str(path) in lines[0], lines
