"""fluke intervene on the simulated support agent (memory and retries): the planted effects are
recovered within their intervals over 200 continuations; stale reuse is refused, and forcing it
biases the effect; coupling reduces the variance by the factor it reports."""

from __future__ import annotations

import numpy as np
import pytest

from fluke.ledger import open_ledger
from fluke.replay import Intervention, intervene, select_sources
from fluke.simulate import SUPPORT_TOOLS, support_tool_agent

from ._support import FAULT, MEMORY_EFFECT, TOOL_EFFECT, record, timed_out

SUCCESS = Intervention("respond", value={"account": "restored", "plan": "standard"})
RETRY3 = Intervention("set", "retry", 3)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    ledger = open_ledger(str(tmp_path_factory.mktemp("intervene") / "support.db"))
    result = record(ledger)
    yield ledger, result
    ledger.close()


@pytest.fixture(scope="module")
def source(recorded):
    """One recorded run whose account lookup (tool call 1, after the memory search) timed out."""
    ledger, result = recorded
    run = timed_out(result)[0]
    (src,) = select_sources(ledger, [run.hash[:16]])
    assert [c["tool"] for c in src.log["calls"]] == ["search_memory", "lookup_account"]
    assert src.log["calls"][1]["error"] == "TimeoutError: lookup_account timed out"
    return src


@pytest.mark.parametrize("change, truth", [
    (SUCCESS, TOOL_EFFECT),                       # no retry left: the lookup's whole effect
    (RETRY3, TOOL_EFFECT * (1 - FAULT ** 2)),     # two more attempts, each timing out with the fault rate
])
def test_the_planted_effect_is_recovered_within_its_interval_over_200_continuations(recorded, source, change, truth):
    ledger, _ = recorded
    result = intervene([source], support_tool_agent, SUPPORT_TOOLS, [change], step=1, n=200, ledger=ledger)
    e = result.effect
    assert e.n == 200 and e.low <= truth <= e.high, (e, truth)
    assert e.high - e.low < 0.12           # informative: it also excludes no effect
    assert e.low > 0
    assert result.baseline.refused == result.intervened.refused == 0
    assert result.baseline.served == {"recorded": 400}    # the baseline re-lives the recorded prefix
    if change is RETRY3:     # the extra attempts are the simulator's, for every continuation
        assert result.intervened.needed_simulator == 200
        assert result.needed_simulator == (200, 400)
    else:
        assert result.intervened.served == {"intervention": 200, "recorded": 200}


def test_editing_memory_changes_the_state_so_the_recorded_timeout_is_not_reused(recorded, source):
    """Forgetting the note at step 0 changes the state the lookup sees: its recorded timeout no
    longer matches, the simulator answers afresh, and the effect is −memory + tool · (1 − f)."""
    ledger, _ = recorded
    forget = Intervention("forget", source.run.scenario)
    result = intervene([source], support_tool_agent, SUPPORT_TOOLS, [forget], step=0, n=200, ledger=ledger)
    truth = -MEMORY_EFFECT + TOOL_EFFECT * (1 - FAULT)
    assert result.effect.low <= truth <= result.effect.high, (result.effect, truth)
    assert result.intervened.served == {"simulator": 400}
    assert result.baseline.served == {"recorded": 400}


def test_a_request_the_recording_does_not_hold_is_refused_without_a_simulator(source):
    result = intervene([source], support_tool_agent, None, [RETRY3], step=1, n=5)
    assert (result.intervened.refused, result.intervened.judged) == (5, 0)
    assert result.baseline.refused == 0 and result.baseline.judged == 5
    assert np.isnan(result.effect.estimate) and "too small to tell" in result.effect.reason


def test_the_refusal_names_the_step_and_the_difference(source):
    from fluke.runner import Case, evaluate
    from fluke.replay._continue import Continuation

    job = {"log": source.log, "origin": source.run.hash, "step": 1, "stale": False,
           "interventions": [RETRY3.to_dict()]}
    (r,) = evaluate([Case("x", input=job)], Continuation(support_tool_agent, None, mode="continue"), k=1).results
    assert r.run.error.startswith("stopped at tool call 2: lookup_account({\"case\": \"%s\"}): the recording has 2 "
                                  "calls, and no simulator is declared" % source.run.scenario)
    assert [(c.tool, c.ok) for c in r.run.tool_calls] == [("search_memory", True), ("lookup_account", False)]


def test_forcing_stale_reuse_biases_the_effect(recorded, source):
    """Serving the recorded timeout to the retries (a request at a state it was not recorded for)
    manufactures an environment where every retry times out: the effect vanishes."""
    ledger, _ = recorded
    truth = TOOL_EFFECT * (1 - FAULT ** 2)
    forced = intervene([source], support_tool_agent, SUPPORT_TOOLS, [RETRY3], step=1, n=200, stale=True,
                       ledger=ledger)
    honest = intervene([source], support_tool_agent, SUPPORT_TOOLS, [RETRY3], step=1, n=200, ledger=ledger)
    assert forced.intervened.served == {"recorded": 400, "stale": 400}
    assert forced.effect.estimate == 0.0 and not forced.effect.low <= truth <= forced.effect.high
    assert honest.effect.low <= truth <= honest.effect.high
    assert forced.baseline.version == honest.baseline.version         # one honest baseline, stored once
    assert forced.intervened.version != honest.intervened.version     # the forced arm is named as such


def test_coupled_continuations_reduce_the_variance_by_the_measured_factor(source):
    """Over repeated estimates (independent seeds), the variance of fresh estimates over that of
    coupled ones matches the factor each coupled estimate measures on its own draws."""
    estimates = {"coupled": [], "fresh": []}
    factors = []
    for rep in range(30):
        for coupling in estimates:
            r = intervene([source], support_tool_agent, SUPPORT_TOOLS, [SUCCESS], step=1, n=20, coupling=coupling,
                          seed=10 * rep)
            estimates[coupling].append(r.effect.estimate)
            if coupling == "coupled":
                factors.append(r.effect.variance_factor)
    observed = np.var(estimates["fresh"], ddof=1) / np.var(estimates["coupled"], ddof=1)
    measured = float(np.median([f for f in factors if np.isfinite(f)]))
    # each variance from 30 estimates has a relative standard error of about sqrt(2/29) = 0.26,
    # so their ratio lies within a factor of 2.5 of the truth with room to spare
    assert observed > 2.0
    assert measured / 2.5 < observed < measured * 2.5, (observed, measured)
    # both designs aim at the same effect
    assert abs(np.mean(estimates["coupled"]) - TOOL_EFFECT) < 0.05
    assert abs(np.mean(estimates["fresh"]) - TOOL_EFFECT) < 3 * np.std(estimates["fresh"]) / np.sqrt(30)
