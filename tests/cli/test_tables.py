"""Terminal tables keep their data at any width: the scenario column folds, numbers are never cut."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from fluke.analysis import believe
from fluke.cli import group
from fluke.ledger import open_ledger

from ..conftest import TAU2_RESULTS, need


@pytest.fixture(scope="module")
def telecom(tmp_path_factory):
    path = need(TAU2_RESULTS / "gpt-4.1_telecom_default_gpt-4.1_1trials.json")
    db = str(tmp_path_factory.mktemp("tables") / "t.db")
    assert CliRunner().invoke(group, ["--ledger", db, "ingest", str(path)]).exit_code == 0
    return db


@pytest.mark.parametrize("width", [80, 120, 200])
def test_believe_on_tau2_telecom_keeps_every_cell_whole(telecom, width):
    with open_ledger(telecom) as ledger:
        result = believe(ledger)
        text = result.render("text", width=width, all_rows=True)
    doc = result.to_dict()
    assert "…" not in text  # nothing squeezed to "0…"
    for row in doc["scenarios"]:
        # every number of the row is printed whole, as the JSON has it
        assert f"{row['mean']:.3f}" in text and f"[{row['interval'][0]:.3f}, {row['interval'][1]:.3f}]" in text
    # the scenario ids are long (up to ~200 characters): they fold inside their column, and the
    # text of each one is all there once the fold is undone
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("───")) + 1
    end = next(i for i, line in enumerate(lines) if line.startswith("next = "))
    column = "".join(line.split("  ")[0] for line in lines[start:end])
    for row in doc["scenarios"]:
        assert re.sub(r"\s", "", row["scenario"]) in re.sub(r"\s", "", column)
    # the table fits the width (paragraphs are left to the terminal to wrap, so they paste whole)
    assert max(len(line) for line in lines[start - 2:end]) <= width


def test_piped_output_is_not_wrapped_at_80_columns(telecom):
    out = CliRunner().invoke(group, ["--ledger", telecom, "believe"]).output
    # a pipe is no terminal: lines run as long as they are, so printed commands can be pasted whole
    assert max(len(line) for line in out.splitlines()) > 200
    assert "… and 15 more scenarios (--all)" in out
