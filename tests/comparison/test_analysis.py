"""The comparison verbs as fluke.analysis functions, on the real τ-bench / τ²-bench ledger.

``golden/*.json`` is what ``fluke --json <verb>`` printed before the verbs moved out of the CLI
(commit 79f7878, on the same ledger); each result's ``to_dict()`` must give the same document,
except the comparison summary, whose p-value is now printed by :func:`fluke.format.fmt_p`.
"""

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from fluke import analysis
from fluke.cli import group
from fluke.comparison import compare_survival
from fluke.errors import InputError, UsageError
from fluke.format import fmt_p
from fluke.ledger import open_ledger
from fluke.simulate import STAGES

from ._realdata import FINE_TUNED, TAU1_AIRLINE, need, tau1_airline_runs

GOLDEN = Path(__file__).parent / "golden"
SPEC = Path(__file__).resolve().parents[2] / "examples" / "specs" / "airline.yaml"


def golden(name: str) -> dict:
    return json.loads((GOLDEN / f"{name}.json").read_text())


def as_doc(result) -> dict:
    return json.loads(result.to_json())  # to_dict() as JSON carries it (tuples as lists, NaN as null)


def md_tables(text: str) -> list[list[list[str]]]:
    """Each Markdown table as rows of cell texts (header first), by a CommonMark + GFM-tables parser."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    tables, rows, row = [], None, None
    for tok in tokens:
        if tok.type == "table_open":
            rows = []
        elif tok.type == "tr_open":
            row = []
        elif tok.type == "inline" and row is not None:
            row.append(tok.content)
        elif tok.type == "tr_close":
            rows.append(row)
            row = None
        elif tok.type == "table_close":
            tables.append(rows)
    return tables


@pytest.fixture(scope="module")
def ledger(tau_ledger):
    with open_ledger(tau_ledger) as opened:
        yield opened


# -- compare ------------------------------------------------------------------------------
@pytest.mark.parametrize("name, scenario", [("compare_all", None), ("compare_airline", "airline/*")])
def test_compare_to_dict_is_the_old_json(ledger, name, scenario):
    result = analysis.compare(ledger, "model=gpt-4.1", f"model={FINE_TUNED}", scenario=scenario, record=False)
    old = golden(name)
    # the one legitimate change: the summary's p-value, once "0.00308" / "1", is now fmt_p's
    assert re.search(r"\(p = [0-9.e-]+[;)]", old["summary"])
    old["summary"] = re.sub(r"\(p = [^;)]+", f"(p = {fmt_p(old['pvalue'])}", old["summary"])
    assert as_doc(result) == old


def test_compare_prints_one_p_value_for_one_number(ledger):
    result = analysis.compare(ledger, "model=gpt-4.1", f"model={FINE_TUNED}", record=False)
    text = result.render("text")
    verdict, p_line = text.splitlines()[:2]
    assert verdict.startswith("different (p = 0.003;")                         # the verdict comes first
    shown = re.findall(r"\bp = ([^;,)\s]+)", verdict + "\n" + p_line)
    assert shown == ["0.003", "0.003"] == [fmt_p(result.comparison.result.pvalue)] * 2
    assert "0.00308" not in text and "[bold" not in text and "[dim]" not in text


def test_summary_floors_a_tiny_p_value_like_every_other_output():
    # 30 runs die at step 1 in B and none in A: p far below 0.001 (it printed 4.76e-07-style before)
    died = [False] * 30 + [True] * 30
    result = compare_survival([3] * 30 + [1] * 30, died, [False] * 30 + [True] * 30)
    assert result.pvalue < 1e-6
    assert "(p = <0.001;" in result.summary() and "e-" not in result.summary()


def test_compare_markdown_tables_keep_the_rows(ledger):
    result = analysis.compare(ledger, "model=gpt-4.1", f"model={FINE_TUNED}", rows=5, record=False)
    tables = md_tables(result.render("markdown"))
    assert [t[0] for t in tables] == [["step", "event", "A", "B", "p", "q"], ["cell", "A", "B", "p", "q"]]
    assert [len(t) - 1 for t in tables] == [5, 5]
    every = md_tables(result.render("markdown", all_rows=True))
    payload = result.payload()
    assert [len(t) - 1 for t in every] == [len(payload["steps"]), len(payload["cells"])] == [40, 100]
    lowest = min(payload["steps"], key=lambda s: (s["qvalue"], s["step"]))
    assert every[0][1][0] == str(lowest["step"]) and every[0][1][5] == fmt_p(lowest["qvalue"])
    assert analysis.compare(ledger, "model=gpt-4.1", f"model={FINE_TUNED}", rows=0, record=False) \
        .render("markdown").count("| ---") == 0


def test_compare_records_a_comparison_only_when_asked(tmp_path):
    with open_ledger(str(tmp_path / "rec.db")) as own:
        own.ingest(tau1_airline_runs())
        analysis.compare(own, "model=gpt-4o@0-1", "model=gpt-4o@2-3", record=False)
        assert own.documents("comparison") == []
        result = analysis.compare(own, "model=gpt-4o@0-1", "model=gpt-4o@2-3")
        [doc] = own.documents("comparison")
        assert doc.body == {k: result.payload()[k] for k in ("a", "b", "verdict", "pvalue", "detection_limit",
                                                             "scenario")}
        assert doc.body["a"]["trials"] == [0, 1] and doc.body["b"]["runs"] == 100


def test_compare_with_a_real_spec_dies_at_the_first_hard_violation(ledger):
    from fluke.grading import first_hard_index, grade_run, load_spec

    need(TAU1_AIRLINE)
    result = analysis.compare(ledger, "model=gpt-4o@0-1", "model=gpt-4o@2-3", spec=SPEC, record=False)
    spec = load_spec(SPEC)
    runs = [r for r in tau1_airline_runs() if r.outcome.passed is False and r.outcome.died_at is None]
    hard = sum(first_hard_index(grade_run(r, spec)) is not None for r in runs)
    doc = result.payload()
    assert 0 < hard < len(runs)                            # the spec moves some deaths, not all
    assert doc["died_at_from"]["hard violation"] == hard
    assert doc["died_at_from"]["hard violation"] + doc["died_at_from"]["last event"] == len(runs) == 116
    assert doc["spec"] == str(SPEC)
    plain = analysis.compare(ledger, "model=gpt-4o@0-1", "model=gpt-4o@2-3", record=False).payload()
    assert plain["died_at_from"]["hard violation"] == 0 and plain["statistic"] != doc["statistic"]


def test_compare_refuses_bad_options_with_fluke_errors(ledger):
    with pytest.raises(UsageError, match="alpha=1.5"):
        analysis.compare(ledger, "model=gpt-4.1", f"model={FINE_TUNED}", alpha=1.5, record=False)
    with pytest.raises(UsageError, match="ceiling=1"):
        analysis.compare(ledger, "model=gpt-4.1", f"model={FINE_TUNED}", ceiling=1, record=False)
    with pytest.raises(UsageError, match="select the same runs"):
        analysis.compare(ledger, "model=gpt-4o", "model=gpt-4o@1", record=False)


# -- fixcheck and consistency ---------------------------------------------------------------
@pytest.mark.parametrize("name, args, control", [
    ("fixcheck", ("model=gpt-4o@0-1", "model=gpt-4o@2-3"), None),
    ("fixcheck_control", ("model=gpt-4o@0", "model=gpt-4o@1-2"), "model=gpt-4o@3"),
])
def test_fixcheck_to_dict_is_the_old_json(ledger, name, args, control):
    result = analysis.fixcheck(ledger, *args, control=control)
    assert as_doc(result) == golden(name)
    text = result.render()
    assert text.splitlines()[0].startswith("candidate − control" if control else "No control")
    [table] = md_tables(result.render("markdown"))                  # no input flagged: one table
    assert [row[0] for row in table] == ["arm", "candidate"] + (["control"] if control else []) + ["pure chance"]


def test_fixcheck_refuses_a_first_run_without_failures(tmp_path):
    from fluke.record import Identity, Outcome, Run

    with open_ledger(str(tmp_path / "ok.db")) as own:
        own.ingest([Run(scenario=f"s{i}", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=True))
                    for i in range(3) for t in range(2)])
        with pytest.raises(InputError, match="no failing inputs"):
            analysis.fixcheck(own, "model=m@0", "model=m@1")
        with pytest.raises(UsageError, match="within=0"):
            analysis.fixcheck(own, "model=m@0", "model=m@1", within=0)


def test_consistency_to_dict_is_the_old_json(ledger):
    result = analysis.consistency(ledger, ["model=gpt-4o", "model=gpt-4.1"])
    assert as_doc(result) == golden("consistency")
    [table] = md_tables(result.render("markdown"))
    assert [row[0] for row in table[1:]] == ["model=gpt-4o", "model=gpt-4.1"]
    assert table[1][3] == "58.0% (116/200)" and table[1][5] == "0.747"
    assert "\\x0a" not in result.render()            # no cell smuggles a newline (it would print escaped)


# -- calibrate ------------------------------------------------------------------------------
def test_calibrate_to_dict_is_the_old_json_and_the_seed_reproduces_it():
    result = analysis.calibrate(pairs=60, seed=3)
    assert as_doc(result) == golden("calibrate")
    assert result.holds is (result.calibration.interval[0] <= 0.05 <= result.calibration.interval[1])
    [table] = md_tables(result.render("markdown"))
    assert [int(row[2]) for row in table[1:]] == golden("calibrate")["histogram"]
    text = result.render()
    assert "KS p = 0.810" in text and text.splitlines()[0].endswith("contains the nominal 5%")


# -- simulate and reveal --------------------------------------------------------------------
def test_reveal_opens_only_after_every_b_arm_was_compared_and_recorded(tmp_path):
    seal = tmp_path / "seal.json"
    with open_ledger(str(tmp_path / "sim.db")) as own:
        sim = analysis.simulate(own, tasks=8, runs_per_task=(2, 6), seal_file=seal)
        doc = as_doc(sim)
        assert sorted(doc["arms"]) == ["A'/2", "A'/6", "A/2", "A/6", "B/2", "B/6"]
        assert doc["arms"]["A/6"]["runs"] == 48 and doc["seal_digest"] == json.loads(seal.read_text())["digest"]
        assert (seal.stat().st_mode & 0o777) == 0o600
        v = {k: row["version"][:12] for k, row in sim.arms.items()}
        assert not analysis.reveal(own, seal).holds
        analysis.compare(own, v["A/6"], v["B/6"])
        analysis.compare(own, v["A/2"], v["B/2"], record=False)   # not recorded: not counted as compared
        early = analysis.reveal(own, seal)
        assert (early.holds, early.stage, early.checks["compared_before_reveal"]) == (False, None, False)
        forced = analysis.reveal(own, seal, force=True)
        assert not forced.holds and forced.stage in STAGES and "opened with --force" in forced.render()
        analysis.compare(own, v["A/2"], v["B/2"])
        opened = analysis.reveal(own, seal)
        assert opened.holds and opened.stage == forced.stage and all(opened.checks.values())
        assert opened.render().splitlines()[0] == f"planted change: stage {opened.stage}, rate × 2.0"
        assert as_doc(opened) == {"format_version": 1, "kind": "reveal", "checks": opened.checks,
                                  "stage": opened.stage, "factor": 2.0}
        with pytest.raises(InputError, match="already exists"):
            analysis.simulate(own, tasks=2, runs_per_task=(2,), seal_file=seal)


def test_reveal_refuses_a_file_that_is_not_a_seal(tmp_path, ledger):
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    with pytest.raises(InputError, match="not a seal file"):
        analysis.reveal(ledger, bad)


# -- the CLI surface: the same options and exit codes, now also --format and --all ------------
def test_cli_verbs_print_what_the_analysis_returns(tau_ledger):
    args = ["compare", "model=gpt-4.1", f"model={FINE_TUNED}", "--no-record", "--steps", "3"]
    out = CliRunner().invoke(group, ["--ledger", tau_ledger, *args])
    assert out.exit_code == 0
    expect = analysis.compare(open_ledger(tau_ledger), "model=gpt-4.1", f"model={FINE_TUNED}", rows=3,
                              record=False)
    assert "\n".join(t.rstrip() for t in out.output.splitlines()).rstrip() == expect.render("text")
    md = CliRunner().invoke(group, ["--ledger", tau_ledger, *args, "--format", "markdown"])
    assert md.exit_code == 0 and md.output == expect.render("markdown")
    everything = CliRunner().invoke(group, ["--ledger", tau_ledger, *args, "--all"])
    assert "… and" not in everything.output and len(everything.output) > len(out.output)
    for verb in ("compare", "fixcheck", "consistency", "simulate", "calibrate"):
        help_text = CliRunner().invoke(group, [verb, "--help"]).output
        assert "--json" in help_text and "--format" in help_text and "--all" in help_text


def test_cli_calibrate_exits_1_when_the_interval_misses_alpha(tmp_path):
    # seed 2: 5 of 40 unchanged pairs called different, Wilson 95% [5.5%, 26.1%] misses 5%
    args = ["--ledger", str(tmp_path / "none.db"), "calibrate", "--pairs", "40", "--tasks", "5",
            "--runs-per-task", "4", "--seed", "2"]
    out = CliRunner().invoke(group, args)
    assert out.exit_code == 1 and out.output.startswith("called different: 12.5% (5/40), Wilson 95% [5.5%, 26.1%]")
    assert "MISSES the nominal 5%" in out.output
    doc = json.loads(CliRunner().invoke(group, [*args, "--json"]).stdout)
    assert doc["contains_alpha"] is False and doc["false_alarms"] == 5
    assert not (tmp_path / "none.db").exists()                      # calibrate never opens a ledger


def test_hostile_scenario_names_reach_no_terminal_and_no_secret_leaks(tmp_path):
    from fluke.record import Identity, Outcome, Run

    secret = "AKIAIOSFODNN7EXAMPLE"  # a shape the redactor knows today (issue 11 point 4 adds more)
    hostile = f"[red]x[/red] \x1b[2J \x1b]8;;http://e.vil\x07link\x1b]8;;\x07 \x1b]52;c;ZXZpbA==\x07 {secret}"
    with open_ledger(str(tmp_path / "h.db")) as own:
        own.ingest([Run(scenario=f"{hostile}/{i}", trial=t, identity=Identity(model=m),
                        outcome=Outcome(passed=(i + t) % 2 == 0, died_at=1 if (i + t) % 2 else None))
                    for m in ("a", "b") for i in range(4) for t in range(3)])
        results = [analysis.compare(own, "model=a", "model=b", record=False),
                   analysis.fixcheck(own, "model=a@0", "model=a@1-2", control="model=b@0-2"),
                   analysis.consistency(own, ["model=a"])]
        for result in results:
            for out in (result.render("text"), result.render("markdown"), result.to_json()):
                assert "\x1b" not in out and "\x07" not in out and secret not in out
        cells = results[0].render("text")                             # compare lists the scenario cells
        assert "\\x1b[2J" in cells and "[REDACTED:aws-key-id]" in cells and "[red]x[/red]" in cells
