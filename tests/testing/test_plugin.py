"""The pytest plugin, run by pytest's own ``pytester`` on fluke's simulated support desk.

Each inner session writes its runs to a real SQLite ledger in its own folder; the assertions
read that ledger back (run counts) and the inner session's output (the claim, the reasons,
the runs needed). The figures the messages print are checked against scipy's Beta.
"""

from __future__ import annotations

import importlib.util
import re
import sqlite3

import pytest
from scipy import stats

HEADER = '''
import pytest
import fluke
from fluke.simulate import desk_agent

CASES = [{"scenario": f"refund/{i}", "input": {"scenario": i}} for i in range(3)]
'''


def _runs_in(path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]


def _inner(pytester, body: str, *args: str):
    pytester.makepyfile(test_agent=HEADER + body)
    ledger = pytester.path / "ledger.db"
    return pytester.runpytest_subprocess("--fluke-ledger", str(ledger), "-p", "no:cacheprovider", *args), ledger


def test_a_reliable_case_passes_and_the_session_summary_lists_the_claim(pytester):
    result, ledger = _inner(pytester, '''
@pytest.mark.fluke(k=40, identity={"model": "desk", "harness": "reliable"})
def test_reliable(fluke_runs):
    runs = fluke_runs(desk_agent(slips=False), CASES)
    fluke.expect(runs).reliable(bar=0.6, prob=0.95)
''')
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "fluke: what the runs let you believe" in out
    assert "120 runs in 1 batches (120 new" in out
    assert re.search(r"HOLDS\s+test_agent.py::test_reliable: P\(θ > 0.6\) ≥ 0.95 on every scenario", out)
    assert _runs_in(ledger) == 3 * 40


def test_an_unreliable_case_fails_with_the_claim_and_what_it_rests_on(pytester):
    # check_policy fails 15 × 4% = 60% of the time: the desk passes about 36% of unique-name cases.
    result, ledger = _inner(pytester, '''
@pytest.mark.fluke(k=40, identity={"model": "desk", "harness": "broken"})
def test_unreliable(fluke_runs):
    runs = fluke_runs(desk_agent(planted_factor=15), CASES)
    fluke.expect(runs).reliable(bar=0.6, prob=0.95)
''')
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "ClaimFailed: fluke claim FAILS: P(θ > 0.6) ≥ 0.95 on every scenario" in out
    # the claim prints in the failure and again in the short summary when pytest is not quiet (as in CI)
    fails = sorted(set(re.findall(r"fails: (refund/\d): P\(θ > 0.6\) ([=<]) (\S+) from (\d+)/40 runs passed; "
                                  r"the runs put it below", out)))
    assert [f[0] for f in fails] == ["refund/0", "refund/1", "refund/2"]
    for _, relation, shown, passes in fails:  # the printed posterior is the uniform-prior Beta's tail
        expected = stats.beta(1 + int(passes), 1 + 40 - int(passes)).sf(0.6)
        if expected < 0.001:
            assert (relation, shown) == ("<", "0.001")   # as the terminal prints a floor: "< 0.001"
        else:
            assert relation == "=" and abs(float(shown) - expected) < 5e-4
    assert "rests on: " in out and "runs passed over 3 scenario cells of version" in out
    assert "prior uniform Beta(1, 1); bar 0.6" in out
    assert re.search(r"FAILS\s+test_agent.py::test_unreliable", out)  # and in the session summary
    assert _runs_in(ledger) == 120


SMALL = '''
def test_small(fluke_runs):
    runs = fluke_runs(desk_agent(slips=False), [{"scenario": "refund/0", "input": {"scenario": 0}}], k=3,
                      identity={"model": "desk", "harness": "small"}, seed=4{policy})
    assert [r.outcome.passed for r in runs.runs] == [True, True, True]
    fluke.expect(runs).reliable(bar=0.9, prob=0.95)
'''


@pytest.mark.parametrize("policy", ["fail", "warn", "pass", None])
def test_a_too_small_case_follows_the_declared_policy_and_says_how_many_runs_it_would_need(pytester, policy):
    given = "" if policy is None else f", on_inconclusive={policy!r}"
    result, _ = _inner(pytester, SMALL.replace("{policy}", given))
    chosen = policy or "warn"   # the default
    out = result.stdout.str()
    # 3 of 3 under a uniform prior: Beta(4, 1); P(θ > 0.9) = 1 − 0.9⁴ = 0.344; certified at
    # P ≥ 0.95 after m more clean runs when 1 − 0.9^(4+m) ≥ 0.95, i.e. m = 25.
    p = 1 - 0.9 ** 4
    m = next(m for m in range(100) if 1 - 0.9 ** (4 + m) >= 0.95)
    said = f"P(θ > 0.9) = {p:.3f} from 3/3 runs passed; about {m} more clean runs would be needed"
    assert re.search(rf"TOO SMALL\s+test_agent.py::test_small: .*\(on_inconclusive: {chosen}\)", out)
    if chosen == "fail":
        result.assert_outcomes(failed=1)
        assert "fluke claim TOO SMALL TO TELL" in out and said in out
    elif chosen == "warn":   # green, with a warning that still prints the runs that would settle it
        result.assert_outcomes(passed=1, warnings=1)
        assert "InconclusiveClaim: fluke claim TOO SMALL TO TELL" in out and said in out
    else:
        result.assert_outcomes(passed=1)
        assert "InconclusiveClaim" not in out


def test_luck_and_the_gate_use_the_spec_and_an_async_agent_is_awaited(pytester):
    result, ledger = _inner(pytester, '''
from fluke.simulate import DESK_SPEC

agent = desk_agent()

async def async_agent(text, *, trial, rng):
    return agent(text, trial=trial, rng=rng)

@pytest.mark.fluke(k=30, identity={"model": "desk", "harness": "async"}, spec=DESK_SPEC)
def test_luck(fluke_runs):
    runs = fluke_runs(async_agent, CASES)
    assert len(runs) == 90 and all(r.error is None for r in runs.runs)
    fluke.expect(runs).luck_at_most(0.9)

@pytest.mark.fluke(k=30, identity={"model": "desk", "harness": "async"}, spec=DESK_SPEC)
def test_luck_strict(fluke_runs):
    fluke.expect(fluke_runs(async_agent, CASES)).luck_at_most(0.001)
''')
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "fluke claim FAILS: luck rate ≤ 0.001" in out or "fluke claim TOO SMALL TO TELL: luck rate ≤ 0.001" in out
    # the second test asked for the same identity's runs: none run twice
    assert "90 runs in 2 batches" not in out and "180 runs in 2 batches (90 new, 90 already in the ledger)" in out
    assert _runs_in(ledger) == 90


def test_not_worse_than_a_baseline_reads_the_comparison(pytester):
    result, _ = _inner(pytester, '''
@pytest.mark.fluke(k=40)
def test_baseline(fluke_runs):
    fluke_runs(desk_agent(), CASES, identity={"model": "desk-v1"})

@pytest.mark.fluke(k=40)
def test_candidate_is_worse(fluke_runs):
    runs = fluke_runs(desk_agent(planted_factor=12), CASES, identity={"model": "desk-v2"})
    fluke.expect(runs).not_worse_than("model=desk-v1")
''', "-p", "no:randomly")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "fluke claim FAILS: version" in out and "is not worse than model=desk-v1" in out
    assert re.search(r"different: B − A = -\d+\.\d points", out)  # B's pass rate is lower
    # after *different*, the limit in compare's words: what the design had power for
    assert re.search(r"detection limit: the design had 80% power (only )?for a regression of \d+\.\d points", out)
    assert "could not have detected" not in out


def test_a_bad_marker_keyword_is_a_usage_error(pytester):
    result, _ = _inner(pytester, '''
@pytest.mark.fluke(k=3, identiy={"model": "x"})
def test_typo(fluke_runs):
    fluke_runs(desk_agent(), CASES)
''')
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "fluke marker: unknown keyword 'identiy'" in out and "Traceback" not in out and "plugin.py" not in out


def test_a_session_that_does_not_use_fluke_prints_nothing_and_writes_no_ledger(pytester):
    pytester.makepyfile(
        test_plain="import sys\n\ndef test_x():\n"
        "    assert 'fluke.testing.plugin' in sys.modules  # loaded by its entry point\n"
        "    assert not {'fluke.analysis', 'fluke.runner', 'fluke.ledger'} & set(sys.modules)\n"
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "fluke:" not in result.stdout.str() and "claims" not in result.stdout.str()
    assert not (pytester.path / "fluke.db").exists()


@pytest.mark.skipif(importlib.util.find_spec("xdist") is None, reason="pytest-xdist is not installed")
def test_under_xdist_no_run_is_lost_or_doubled(pytester):
    body = "".join(f'''
@pytest.mark.fluke(k=15, identity={{"model": "desk", "harness": "xdist"}})
def test_case_{i}(fluke_runs):
    runs = fluke_runs(desk_agent(slips=False), [{{"scenario": "refund/{i}", "input": {{"scenario": {i}}}}}])
    fluke.expect(runs).reliable(bar=0.5, prob=0.95)
''' for i in range(6))
    result, ledger = _inner(pytester, body, "-n", "2")
    result.assert_outcomes(passed=6)
    out = result.stdout.str()
    assert "90 runs in 6 batches (90 new" in out and "6 claims: 6 holds" in out
    with sqlite3.connect(ledger) as conn:
        rows = conn.execute("SELECT scenario, COUNT(*) FROM runs GROUP BY scenario ORDER BY scenario").fetchall()
    assert rows == [(f"refund/{i}", 15) for i in range(6)]
    # a second session over the same ledger finds every run already there and runs none again
    again = pytester.runpytest_subprocess("--fluke-ledger", str(ledger), "-p", "no:cacheprovider", "-n", "2")
    again.assert_outcomes(passed=6)
    assert "90 runs in 6 batches (0 new, 90 already in the ledger)" in again.stdout.str()
    assert _runs_in(ledger) == 90


def test_misuse_fails_the_test_with_one_line_not_a_library_traceback(pytester):
    result, _ = _inner(pytester, '''
@pytest.mark.fluke(k=5, identity={"model": "desk", "harness": "main"})
def test_against_itself(fluke_runs):
    fluke.expect(fluke_runs(desk_agent(), CASES)).not_worse_than("harness=main")

@pytest.mark.fluke(k=5, identity={"model": "desk", "harness": "main"})
def test_against_nothing(fluke_runs):
    fluke.expect(fluke_runs(desk_agent(), CASES)).not_worse_than("harness=never-recorded")

@pytest.mark.fluke(k=5, identity=["model", "desk"])
def test_identity_not_a_mapping(fluke_runs):
    fluke_runs(desk_agent(), CASES)

def test_without_k(fluke_runs):
    fluke_runs(desk_agent(), CASES, identity={"model": "desk"})
''', "-p", "no:randomly")
    result.assert_outcomes(failed=4)
    out = result.stdout.str()
    assert "fluke: not_worse_than('harness=main'): that is the version these runs were recorded under" in out
    assert "fluke: no version matches 'harness=never-recorded'" in out
    assert "fluke: identity: list given; a mapping of identity fields is needed" in out
    assert "fluke: say how many runs per case" in out
    assert "Traceback" not in out and "_select.py" not in out and "UsageError" not in out


def test_runs_that_error_fail_the_test_with_their_count_and_the_first_error(pytester):
    result, _ = _inner(pytester, '''
def wrong_type(text):
    return "refunded"          # a string: no events, no verdict a case can check

@pytest.mark.fluke(k=50, identity={"model": "desk", "harness": "wrong-type"})
def test_wrong_type(fluke_runs):
    fluke.expect(fluke_runs(wrong_type, CASES)).reliable(bar=0.5)

@pytest.mark.fluke(k=10, identity={"model": "desk", "harness": "wrong-type"}, allow_errors=True)
def test_errors_expected(fluke_runs):
    assert len(fluke_runs(wrong_type, CASES[:1]).errored) == 10
''', "-p", "no:randomly")
    result.assert_outcomes(failed=1, passed=1)
    out = result.stdout.str()
    first = "agent returned a str; expected a Trajectory, a Run or (events, output)"
    assert f"fluke: 150 of 150 runs errored: {first}" in out
    assert re.search(r"ERRORED\s+test_agent.py::test_wrong_type: 150 of 150 runs errored", out)
    assert re.search(r"ERRORED\s+test_agent.py::test_errors_expected: 10 of 10 runs errored: .*"
                     r"\(allowed by the marker\)", out)
    assert "Traceback" not in out


@pytest.mark.skipif(importlib.util.find_spec("xdist") is None, reason="pytest-xdist is not installed")
def test_two_workers_running_the_same_trials_keep_exactly_k_runs_per_scenario(pytester):
    # Two tests with the same identity and cases run at once on two workers: each reads the empty
    # ledger, then waits for the other before its first agent call, so both run every trial. The
    # agent is not deterministic (its answer and latency vary run to run), so the runs' content
    # hashes differ: only the trial key can keep one run per version x scenario x condition x trial.
    body = "".join(f'''
@pytest.mark.fluke(k=20, identity={{"model": "desk", "harness": "shared"}})
def test_twin_{i}(fluke_runs):
    runs = fluke_runs(jittery, CASES[:2])
    assert len(runs) == 40
''' for i in range(2))
    result, ledger = _inner(pytester, '''
import os, pathlib, time

def jittery(text, *, trial):
    here = pathlib.Path.cwd()
    mark = here / f"ready-{os.getpid()}"
    if not mark.exists():              # the first call of this worker: meet the other one
        mark.touch()
        deadline = time.monotonic() + 120
        while len(list(here.glob("ready-*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    time.sleep(0.002 * (os.urandom(1)[0] % 4))
    return ([], os.urandom(4).hex())
''' + body, "-n", "2")
    result.assert_outcomes(passed=2)
    with sqlite3.connect(ledger) as conn:
        rows = conn.execute("SELECT scenario, COUNT(*), COUNT(DISTINCT json_extract(body, '$.trial')), "
                            "MIN(json_extract(body, '$.trial')), MAX(json_extract(body, '$.trial')) "
                            "FROM runs GROUP BY scenario ORDER BY scenario").fetchall()
    assert rows == [("refund/0", 20, 20, 0, 19), ("refund/1", 20, 20, 0, 19)]
    out = result.stdout.str()
    # both workers ran all 40 trials; 40 were stored, and the 40 made again were reported
    assert "80 runs in 2 batches (40 new" in out
    assert "40 runs were made twice (another worker recorded the same trial first; the first is kept" in out
