"""The comparison verbs as fluke.analysis functions, on the real τ-bench / τ²-bench ledger.

``golden/*.json`` is what ``fluke --json <verb>`` printed before the verbs moved out of the CLI
(commit 79f7878, on the same ledger); each result's ``to_dict()`` must give the same document,
except the comparison summary, whose p-value is now printed by :func:`fluke.format.fmt_p`.
"""

import math
import json

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt
from scipy.stats import binomtest

from fluke import analysis
from fluke.cli import group
from fluke.comparison import compare_survival
from fluke.errors import InputError, UsageError
from fluke.format import fmt_p
from fluke.ledger import open_ledger
from fluke.simulate import STAGES

from .._close import assert_same_doc
from ._oracles import mcnemar_power_by_loop
from ._realdata import FINE_TUNED, TAU1_AIRLINE, need, tau1_airline_runs, tau2_runs

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
def _paired(domains=("airline", "retail", "telecom")):
    """(fixed, broken, tasks) of the fine-tune against gpt-4.1, counted straight from the files."""
    fixed = broken = tasks = 0
    for domain in domains:
        a = {r.scenario: r.outcome.passed is True for r in tau2_runs("gpt-4.1", domain)}
        b = {r.scenario: r.outcome.passed is True for r in tau2_runs(FINE_TUNED, domain)}
        for task in a.keys() & b.keys():
            tasks += 1
            fixed += b[task] and not a[task]
            broken += a[task] and not b[task]
    return fixed, broken, tasks


def test_compare_leads_with_the_paired_pass_rate_test_on_all_tau2_tasks(ledger):
    result = analysis.compare(ledger, "model=gpt-4.1", f"model={FINE_TUNED}", record=False)
    fixed, broken, tasks = _paired()
    r = result.pass_rates
    assert r.test.method.startswith("exact McNemar") and r.strata == tasks == 100
    assert r.pvalue == pytest.approx(binomtest(fixed, fixed + broken, 0.5).pvalue, rel=1e-12)
    assert r.difference == pytest.approx(100 * (fixed - broken) / tasks)
    assert result.verdict == "different" and (fixed, broken) == (24, 9)
    doc = as_doc(result)
    assert doc["verdict"] == "different" and doc["detection_limit_unit"] == "points"
    # τ²-bench records no failure step: only the one failed run that ends on a failed call has one,
    # so where runs die rests on one death and cannot tell anything
    failed = sum(r.outcome.passed is not True for d in ("airline", "retail", "telecom")
                 for m in ("gpt-4.1", FINE_TUNED) for r in tau2_runs(m, d))
    assert doc["died_from"]["failed call"] + doc["died_from"]["unknown step"] == failed
    assert doc["where"]["survival"]["verdict"] == "too small to tell"
    text = result.render("text")
    assert text.splitlines()[0].startswith("different: B − A = +15.0 points")


def test_compare_one_domain_is_too_small_to_tell_with_its_limit_in_points(ledger):
    result = analysis.compare(ledger, "model=gpt-4.1", f"model={FINE_TUNED}", scenario="retail/*", record=False)
    fixed, broken, tasks = _paired(("retail",))
    r = result.pass_rates
    discordant = fixed + broken
    # one run per arm per task: the limit is where exact McNemar reaches 80% power under the regression.
    # The mean q(1 − q) cannot exceed q̄(1 − q̄) under any law of the rates; retail's 12 discordant of
    # 40 (0.15) is above it (0.85 · 0.15 = 0.1275), noise, read at that bound (no spread)
    failures = 2 * tasks - r.passes_a - r.passes_b
    m = failures / (2 * tasks)
    assert discordant / (2 * tasks) > m * (1 - m)
    discordant = 2 * tasks * m * (1 - m)
    delta = r.detection_limit / 100
    assert mcnemar_power_by_loop(tasks, discordant, failures, delta) == pytest.approx(0.8, abs=2e-3)
    assert mcnemar_power_by_loop(tasks, discordant, failures, delta * 0.97) < 0.8
    assert result.verdict == "too small to tell" and r.uninformative == tasks - fixed - broken
    text = result.render("text")
    assert f"{r.uninformative} of {tasks} scenario cells carry no information" in text
    assert f"below {r.detection_limit:.1f} points" in text and "runs per arm would be needed" in text


def test_compare_refuses_a_paired_limit_the_room_cannot_carry(ledger):
    # τ²-airline, 20 tasks × 1 run: the McNemar limit (about 46 points) is larger than the room to fall
    # at the low end the 40 runs allow (one-sided 95% Clopper–Pearson of 23 passes in 40, about 43
    # points): no limit is printed, the verdict is too small to tell with the runs that would settle it
    from scipy.stats import beta

    result = analysis.compare(ledger, "model=gpt-4.1", f"model={FINE_TUNED}", scenario="airline/*", record=False)
    fixed, broken, tasks = _paired(("airline",))
    r = result.pass_rates
    passes = r.passes_a + r.passes_b
    room = float(beta.ppf(0.05, passes, 2 * tasks - passes + 1))
    assert room == pytest.approx(0.433, abs=1e-3)
    assert mcnemar_power_by_loop(tasks, fixed + broken, 2 * tasks - passes, room) < 0.8
    assert r.detection_limit == math.inf and result.verdict == "too small to tell"
    text = result.render("text")
    assert "leave room for would have been found" in text and "runs per arm would be needed" in text


def test_compare_prints_one_p_value_for_one_number(ledger):
    result = analysis.compare(ledger, "model=gpt-4.1", f"model={FINE_TUNED}", record=False)
    text = result.render("text")
    first = text.splitlines()[1]
    shown = re.findall(r"\bp = ([^;,)\s]+)", first)
    assert shown == [fmt_p(result.pass_rates.pvalue)] == ["0.014"]
    assert "e-0" not in text and "[bold" not in text and "[dim]" not in text


def test_summary_floors_a_tiny_p_value_like_every_other_output():
    # 30 runs die at step 1 in B and none in A: p far below 0.001 (it printed 4.76e-07-style before)
    died = [False] * 30 + [True] * 30
    result = compare_survival([3] * 30 + [1] * 30, died, [False] * 30 + [True] * 30)
    assert result.pvalue < 1e-6
    assert "(p < 0.001;" in result.summary() and "e-" not in result.summary()


def test_compare_markdown_leads_with_the_verdict_and_keeps_the_rows(ledger):
    # 100 cells of one run each: no cell can reach p < 0.05, so by default one line and no table
    quiet = analysis.compare(ledger, "model=gpt-4.1", f"model={FINE_TUNED}", rows=5, record=False)
    md = quiet.render("markdown")
    assert md.startswith("## different: B − A = +15.0 points")
    assert "none of 100 cells at p" in md and "so no table" in md and "| cell" not in md
    assert "the design had 80% power only for a regression" not in md     # an improvement was found
    assert "this one was seen anyway" in md or "the design had 80% power for an improvement" in md
    result = analysis.compare(ledger, "model=gpt-4.1", f"model={FINE_TUNED}", rows=5, record=False, every=True)
    tables = md_tables(result.render("markdown"))
    assert tables[-1][0] == ["cell", "A", "B", "p", "q"] and len(tables[-1]) - 1 == 5
    every = md_tables(result.render("markdown", all_rows=True))
    payload = result.payload()
    assert len(every[-1]) - 1 == len(payload["cells"]) == 100
    assert analysis.compare(ledger, "model=gpt-4.1", f"model={FINE_TUNED}", rows=0, record=False) \
        .render("markdown").count("| ---") == 0


def test_compare_records_a_comparison_only_when_asked(tmp_path):
    with open_ledger(str(tmp_path / "rec.db")) as own:
        own.ingest(tau1_airline_runs())
        analysis.compare(own, "model=gpt-4o@0-1", "model=gpt-4o@2-3", record=False)
        assert own.documents("comparison") == []
        result = analysis.compare(own, "model=gpt-4o@0-1", "model=gpt-4o@2-3")
        [doc] = own.documents("comparison")
        said = {k: result.payload()[k] for k in ("a", "b", "verdict", "pvalue", "detection_limit", "scenario")}
        # JSON has no infinity: a refused (infinite) limit is stored as null
        if said["detection_limit"] == math.inf:
            said["detection_limit"] = None
        assert doc.body == said
        assert doc.body["a"]["trials"] == [0, 1] and doc.body["b"]["runs"] == 100


def test_compare_with_a_real_spec_dies_at_the_first_hard_violation(ledger):
    from fluke.grading import first_hard_index, grade_run, load_spec

    need(TAU1_AIRLINE)
    result = analysis.compare(ledger, "model=gpt-4o@0-1", "model=gpt-4o@2-3", spec=SPEC, record=False)
    spec = load_spec(SPEC)
    runs = [r for r in tau1_airline_runs() if r.outcome.passed is False and r.outcome.died_at is None]
    hard = sum(first_hard_index(grade_run(r, spec)) is not None for r in runs)
    doc = result.payload()
    assert 0 < hard < len(runs) == 116                     # the spec moves some deaths, not all
    assert doc["died_from"]["hard violation"] == hard
    assert doc["spec"] == str(SPEC) and doc["where"]["skipped"] is False
    plain = analysis.compare(ledger, "model=gpt-4o@0-1", "model=gpt-4o@2-3", record=False).payload()
    assert plain["died_from"]["hard violation"] == 0
    # the pass-rate verdict does not depend on where runs die
    assert plain["pvalue"] == doc["pvalue"] and plain["verdict"] == doc["verdict"]


def test_compare_refuses_bad_options_with_fluke_errors(ledger):
    with pytest.raises(UsageError, match="alpha=1.5"):
        analysis.compare(ledger, "model=gpt-4.1", f"model={FINE_TUNED}", alpha=1.5, record=False)
    with pytest.raises(UsageError, match="ceiling=0"):
        analysis.compare(ledger, "model=gpt-4.1", f"model={FINE_TUNED}", ceiling=0, record=False)
    with pytest.raises(UsageError, match="hazard_ceiling=1"):
        analysis.compare(ledger, "model=gpt-4.1", f"model={FINE_TUNED}", hazard_ceiling=1, record=False)
    with pytest.raises(UsageError, match="select the same runs"):
        analysis.compare(ledger, "model=gpt-4o", "model=gpt-4o@1", record=False)


# -- fixcheck and consistency ---------------------------------------------------------------
@pytest.mark.parametrize("name, args, control", [
    ("fixcheck", ("model=gpt-4o@0-1", "model=gpt-4o@2-3"), None),
    ("fixcheck_control", ("model=gpt-4o@0", "model=gpt-4o@1-2"), "model=gpt-4o@3"),
])
def test_fixcheck_to_dict_is_the_old_json(ledger, name, args, control):
    result = analysis.fixcheck(ledger, *args, control=control)
    doc, old = as_doc(result), golden(name)
    if control is None:
        # Issue 12: without a control nothing is tested "by input" (it would compare the re-run with the
        # very failures that chose the inputs); the bar a pure re-run would clear is printed instead.
        assert doc.pop("by_input") is None and old.pop("by_input")["improved"] == 7
        bar = doc.pop("bar")
        first = [r for r in tau1_airline_runs() if r.trial in (0, 1)]
        per: dict = {}
        for r in first:
            per.setdefault(r.scenario, []).append(r.outcome.passed is not True)
        f = [sum(v) for v in per.values()]
        n = [len(v) for v in per.values()]
        c = sum(x * (x - 1) for x in f) / sum(x * (m - 1) for x, m in zip(f, n, strict=True))
        assert bar["once"] == pytest.approx(1 - c) and bar["clears"] is False
        assert "nothing is called improved" in result.render()
    else:
        assert doc.pop("bar") is None
    # issue 14: the unknown-outcome policy and its count (none of these real runs is unknown)
    assert [doc.pop(k) for k in ("unknowns", "unknown_policy", "unknowns_by_arm")] == [
        0, "fail", {"first": 0, "candidate": 0, "control": 0}]
    assert_same_doc(doc, old)
    text = result.render()
    assert text.splitlines()[0].startswith("candidate − control" if control else "No control: nothing is called")
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
    doc = as_doc(result)
    # issue 14: the unknown-outcome policy and its count (none of these real runs is unknown)
    assert [doc.pop("unknowns"), doc.pop("unknown_policy")] == [0, "fail"]
    assert [agent.pop("unknowns") for agent in doc["agents"]] == [0, 0]
    assert_same_doc(doc, golden("consistency"))
    [table] = md_tables(result.render("markdown"))
    assert [row[0] for row in table[1:]] == ["model=gpt-4o", "model=gpt-4.1"]
    assert table[1][3] == "58.0% (116/200)" and table[1][5] == "0.747"
    assert "\\x0a" not in result.render()            # no cell smuggles a newline (it would print escaped)


# -- calibrate ------------------------------------------------------------------------------
def test_calibrate_counts_false_alarms_of_the_pass_rate_test_and_the_seed_reproduces_it():
    result = analysis.calibrate(pairs=60, seed=3)
    doc = as_doc(result)
    assert doc == as_doc(analysis.calibrate(pairs=60, seed=3))
    assert doc["test"] == "pass rate" and doc["ceiling"] == 5.0
    assert doc["false_alarms"] == doc["verdicts"].get("different", 0) and sum(doc["histogram"]) == 60
    lo, hi = result.calibration.interval
    assert result.holds is (lo <= 0.05 <= hi)
    # the limit is in points now: tens of thousands of runs per arm put it near 4 points, not near 1.2
    assert 2 < doc["detection_limit_range"][0] <= doc["detection_limit_range"][1] < 6
    [table] = md_tables(result.render("markdown"))
    assert [int(row[2]) for row in table[1:]] == doc["histogram"]
    hazard = as_doc(analysis.calibrate(pairs=60, seed=3, test="log-rank"))
    assert hazard["ceiling"] == 1.3 and 1 < hazard["detection_limit_range"][0] < 1.5


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
        assert as_doc(early)["uncompared"] == [{"arm": "B/2", "a": v["A/2"], "b": v["B/2"]}]  # the arm left
        forced = analysis.reveal(own, seal, force=True)
        assert not forced.holds and forced.stage in STAGES and "opened with --force" in forced.render()
        analysis.compare(own, v["A/2"], v["B/2"])
        opened = analysis.reveal(own, seal)
        assert opened.holds and opened.stage == forced.stage and all(opened.checks.values())
        assert opened.render().splitlines()[0] == f"planted change: stage {opened.stage}, rate × 2.0"
        assert as_doc(opened) == {"format_version": 1, "kind": "reveal", "checks": opened.checks,
                                  "stage": opened.stage, "factor": 2.0, "uncompared": []}
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
    # seed 22: 5 of 40 unchanged pairs called different, Wilson 95% [5.5%, 26.1%] misses 5%
    args = ["--ledger", str(tmp_path / "none.db"), "calibrate", "--pairs", "40", "--tasks", "5",
            "--runs-per-task", "4", "--seed", "22"]
    out = CliRunner().invoke(group, args)
    assert out.exit_code == 1 and out.output.startswith("called different: 12.5% (5/40), Wilson 95% [5.5%, 26.1%]")
    doc = json.loads(CliRunner().invoke(group, [*args, "--json"]).stdout)
    # 12.5% is above 5%, but an interval 20 points wide says little: the line says how many pairs would
    # measure it to ±2.5 points, n = 1.96² · 0.05 · 0.95 / 0.025² = 291.9 → 292
    lo, hi = doc["interval"]
    assert f"above the nominal 5%, but 40 pairs are too few to tell: the interval is {100 * (hi - lo):.1f} " \
           "points wide" in out.output
    assert "about 292 pairs would measure the false-alarm rate to ±2.5 points (--pairs 292)" in out.output
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
        results = [analysis.compare(own, "model=a", "model=b", record=False, every=True),
                   analysis.fixcheck(own, "model=a@0", "model=a@1-2", control="model=b@0-2"),
                   analysis.consistency(own, ["model=a"])]
        for result in results:
            for out in (result.render("text"), result.render("markdown"), result.to_json()):
                assert "\x1b" not in out and "\x07" not in out and secret not in out
        cells = results[0].render("text")                             # compare lists the scenario cells
        assert "\\x1b[2J" in cells and "[REDACTED:aws-key-id]" in cells and "[red]x[/red]" in cells
