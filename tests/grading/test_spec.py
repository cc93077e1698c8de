"""Specs: loaded from dicts and files, validated before anything runs, with "did you mean"."""

from __future__ import annotations

import json

import pytest

from fluke.errors import SpecError
from fluke.grading import CHECKS, load_spec
from fluke.record import digest

BASE = {"tools": ["lookup_order", "check_policy", "issue_refund"], "required": ["lookup_order"],
        "forbidden": ["issue_refund"], "before": [["lookup_order", "check_policy"]], "max_steps": 5}


def test_the_same_rules_from_dict_yaml_json_and_toml_have_one_digest(tmp_path):
    yaml_text = ("tools: [lookup_order, check_policy, issue_refund]\nrequired: [lookup_order]\n"
                 "forbidden: [issue_refund]\nbefore: [[lookup_order, check_policy]]\nmax_steps: 5\n")
    toml_text = ('tools = ["lookup_order", "check_policy", "issue_refund"]\nrequired = ["lookup_order"]\n'
                 'forbidden = ["issue_refund"]\nbefore = [["lookup_order", "check_policy"]]\nmax_steps = 5\n')
    (tmp_path / "s.yaml").write_text(yaml_text)
    (tmp_path / "s.toml").write_text(toml_text)
    (tmp_path / "s.json").write_text(json.dumps(BASE))
    digests = {load_spec(tmp_path / f"s.{ext}").digest for ext in ("yaml", "toml", "json")}
    assert digests == {load_spec(BASE).digest}
    # the digest is SHA-256 of the canonical body, defaults included, so the body re-creates the spec
    spec = load_spec(BASE)
    assert spec.digest == digest(spec.body)
    assert load_spec(spec.body).digest == spec.digest
    assert spec.body["failing_loop"] == 3 and spec.body["ground"] is True


def test_tuples_in_a_python_dict_read_as_lists():
    assert load_spec({**BASE, "before": [("lookup_order", "check_policy")]}).digest == load_spec(BASE).digest


def test_misspelled_key_is_an_error_with_did_you_mean():
    with pytest.raises(SpecError, match=r"field forbiden: unknown key \(did you mean 'forbidden'\?\)"):
        load_spec({"tools": ["a"], "forbiden": ["a"]})


def test_string_where_a_list_belongs_is_an_error_never_split():
    with pytest.raises(SpecError) as err:
        load_spec({"tools": ["lookup_order"], "required": "lookup_order"})
    text = str(err.value)
    assert "field required: expected a list, got str 'lookup_order'" in text
    assert "['lookup_order']" in text


def test_tool_outside_vocabulary_is_an_error_naming_the_field_and_a_suggestion():
    with pytest.raises(SpecError, match=r"field before\.0\.1: tool 'chek_policy' is not in tools "
                                        r"\(did you mean 'check_policy'\?\)"):
        load_spec({**BASE, "before": [["lookup_order", "chek_policy"]]})
    with pytest.raises(SpecError, match=r"field privileged\.0: tool 'refund'"):
        load_spec({**BASE, "privileged": ["refund"], "untrusted": ["lookup_order"]})


def test_wrong_types_are_not_coerced():
    with pytest.raises(SpecError, match=r"field max_steps: expected an integer, got str '5'"):
        load_spec({**BASE, "max_steps": "5"})
    with pytest.raises(SpecError, match=r"field no_repeat: expected true or false, got int 1"):
        load_spec({**BASE, "no_repeat": 1})
    with pytest.raises(SpecError, match=r"field max_steps"):
        load_spec({**BASE, "max_steps": 0})


def test_every_problem_is_listed_at_once():
    with pytest.raises(SpecError) as err:
        load_spec({"tools": ["a", "b"], "required": ["c"], "forbidden": ["d"]})
    text = str(err.value)
    assert "2 problems" in text and "required.0" in text and "forbidden.0" in text


def test_severity_overrides_and_their_validation():
    spec = load_spec({**BASE, "severity": {"max_steps": "hard", "ungrounded": "soft"}})
    assert spec.severity_of("max_steps") == "hard" and spec.severity_of("ungrounded") == "soft"
    assert spec.severity_of("forbidden") == CHECKS["forbidden"] == "hard"
    with pytest.raises(SpecError, match=r"severity\.max_step: unknown check \(did you mean 'max_steps'\?\)"):
        load_spec({**BASE, "severity": {"max_step": "hard"}})
    with pytest.raises(SpecError, match=r"'hrad' is not a severity \(did you mean 'hard'\?\)"):
        load_spec({**BASE, "severity": {"max_steps": "hrad"}})


def test_default_severities_follow_seed_004():
    assert {k: CHECKS[k] for k in ("forbidden", "required", "before", "taint")} == dict.fromkeys(
        ("forbidden", "required", "before", "taint"), "hard")
    assert CHECKS["max_steps"] == CHECKS["repeat"] == "soft"
    assert CHECKS["ungrounded"] == "warn"


def test_contradictions_and_bad_rules_are_refused():
    with pytest.raises(SpecError, match="both name \\['lookup_order'\\]"):
        load_spec({**BASE, "forbidden": ["lookup_order"]})
    with pytest.raises(SpecError, match="cannot come before itself"):
        load_spec({**BASE, "before": [["lookup_order", "lookup_order"]]})
    with pytest.raises(SpecError, match="expected a pair"):
        load_spec({**BASE, "before": [["lookup_order"]]})
    with pytest.raises(SpecError, match="not a valid regular expression"):
        load_spec({**BASE, "args": {"lookup_order": {"id": {"pattern": "ORD-("}}}})
    with pytest.raises(SpecError, match="exactly one of 'allowed' or 'pattern'"):
        load_spec({**BASE, "args": {"lookup_order": {"id": {}}}})
    with pytest.raises(SpecError, match=r"args\.lookup_order\.id\.alowed: unknown key \(did you mean 'allowed'\?\)"):
        load_spec({**BASE, "args": {"lookup_order": {"id": {"alowed": ["x"]}}}})
    with pytest.raises(SpecError, match=r"ground_ignore\.0: tool 'lokup_order'"):
        load_spec({**BASE, "ground_ignore": ["lokup_order.id"]})


def test_file_errors_name_the_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("tools: [a\n")
    with pytest.raises(SpecError, match=r"bad\.yaml: not valid YAML"):
        load_spec(bad)
    (tmp_path / "x.txt").write_text("tools: [a]")
    with pytest.raises(SpecError, match=r"unknown spec format '\.txt'"):
        load_spec(tmp_path / "x.txt")
    with pytest.raises(SpecError, match="cannot be read"):
        load_spec(tmp_path / "missing.yaml")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(SpecError, match="got list"):
        load_spec(tmp_path / "list.json")
