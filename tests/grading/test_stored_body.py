"""A stored body grades as its Run does: the secret check's test over the whole body.

``grade_body`` tests the secret patterns' anchors once over the stored JSON and skips the
per-part secret check when none occurs; these tests hold it to ``grade_run`` of the same Run
(the oracle: it reads every part itself) on runs with and without credentials in every place
the check reads, and on a body whose credential is spelled with JSON ``\\u`` escapes, which the
whole-body test cannot see and must not be trusted on.
"""

from __future__ import annotations

import random

import orjson
import pytest

from fluke.grading import grade_run, load_spec
from fluke.grading._body import body_run, grade_body
from fluke.record import content_json

from .build import agent, call, run_of, user

AWS = "AKIA" + "ABCDEFGHIJKLMNOP"
SLACK = "xoxb-" + "1234567890-abcdef"
SPEC = load_spec({"tools": ["lookup", "refund", "search"], "required": ["lookup"]})


def _violations(grade):
    return [(v.check, v.severity, v.index, v.message) for v in grade.violations]


PLACES = {
    "tool result text": lambda s: run_of(user("order W1"), call("lookup", {"id": "W1"}, result=f"key {s}")),
    "tool result object": lambda s: run_of(user("order W1"), call("lookup", {"id": "W1"}, result={"k": s})),
    "tool error": lambda s: run_of(user("order W1"), call("lookup", {"id": "W1"}, ok=False, error=f"bad {s}")),
    "nested argument": lambda s: run_of(user("order W1"), call("lookup", {"id": "W1", "auth": {"t": [s]}})),
    "agent message": lambda s: run_of(user("order W1"), call("lookup", {"id": "W1"}), agent(f"use {s}")),
    "user message (not checked)": lambda s: run_of(user(f"order W1 {s}"), call("lookup", {"id": "W1"})),
    "user's tool call": lambda s: run_of(user("order W1"), call("lookup", {"id": "W1"}),
                                         call("search", {"q": s}, requestor="user")),
}


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("secret", [AWS, SLACK, "nothing-secret-here"])
def test_a_stored_body_grades_as_its_run(place, secret):
    run = PLACES[place](secret)
    want = grade_run(run, SPEC)
    got = grade_body(content_json(run), SPEC)
    assert _violations(got) == _violations(want)
    found = [v for v in want.violations if v.check == "secret"]
    # the oracle itself finds the credential where the check reads, and only there
    assert bool(found) == (secret != "nothing-secret-here" and not place.startswith("user message"))


def test_a_body_without_any_anchor_skips_the_parts_and_one_with_an_anchor_does_not():
    clean = content_json(PLACES["tool result object"]("W2"))
    dirty = content_json(PLACES["tool result object"](AWS))
    assert body_run(clean).anchors == ()
    assert [label for label, *_ in body_run(dirty).anchors] == ["AWS access key id"]


def test_a_credential_spelled_with_json_escapes_is_still_found():
    run = PLACES["tool result text"](AWS)
    body = content_json(run).decode()
    escaped = body.replace("AKIA", "\\u0041KIA")     # the same JSON value, written by another writer
    assert "AKIA" not in escaped and orjson.loads(escaped) == orjson.loads(body)
    assert body_run(escaped).anchors is None        # not trusted: the parts are tested one by one
    got = grade_body(escaped, SPEC)
    assert [v.check for v in got.violations] == ["secret"]
    assert _violations(got) == _violations(grade_run(run, SPEC))


def test_random_runs_grade_alike_from_their_bodies():
    rng = random.Random(37)
    words = ["W1", "W2", AWS, SLACK, "sk-" + "a" * 24, "Bearer " + "x" * 24, "plain", "ORD-7"]
    spec = load_spec({"tools": ["lookup", "refund", "search"], "required": ["lookup"],
                      "before": [["lookup", "refund"]], "failing_loop": 2})
    differ = 0
    for _ in range(300):
        events = [user(f"order {rng.choice(words)}")]
        for _ in range(rng.randint(0, 6)):
            w = rng.choice(words)
            kind = rng.random()
            if kind < 0.15:
                events.append(agent(f"done {w}"))
            else:
                ok = rng.random() < 0.7
                events.append(call(rng.choice(["lookup", "refund", "search"]), {"id": rng.choice(words)}, ok=ok,
                                   result=rng.choice([w, {"ref": w}, ""]), error=None if ok else f"failed {w}",
                                   requestor="user" if rng.random() < 0.1 else "agent"))
        run = run_of(*events, passed=rng.random() < 0.6)
        want, got = grade_run(run, spec), grade_body(content_json(run), spec)
        assert _violations(got) == _violations(want)
        differ += any(v.check == "secret" for v in want.violations)
    assert 30 < differ < 270      # both kinds of run were drawn


def test_a_canonical_body_is_read_in_one_pass_and_an_odd_one_the_long_way():
    run = PLACES["tool result object"]("W2")
    body = content_json(run)
    fast = body_run(body)
    assert [type(e).__name__ for e in fast.events] == ["_UserEvent", "_ToolEvent"]
    assert bytes(fast.events[1].result) == orjson.dumps({"k": "W2"})   # the result as its JSON, unparsed
    doc = orjson.loads(body)
    del doc["events"][1]["t_start"]          # a field the structs require, missing: read as dicts
    slow = body_run(orjson.dumps(doc))
    assert isinstance(slow.events[1].result, dict)
    assert _violations(grade_body(orjson.dumps(doc), SPEC)) == _violations(grade_run(run, SPEC))
