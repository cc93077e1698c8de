"""gitleaks' vendored rules: all read, every pattern compiled for re, the JSON gate never missing a find."""

from __future__ import annotations

import math
import re
import tomllib

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fluke import _gitleaks

from .._close import strings_in
from .secret_corpus import SHAPES


def test_the_vendored_file_is_gitleaks_default_config_with_its_licence():
    data = tomllib.loads(_gitleaks.RULES_FILE.read_text(encoding="utf-8"))
    assert data["title"] == "gitleaks config" and len(data["rules"]) == 222
    licence = _gitleaks.RULES_FILE.with_name("LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License") and "Zachary Rice" in licence
    assert re.fullmatch(r"[0-9a-f]{40}", _gitleaks.SOURCE["commit"]) and _gitleaks.SOURCE["license"] == "MIT"


def test_the_parsed_copy_is_the_toml_file_parsed():
    import json

    parsed = json.loads(_gitleaks.PARSED_FILE.read_text(encoding="utf-8"))
    assert parsed == tomllib.loads(_gitleaks.RULES_FILE.read_text(encoding="utf-8"))


def test_every_rule_with_a_pattern_compiles_and_the_adapted_ones_are_counted():
    rules = _gitleaks.rules()
    assert len(rules) == 221
    assert _gitleaks.skipped() == (("pkcs12-file", "no regex (a rule on file paths)"),)
    # RE2 syntax re does not take, rewritten: mid-pattern flags, POSIX classes, \z
    adapted = [r.id for r in rules if _gitleaks.translate(r.source) != r.source]
    assert len(adapted) == 26
    with pytest.raises(re.error):
        re.compile(next(r.source for r in rules if r.id == "sendgrid-api-token"))
    assert all(r.pattern and r.in_json for r in rules)


@pytest.mark.parametrize("pattern, text, found", [
    (r"\b(p8e-(?i)[a-z0-9]{4})\b", "p8e-AbCd", "p8e-AbCd"),
    (r"x(?i)y|z", "Z", "Z"),                  # as in RE2, the flag runs on past "|" to the group's end
    (r"x(?i)y|z", "xY", "xY"),
    (r"[[:alnum:]]{3}\z", "ab9", "ab9"),
    (r"[[:xdigit:]]{2}", "zz", None),
])
def test_translate_keeps_re2_meaning(pattern, text, found):
    m = re.search(_gitleaks.translate(pattern), text, re.ASCII)
    assert (m.group(0) if m else None) == found


def test_entropy_is_shannon_in_bits():
    assert _gitleaks.entropy("abcd") == pytest.approx(2.0)
    assert _gitleaks.entropy("aab") == pytest.approx((2 / 3) * math.log2(3 / 2) + (1 / 3) * math.log2(3), abs=1e-12)


_filler = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_planted = st.builds(lambda pre, shape, post: f"{pre}{shape[1]}{post}", _filler, st.sampled_from(SHAPES), _filler)
_doc = st.recursive(st.one_of(_filler, _planted, st.integers(-5, 5)),
                    lambda inner: st.one_of(st.lists(inner, max_size=3),
                                            st.dictionaries(st.one_of(_filler, _planted), inner, max_size=3)),
                    max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(_doc)
def test_the_json_gate_never_misses_what_find_finds(doc):
    found = any(_gitleaks.find(s) for s in strings_in(doc))
    if found:
        assert _gitleaks.may_match(orjson.dumps(doc))


def test_the_gate_is_quiet_on_real_runs():
    from ..conftest import TAU_AIRLINE, need

    from fluke.adapters import read_file

    runs = list(read_file(need(TAU_AIRLINE)))
    flagged = [r.scenario for r in runs if _gitleaks.may_match(r.model_dump_json().encode())]
    assert len(runs) == 200 and flagged == []
