"""Names are bounded at ingest (issue 27, point 6): a scenario, unit, condition or tag of more
than MAX_NAME characters, or an identity string of more than MAX_IDENTITY, is refused with the
file, the line and the field named; nothing of the file is stored. Every read path agrees: the
model, the plain-line fast path and the prepared-fields path."""

from __future__ import annotations

import json
import sqlite3

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from fluke.cli import group
from fluke.record import Identity, Outcome, Run
from fluke.record._storable import MAX_IDENTITY, MAX_NAME

GOOD = {"scenario": "ok", "trial": 0, "outcome": {"passed": True}, "identity": {"model": "m"}}
CASES = {
    "scenario": {**GOOD, "scenario": "s" * 100_000},
    "unit": {**GOOD, "unit": "u" * (MAX_NAME + 1)},
    "condition": {**GOOD, "condition": {"lang": "x" * (MAX_NAME + 1)}},
    "tags": {**GOOD, "tags": ["t" * (MAX_NAME + 1)]},
    "identity.model": {**GOOD, "identity": {"model": "m" * (MAX_IDENTITY + 1)}},
}


@pytest.mark.parametrize("field", sorted(CASES))
def test_a_name_too_long_is_refused_with_its_field_and_nothing_is_stored(tmp_path, field):
    path = tmp_path / "runs.jsonl"
    # a good line first: the refusal must keep it out too (all or nothing)
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(CASES[field]) + "\n")
    ledger = tmp_path / "l.db"
    result = CliRunner().invoke(group, ["--ledger", str(ledger), "ingest", "--format", "fluke", str(path)])
    assert result.exit_code == 2
    message = result.output.strip().splitlines()
    assert len(message) == 1 and "Traceback" not in result.output
    assert f"runs.jsonl: line 2: field {field}" in message[0] and "characters long" in message[0]
    if ledger.exists():
        with sqlite3.connect(ledger) as conn:
            assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def test_the_bound_itself_is_accepted_and_one_more_is_not():
    Run(scenario="s" * MAX_NAME, identity=Identity(model="m" * MAX_IDENTITY), outcome=Outcome(passed=True))
    with pytest.raises(ValidationError, match=f"is {MAX_NAME + 1} characters long"):
        Run(scenario="s" * (MAX_NAME + 1))
    with pytest.raises(ValidationError, match=f"is {MAX_IDENTITY + 1} characters long"):
        Identity(harness="h" * (MAX_IDENTITY + 1))


def test_the_fast_paths_leave_a_long_name_to_the_model():
    from fluke.record._line import LinePreparer
    from fluke.record._prepared import prepare

    read = LinePreparer("runs.jsonl")
    assert read(json.dumps(GOOD).encode(), 1) is not None      # the fast path is on for a plain line
    for field in ("scenario", "unit", "condition", "tags"):
        assert read(json.dumps(CASES[field]).encode(), 2) is None, field
    assert prepare(dict(GOOD)) is not None
    for field in ("scenario", "unit", "condition", "tags"):
        assert prepare(dict(CASES[field])) is None, field
