"""State-changing references (``reference_mode: state`` and ``state_ordered``), ``reference_ignore``
on both sides of ``reference: gold``, and the agreement of a reference with the recorded outcome.

The state modes are checked against an independent oracle (multisets and sequences of the
successful writes, no fluke code) on random runs; the agreement's interval against the Beta
CDF and by simulation; and both on the recorded τ-bench gpt-4o airline runs, where the raw
file is read independently of fluke's reader.
"""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from scipy import special

from fluke.errors import SpecError
from fluke.grading import GradeTally, grade_run, load_spec, reference_agreement
from fluke.grading._agreement import KEPT, AgreementCounts
from fluke.record import GoldCall, Outcome, Run

from ..conftest import ROOT, TAU_AIRLINE, need
from .build import call, run_of

QUIET = {"ground": False, "secrets": False}
WRITES = ["book", "cancel", "update"]
READS = ["get", "search"]


def state(reference, mode="state", **more):
    return load_spec({**QUIET, "reference": reference, "reference_mode": mode, "writes": WRITES, **more})


def gold_run(gold, *events, passed=True, scenario="s", trial=0):
    return Run(scenario=scenario, trial=trial, events=list(events), outcome=Outcome(passed=passed),
               gold=[GoldCall(tool=t, args=a) for t, a in gold])


def messages(grade):
    return [(v.check, v.message) for v in grade.violations]


# -- the state modes -------------------------------------------------------------------------

def test_reads_are_free_and_writes_are_compared_unordered():
    gold = [("get", {"id": "R1"}), ("cancel", {"id": "R1"}), ("book", {"f": "HAT1"})]
    s = state("gold")
    made = gold_run(gold, call("book", {"f": "HAT1"}), call("search", {"q": 1}), call("cancel", {"id": "R1"}))
    g = grade_run(made, s)
    assert g.violations == () and g.reference_ok is True
    assert (g.reference.expected, g.reference.made, g.reference.matched) == (2, 2, 2)


def test_missing_extra_and_mismatched_writes_are_named():
    gold = [("cancel", {"id": "R1"}), ("book", {"f": "HAT1"})]
    run = gold_run(gold, call("cancel", {"id": "R2"}), call("update", {"id": "R1", "cabin": "business"}))
    got = messages(grade_run(run, state("gold")))
    assert got == [
        ("reference", "expected write `cancel(id='R1')`, got `id='R2'` at event 0"),
        ("reference_extra", "extra write `cancel(id='R2')` at event 0: the reference makes no such change"),
        ("reference_extra", "extra write `update(id='R1', cabin='business')` at event 1: the reference makes "
                            "no such change"),
        ("reference", "expected write `book(f='HAT1')`, never called"),
    ]


def test_an_extra_write_fails_where_superset_passes():
    gold = [("cancel", {"id": "R1"})]
    run = gold_run(gold, call("cancel", {"id": "R1"}), call("cancel", {"id": "R9"}))
    assert grade_run(run, load_spec({**QUIET, "reference": "gold"})).reference_ok is True
    assert [v.check for v in grade_run(run, state("gold")).violations] == ["reference_extra"]


def test_failed_writes_are_ignored_or_counted_as_declared():
    gold = [("cancel", {"id": "R1"})]
    retried = gold_run(gold, call("cancel", {"id": "R1"}, ok=False, error="Error: locked"),
                       call("cancel", {"id": "R1"}))
    assert grade_run(retried, state("gold")).violations == ()
    counted = grade_run(retried, state("gold", reference_failed_writes="count"))
    assert messages(counted) == [("reference_extra", "extra write `cancel(id='R1')` at event 0 (it failed): the "
                                                     "reference makes no such change")]
    # counted, and allowed to answer an expected write: either attempt answers it, one is extra
    either = grade_run(retried, state("gold", reference_failed_writes="count", reference_failed_ok=True))
    assert [v.check for v in either.violations] == ["reference_extra"]
    only_failed = gold_run(gold, call("cancel", {"id": "R1"}, ok=False, error="Error: locked"))
    assert messages(grade_run(only_failed, state("gold"))) == [
        ("reference", "expected write `cancel(id='R1')`: the attempt at event 0 failed, and a failed write "
                      "changes nothing")]


def test_a_write_with_no_result_may_have_changed_state():
    unknown = gold_run([], call("cancel", {"id": "R1"}, ok=None))
    [v] = grade_run(unknown, state("gold")).violations
    assert v.check == "reference_extra" and "may have changed state" in v.message


def test_state_ordered_wants_the_writes_in_order():
    gold = [("cancel", {"id": "R1"}), ("book", {"f": "HAT1"})]
    swapped = gold_run(gold, call("book", {"f": "HAT1"}), call("get"), call("cancel", {"id": "R1"}))
    assert grade_run(swapped, state("gold")).violations == ()
    [v] = grade_run(swapped, state("gold", "state_ordered")).violations
    assert v.check == "reference_order" and v.message.startswith("write `")
    in_order = gold_run(gold, call("cancel", {"id": "R1"}), call("get"), call("book", {"f": "HAT1"}))
    assert grade_run(in_order, state("gold", "state_ordered")).violations == ()


def test_a_listed_reference_in_state_mode():
    s = state([{"tool": "cancel", "args": {"id": "R1"}}])
    assert grade_run(run_of(call("get"), call("cancel", {"id": "R1"})), s).violations == ()
    assert [v.check for v in grade_run(run_of(call("cancel", {"id": "R1"}), call("book")), s).violations] \
        == ["reference_extra"]


def _oracle(gold, made, ordered):
    """The state verdict written out: the successful agent writes against the gold writes, as
    multisets (unordered) or sequences (ordered), comparing tool and arguments exactly."""
    want = [(t, json.dumps(a, sort_keys=True)) for t, a in gold if t in WRITES]
    got = [(t, json.dumps(a, sort_keys=True)) for t, a, ok in made if t in WRITES and ok]
    return want == got if ordered else Counter(want) == Counter(got)


@pytest.mark.parametrize("seed", range(30))
def test_state_modes_against_an_independent_oracle(seed):
    rng = np.random.default_rng(seed)
    pool = [(t, {"id": k}) for t in WRITES + READS for k in ("R1", "R2")]

    def draw(n):
        return [pool[int(i)] for i in rng.integers(0, len(pool), size=n)]

    for _ in range(20):
        gold = draw(int(rng.integers(0, 5)))
        made = [(t, a, True) for t, a in gold] if rng.random() < 0.5 else []
        made += [(t, a, bool(rng.random() < 0.8)) for t, a in draw(int(rng.integers(0, 4)))]
        made = [made[i] for i in rng.permutation(len(made))] if rng.random() < 0.5 else made
        run = gold_run(gold, *[call(t, a, ok=ok, error=None if ok else "Error: no") for t, a, ok in made])
        for mode, ordered in (("state", False), ("state_ordered", True)):
            assert grade_run(run, state("gold", mode)).reference_ok is _oracle(gold, made, ordered), \
                (mode, gold, made)


@pytest.mark.parametrize("body, message", [
    ({"reference": "gold", "reference_mode": "state"}, "field reference_mode: state compares the calls that change "
                                                       "state; list those tools in writes"),
    ({"reference": "gold", "writes": ["cancel"]}, "field writes: only reference_mode state or state_ordered "
                                                  "reads it (reference_mode is superset)"),
    ({"reference": "gold", "reference_failed_writes": "count"}, "field reference_failed_writes: only"),
    ({"writes": ["cancel"]}, "field writes: given without a reference"),
    ({"reference": "gold", "reference_mode": "state", "writes": ["cancl"], "tools": ["cancel", "get"]},
     "field writes.0: tool 'cancl' is not in tools"),
    ({"reference": "gold", "reference_mode": "state", "writes": ["cancel"], "reference_ignore": ["cancel"]},
     "field writes.0: 'cancel' is also in reference_ignore"),
    ({"reference": [{"tool": "get"}], "reference_mode": "state", "writes": ["cancel"]},
     "field reference.0.tool: 'get' is not in writes, and reference_mode state compares writes only"),
    ({"reference": "gold", "reference_mode": "state", "writes": ["cancel"], "reference_failed_writes": "maybe"},
     "field reference_failed_writes"),
])
def test_validation(body, message):
    with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_spec({**QUIET, **body})


def test_a_spec_without_the_new_keys_keeps_its_digest():
    # computed on the parent commit, before writes and reference_failed_writes existed
    s = load_spec({**QUIET, "reference": "gold"})
    assert "writes" not in s.body and "reference_failed_writes" not in s.body
    assert s.digest == "c543b55acf17ad475dc17cd3a5a6d01d9cd45b8b2e4f2ab276417f3e0648125e"


# -- reference_ignore applies to the gold too ----------------------------------------------------

def test_reference_ignore_drops_gold_calls_of_ignored_tools():
    gold = [("get", {"id": "R1"}), ("cancel", {"id": "R1"})]
    run = gold_run(gold, call("get", {"id": "R1"}), call("cancel", {"id": "R1"}))
    g = grade_run(run, load_spec({**QUIET, "reference": "gold", "reference_mode": "strict",
                                  "reference_ignore": ["get"]}))
    assert g.violations == () and (g.reference.expected, g.reference.made) == (1, 1)


def test_tau_bench_task_47_no_longer_reports_a_made_call_as_never_called():
    from fluke.adapters import read_file

    [run] = [r for r in read_file(need(TAU_AIRLINE)) if r.scenario == "airline/47" and r.trial == 0]
    ignored = ["get_reservation_details", "get_user_details"]
    made = [e.tool for e in run.events if e.kind == "tool"]
    assert set(ignored) <= set(made) and {g.tool for g in run.gold} == set(ignored)
    g = grade_run(run, load_spec({**QUIET, "reference": "gold", "reference_ignore": ignored}))
    assert not any("never called" in v.message for v in g.violations)
    assert g.violations == () and (g.reference.expected, g.reference.made) == (0, 1)
    # the one call left is the cancellation nobody asked for: the state mode fails it, as τ-bench did
    s = load_spec(ROOT / "examples" / "specs" / "reference.yaml")
    [v] = grade_run(run, s).violations
    assert v.check == "reference_extra" and v.message.startswith("extra write `cancel_reservation(")
    assert run.outcome.passed is False


# -- agreement with the recorded outcome -----------------------------------------------------------

def test_agreement_counts_and_the_disagreeing_runs():
    s = state("gold")
    cases = [([("cancel", {"id": "R1"})], [call("cancel", {"id": "R1"})], True),    # met, pass
             ([("cancel", {"id": "R1"})], [call("cancel", {"id": "R1"})], False),   # met, fail
             ([("cancel", {"id": "R1"})], [], True),                                 # not met, pass
             ([("cancel", {"id": "R1"})], [], False),                                # not met, fail
             ([], [call("book", {"f": "X"})], False)]                                # not met, fail
    grades = [grade_run(gold_run(gold, *made, passed=p, scenario=f"t{i}"), s) for i, (gold, made, p)
              in enumerate(cases)]
    no_gold = grade_run(run_of(call("cancel", {"id": "R1"})), s)
    a = reference_agreement(grades + [no_gold])
    assert (a.table[True, True], a.table[True, False], a.table[False, True], a.table[False, False]) == (1, 1, 1, 2)
    assert (a.runs, a.agree, a.no_verdict, a.statistic) == (5, 3, 1, pytest.approx(0.6))
    assert [(d.scenario, d.reference_ok, d.output_ok) for d in a.disagreeing] == [("t1", True, False),
                                                                                 ("t2", False, True)]
    assert a.disagreeing[1].why == "expected write `cancel(id='R1')`, never called"
    # the interval's ends are the Beta posterior's 2.5% and 97.5% points (Jeffreys prior)
    lo, hi = a.interval
    assert special.betainc(3.5, 2.5, lo) == pytest.approx(0.025, abs=1e-9)
    assert special.betainc(3.5, 2.5, hi) == pytest.approx(0.975, abs=1e-9)


def test_no_run_to_agree_on_is_too_small_to_tell():
    a = reference_agreement([])
    assert a.statistic is None and a.interval is None and str(a).startswith("— (no run had both")


def test_tallies_of_chunks_merge_into_the_tally_of_the_whole():
    rng = np.random.default_rng(7)
    s = state("gold")
    grades = []
    for i in range(300):
        gold = [("cancel", {"id": "R1"})] if rng.random() < 0.7 else []
        made = [call("cancel", {"id": "R1"})] if rng.random() < 0.6 else []
        grades.append(grade_run(gold_run(gold, *made, passed=bool(rng.random() < 0.5), scenario=f"t{i}"), s))
    whole = reference_agreement(grades)
    merged = GradeTally()
    for k in range(0, 300, 37):
        merged.merge(GradeTally.of(grades[k:k + 37]))
    [version] = merged.versions()
    got = merged.agreement(version)
    assert got.table == whole.table and got.interval == pytest.approx(whole.interval)
    assert got.disagreeing == whole.disagreeing and len(got.disagreeing) == min(KEPT, whole.runs - whole.agree)
    assert [d.scenario for d in got.disagreeing] == [g.scenario for g in grades
                                                     if g.reference_ok != g.output_ok][:KEPT]


def test_the_interval_covers_the_agreement_rate_about_as_often_as_it_says():
    # frequentist coverage of the 95% Jeffreys interval at a true agreement of 0.9 over 200 runs;
    # 2,000 draws: Monte Carlo standard error about 0.005, so 0.95 +- 0.02 (4 sigma)
    rng = np.random.default_rng(2026)
    covered = 0
    for k in rng.binomial(200, 0.9, size=2000):
        counts = AgreementCounts()
        counts.cells = [int(k), 200 - int(k), 0, 0]
        lo, hi = counts.result().interval
        covered += lo <= 0.9 <= hi
    assert abs(covered / 2000 - 0.95) < 0.02


# -- on the recorded τ-bench gpt-4o airline runs ---------------------------------------------------

def _raw_state_verdicts():
    """From the raw file, no fluke code: did each run make exactly the gold writes, successfully
    (multisets of tool and exact arguments)? With its reward."""
    writes = {"book_reservation", "cancel_reservation", "update_reservation_flights",
              "update_reservation_baggages", "update_reservation_passengers", "send_certificate"}
    out = []
    for r in json.loads(need(TAU_AIRLINE).read_text()):
        pending: dict[str, list] = {}      # a call id -> its calls still unanswered (ids recur in a run)
        made: Counter = Counter()
        for m in r["traj"]:
            for c in (m.get("tool_calls") or []) if m["role"] == "assistant" else []:
                pending.setdefault(c["id"], []).append(c["function"])
            if m["role"] == "tool":
                f = pending[m["tool_call_id"]].pop(0)
                if f["name"] in writes and not str(m["content"]).startswith("Error:"):
                    made[f["name"], json.dumps(json.loads(f["arguments"]), sort_keys=True)] += 1
        gold = Counter((a["name"], json.dumps(a["kwargs"], sort_keys=True)) for a in r["info"]["task"]["actions"]
                       if a["name"] in writes)
        out.append((f"airline/{r['task_id']}", r["trial"], made == gold, r["reward"] == 1.0, r))
    return out


def test_tau_bench_state_mode_agrees_with_the_reward():
    from fluke.adapters import read_file

    runs = list(read_file(need(TAU_AIRLINE)))
    raw = _raw_state_verdicts()
    exact = load_spec({**QUIET, "reference": "gold", "reference_mode": "state",
                       "writes": sorted({"book_reservation", "cancel_reservation", "update_reservation_flights",
                                         "update_reservation_baggages", "update_reservation_passengers",
                                         "send_certificate"})})
    grades = [grade_run(r, exact) for r in runs]
    assert [g.reference_ok for g in grades] == [v for _, _, v, _, _ in raw]
    assert reference_agreement(grades).agree == sum(v == p for _, _, v, p, _ in raw) == 195
    # the example spec: the same, with extra flight keys ignored and passengers as a set
    a = reference_agreement(grade_run(r, load_spec(ROOT / "examples" / "specs" / "reference.yaml")) for r in runs)
    assert (a.agree, a.runs) == (196, 200) and a.statistic >= 0.95
    assert a.interval == pytest.approx((0.9532, 0.9932), abs=5e-4)
    listed = [(d.scenario, d.trial) for d in a.disagreeing]
    assert listed == [("airline/2", 1), ("airline/44", 1), ("airline/44", 3), ("airline/46", 3)]
    # each is a run that made exactly the gold writes and scored 0 for what is not a call: the
    # answer lacked a required output (r_outputs 0), or the benchmark recorded no reward details
    by_key = {(s, t): r for s, t, _, _, r in raw}
    assert all(not d.why and d.reference_ok and not d.output_ok for d in a.disagreeing)
    causes = [by_key[k]["info"].get("reward_info") for k in listed]
    assert [c is None or c["info"].get("r_outputs") == 0.0 for c in causes] == [True] * 4
    assert [c is None for c in causes] == [True, False, False, True]


def test_tau_bench_modes_side_by_side():
    from fluke.adapters import read_file

    runs = list(read_file(need(TAU_AIRLINE)))
    reads = ["get_user_details", "get_reservation_details", "list_all_airports", "search_direct_flight",
             "search_onestop_flight", "calculate", "think", "transfer_to_human_agents"]

    def agree(**body):
        s = load_spec({**QUIET, "reference": "gold", **body})
        return reference_agreement(grade_run(r, s) for r in runs).agree

    # superset: 154 (77%); ignoring the eight read-only tools now drops their gold calls too: 165
    assert agree() == 154 and agree(reference_ignore=reads) == 165
    writes = ["book_reservation", "cancel_reservation", "update_reservation_flights", "update_reservation_baggages",
              "update_reservation_passengers", "send_certificate"]
    assert agree(reference_mode="state_ordered", writes=writes) == 195
    # failed write attempts counted as writes: 9 more runs that scored 1 fail, for a refused write
    assert agree(reference_mode="state", writes=writes, reference_failed_writes="count") == 187


# -- fluke grade --agreement-with outcome ----------------------------------------------------------

def _cli(*args):
    from click.testing import CliRunner

    from fluke.cli import group

    return CliRunner().invoke(group, list(args), catch_exceptions=False)


def test_cli_prints_the_agreement_over_the_tau_bench_file(tmp_path):
    spec = str(ROOT / "examples" / "specs" / "reference.yaml")
    out = _cli("--ledger", str(tmp_path / "unused.db"), "grade", "--spec", spec, "--agreement-with", "outcome",
               str(need(TAU_AIRLINE)))
    assert out.exit_code == 1      # 116 runs fail the reference: the gate fails
    assert "agreement of the reference (state) with the recorded outcome: 98.0% (196/200 runs)" \
           ", 95% CrI [95.3%, 99.3%]" in out.output
    table = out.output[out.output.index("runs where the reference and the outcome disagree"):]
    assert [ln.split()[:2] for ln in table.splitlines()[3:7]] == [["airline/2", "1"], ["airline/44", "1"],
                                                                   ["airline/44", "3"], ["airline/46", "3"]]
    doc = json.loads(_cli("grade", "--spec", spec, "--agreement-with", "outcome", "--json",
                          str(TAU_AIRLINE)).output)
    [agreed] = doc["agreement_with_outcome"].values()
    assert (agreed["agree"], agreed["runs"], agreed["disagreeing_total"]) == (196, 200, 4)
    assert agreed["table"] == {"reference_ok_output_ok": 84, "reference_ok_output_fail": 4,
                               "reference_fail_output_ok": 0, "reference_fail_output_fail": 112}
    assert "agreement_with_outcome" not in json.loads(_cli("grade", "--spec", spec, "--json",
                                                           str(TAU_AIRLINE)).output)


def test_cli_refuses_agreement_without_a_reference(tmp_path):
    runs = tmp_path / "runs.jsonl"
    runs.write_text(run_of(call("a")).model_dump_json() + "\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text("tools: [a]\n")
    out = _cli("grade", "--spec", str(spec), "--agreement-with", "outcome", str(runs))
    assert out.exit_code == 2 and len(out.output.strip().splitlines()) == 1
    assert "this spec has no reference" in out.output and "Traceback" not in out.output


def test_agreement_over_a_ledger_is_the_same_when_the_grades_are_read_back(tmp_path):
    from fluke.analysis import grade
    from fluke.ledger import open_ledger
    from fluke.record import Identity

    rng = np.random.default_rng(11)
    runs = []
    for i in range(40):
        gold = [GoldCall(tool="cancel", args={"id": "R1"})] if i % 3 else []
        made = [call("get"), call("cancel", {"id": "R1"})] if rng.random() < 0.6 else [call("get")]
        runs.append(Run(scenario=f"t{i % 8}", trial=i // 8, identity=Identity(model="m"), events=made,
                        outcome=Outcome(passed=bool(rng.random() < 0.5)), gold=gold))
    expected = reference_agreement(grade_run(r, state("gold")) for r in runs)
    ledger = open_ledger(str(tmp_path / "l.db"))
    ledger.ingest(runs)
    body = {**QUIET, "reference": "gold", "reference_mode": "state", "writes": WRITES}
    first = grade(ledger, body, agreement_with="outcome")
    again = grade(ledger, body, agreement_with="outcome")        # every grade read back from the ledger
    assert again.reused == 40
    from fluke.analysis import grade_ledger

    spread = grade_ledger(ledger, load_spec(body), store=False, executor="processes", jobs=2, chunk=7)
    for a in (*(result.agreements[v] for result in (first, again) for v in result.agreements),
              spread.tally.agreement(spread.tally.versions()[0])):
        assert a.table == expected.table and a.interval == pytest.approx(expected.interval)
        assert sorted((d.scenario, d.trial) for d in a.disagreeing) == \
            sorted((d.scenario, d.trial) for d in expected.disagreeing)


def test_tau2_bench_state_mode_against_its_own_database_check():
    # τ²-bench records, beside the reward, whether the final database equals the gold one
    # (reward_breakdown.DB): the check the state mode stands in for
    from fluke.adapters import read_file

    from ..conftest import DATA

    files = sorted(need(DATA / "tau2-bench").glob("**/*airline*.json"))
    assert len(files) == 6
    spec = load_spec(ROOT / "examples" / "specs" / "reference.yaml")
    table: Counter = Counter()
    apart = []
    rewards = {}
    for path in files:
        doc = json.loads(path.read_text())
        graded = []
        for run, sim in zip(read_file(path), doc["simulations"], strict=True):
            db = ((sim.get("reward_info") or {}).get("reward_breakdown") or {}).get("DB")
            g = grade_run(run, spec)
            graded.append(g)
            if db is not None:
                table[g.reference_ok, db == 1.0] += 1
                if g.reference_ok != (db == 1.0):
                    apart.append((path.name[:9], run.scenario))
                    writes = [(e.tool, json.dumps(e.args, sort_keys=True)) for e in run.events
                              if e.kind == "tool" and e.ok and e.tool.startswith("update_")]
                    assert len(writes) == 2 and writes[0] == writes[1]
        rewards[path.name[:9]] = reference_agreement(graded).agree
    assert dict(table) == {(True, True): 132, (False, False): 100, (False, True): 2}
    # both: a write repeated with the same arguments, which leaves the same database
    assert apart == [("langchain", "airline/11"), ("langchain", "airline/12")]
    assert rewards == {"azure-air": 48, "ft:gpt-4.": 19, "gpt-4.1_a": 20, "claude-so": 50, "langchain": 45,
                       "ironshell": 49}
