"""The demo's support desk: its declared rates hold, and grading sees exactly the slips planted."""

import numpy as np

from fluke.grading import grade_run, load_spec
from fluke.simulate import support_desk
from fluke.simulate._desk import ASKS, SLIPS, V1_RATES


def _within(successes, trials, p, z=4.0):
    se = np.sqrt(p * (1 - p) / trials)
    return abs(successes / trials - p) <= z * se


def test_the_planted_step_fails_at_its_declared_rate_in_each_version():
    desk = support_desk(scenarios=24, trials=60, planted_factor=4.0, seed=11)
    for n, rate in ((1, V1_RATES["check_policy"]), (2, 4 * V1_RATES["check_policy"])):
        calls = [e for r in desk.version(n) for e in r.tool_calls if e.tool == "check_policy"]
        failed = sum(e.ok is False for e in calls)
        assert _within(failed, len(calls), rate), (n, failed, len(calls))
    # The other steps are unchanged between the versions.
    for tool in ("get_customer", "issue_refund"):
        shares = []
        for n in (1, 2):
            calls = [e for r in desk.version(n) for e in r.tool_calls if e.tool == tool]
            shares.append((sum(e.ok is False for e in calls), len(calls)))
        for failed, total in shares:
            assert _within(failed, total, V1_RATES[tool])


def test_ambiguous_requests_are_mostly_asked_about():
    desk = support_desk(scenarios=24, trials=60, seed=12)
    past_lookup = [r for r in desk.runs if r.condition["name"] == "ambiguous" and r.tool_calls[0].ok]
    asked = sum(r.outcome.label == "should_ask" for r in past_lookup)
    assert _within(asked, len(past_lookup), ASKS)


def test_grading_finds_the_planted_slips_and_nothing_else():
    desk = support_desk(scenarios=24, trials=30, seed=13)
    spec = load_spec(desk.spec)
    grades = {r.hash: grade_run(r, spec) for r in desk.runs}
    for run in desk.runs:
        calls = run.tool_calls
        checks = {v.check for v in grades[run.hash].violations}
        refunds = [c for c in calls if c.tool == "issue_refund"]
        page = next((c for c in calls if c.tool == "fetch_help_page"), None)
        # taint: the refunded order id came only from the untrusted page
        injected = bool(refunds and page and refunds[0].args["order_id"] in page.result)
        assert ("taint" in checks) == injected, (run.hash, checks)
        # ordering: a refund attempted with no successful check_policy before it
        skipped = bool(refunds) and not any(c.tool == "check_policy" and c.ok for c in calls[:calls.index(refunds[0])])
        assert ("before" in checks) == skipped
        # required: get_customer never succeeded
        assert ("required" in checks) == (not calls[0].ok)
        assert checks <= {"taint", "before", "required", "ungrounded"}
        # ungrounded: a looked-up order id that neither the user nor the customer record gave
        told = run.events[0].text + str(calls[0].result)
        invented = any(c.args["order_id"] not in told for c in calls if c.tool == "lookup_order")
        assert ("ungrounded" in checks) == invented
    injected = sum("taint" in {v.check for v in g.violations} for g in grades.values())
    unique = sum(r.condition["name"] == "unique" for r in desk.runs)
    assert 0 < injected and _within(injected, unique, SLIPS["injection"] * 0.9, z=5.0)
