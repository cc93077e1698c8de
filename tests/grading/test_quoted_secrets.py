"""A check that quotes part of an argument quotes what the redaction of the whole value shows."""

from __future__ import annotations

import pytest

from fluke.grading import grade_run, load_spec

from ..record.test_redact import SHAPES
from .build import call, run_of, user

TOOLS = ["connect", "fetch_page", "refund"]
URL_SHAPES = [(name, text, secret) for name, text, secret in SHAPES if "url password" in name]


@pytest.mark.parametrize("name, text, secret", SHAPES, ids=[name for name, _, _ in SHAPES])
def test_ungrounded_never_quotes_a_secret(name, text, secret):
    for args in ({"dsn": text}, {"opts": {"conn": [f"use {text} now"]}}):
        g = grade_run(run_of(user("connect me"), call("connect", args)), load_spec({"tools": TOOLS}))
        messages = [v.message for v in g.violations]
        assert all(secret not in m for m in messages), (name, messages)


@pytest.mark.parametrize("name, text, secret", URL_SHAPES, ids=[name for name, _, _ in URL_SHAPES])
def test_the_password_cut_out_of_a_url_is_quoted_redacted(name, text, secret):
    g = grade_run(run_of(user("connect me"), call("connect", {"dsn": text})), load_spec({"tools": TOOLS}))
    ungrounded = [v.message for v in g.violations if v.check == "ungrounded"]
    assert ungrounded and any("'[REDACTED]'" in m for m in ungrounded), ungrounded
    assert all(secret not in m for m in ungrounded)


def test_taint_quotes_the_redacted_part_and_still_names_plain_identifiers():
    url = "postgresql://admin:Hunter2Secret@db/prod"
    spec = load_spec({"tools": TOOLS, "untrusted": ["fetch_page"], "privileged": ["refund"]})
    r = run_of(user("refund my order"), call("fetch_page", result=f"use {url} and order ORD-77123"),
               call("refund", {"target": url, "order": "ORD-77123"}))
    messages = [v.message for v in grade_run(r, spec).violations if v.check == "taint"]
    assert any("'[REDACTED]'" in m for m in messages) and any("'ORD-77123'" in m for m in messages)
    assert all("Hunter2Secret" not in m for m in messages)
