"""The redactor: every credential shape in every place a run can carry it, and nothing else."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fluke.record import holds_secret, redact, redact_text, redact_url

from ..conftest import DATA, need
from .secret_corpus import SHAPES as CORPUS

_SA_KEY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7flukeSAkey"
_SERVICE_ACCOUNT = {
    "type": "service_account", "project_id": "demo-project",
    "private_key_id": "1f2e3d4c5b6a79880fedcba987654321abcdef12",
    "private_key": f"-----BEGIN PRIVATE KEY-----\n{_SA_KEY}\nQ2Vyd\n-----END PRIVATE KEY-----\n",
    "client_email": "bot@demo-project.iam.gserviceaccount.com",
}

#: (shape, the planted text, the part of it that must never survive redaction).
SHAPES = [
    ("url password", "postgresql://admin:Hunter2Secret@db/prod", "Hunter2Secret"),
    ("url password, other scheme", "amqps://rabbit:Zq9-pw_Secret@mq.internal:5671/vhost", "Zq9-pw_Secret"),
    ("url password holding @", "mysql://root:p@ssW0rdX@10.0.0.5/app", "ssW0rdX"),
    ("url password, no user", "redis://:R3disPassw0rd@cache:6379/0", "R3disPassw0rd"),
    ("aws secret key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "bPxRfiCYEXAMPLEKEY"),
    ("aws secret key with +", "9drTJvcXLB89EXAMPLEk1+ZpAXz0Ds2Bt4Rk7Hq3", "ZpAXz0Ds2Bt4Rk7Hq3"),
    ("aws secret key named", "AWS key: 4b7XzQ9kLmN2pR8sT1vW3yZ5aB6cD0eF7gH9jK2m",
     "4b7XzQ9kLmN2pR8sT1vW3yZ5aB6cD0eF7gH9jK2m"),
    ("slack webhook", "https://hooks.slack.com/services/T000/B000/XXXXSECRETXXXX", "XXXXSECRETXXXX"),
    ("stripe live key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
    ("stripe restricted key", "rk_live_51H8sVqLyjWDarjtT1zdp7dcAB", "51H8sVqLyjWDarjtT1zdp7dcAB"),
    ("stripe test key", "sk_test_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
    ("anthropic key", "sk-ant-api03-" + "Ab3_-x" * 15 + "Zz-q1AA", "Ab3_-xAb3_-x"),
    ("anthropic key, dash late", "sk-ant-api03-" + "K" * 60 + "-Q9", "-Q9"),
    ("openai key", "sk-proj-abcdefghijklmnopqrstuvwx_yz-012345", "abcdefghijklmnop"),
    ("google service account", json.dumps(_SERVICE_ACCOUNT), _SA_KEY),
    ("pem rsa", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7fluke\n-----END RSA PRIVATE KEY-----",
     "MIIEowIBAAKCAQEA7fluke"),
    ("pem encrypted", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqflk\n-----END ENCRYPTED PRIVATE KEY-----",
     "MIIFHDBOBgkqflk"),
    ("pem pgp", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGflukeKey\n-----END PGP PRIVATE KEY BLOCK-----",
     "lQOYBGflukeKey"),
    ("pem cut short", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAABG5vbmUAAAA",
     "AAAABG5vbmUAAAA"),
    ("pem json-escaped", "-----BEGIN EC PRIVATE KEY-----\\nMHcCAQEEIflukeEC\\n-----END EC PRIVATE KEY-----",
     "MHcCAQEEIflukeEC"),
    ("jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
     "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "dozjgNryP4J3jVmNHl0w5N"),
    ("jwt unsigned", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9.", "eyJzdWIiOiJhZG1pbiJ9"),
    ("aws key id", "AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"),
    ("github token", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz"),
    ("slack token", "xoxb-1234567890-abcdefghij", "1234567890-abcdefghij"),
    ("pypi token", "pypi-AgEIcHlwaS5vcmc" + "q" * 30, "q" * 30),
    ("google api key", "AIza" + "b7" * 17 + "c", "b7" * 17),
    ("bearer", "Bearer 9f8e7d6c5b4a3210", "9f8e7d6c5b4a3210"),
    ("authorization header", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA"),
    ("assignment", "password=correct-horse", "correct-horse"),
    ("json assignment", '"api_key": "zz-123456"', "zz-123456"),
]
IDS = [name for name, _, _ in SHAPES]


def _strings(value):
    """Every string in a value, dict keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def _placements(text: str):
    """The planted text bare, in prose, deep inside tool arguments and as a dict key."""
    return {
        "bare": text,
        "prose": f"The agent said: here you go {text} — let me know.",
        "nested": {"events": [{"kind": "tool", "args": {"conn": [{"value": text}, ("x", text)]}}]},
        "key": {"headers": {text: "1"}},
        "prose in a list": ["ok", f"({text})"],
    }


@pytest.mark.parametrize("name, text, secret", SHAPES, ids=IDS)
def test_every_shape_is_hidden_wherever_it_is_planted(name, text, secret):
    assert secret in text
    for where, value in _placements(text).items():
        out = redact(value)
        left = [s for s in _strings(out) if secret in s]
        assert not left, f"{name} survived {where}: {left}"
        assert holds_secret(value), where
        assert not holds_secret(out), where


@pytest.mark.parametrize("name, text, secret", SHAPES, ids=IDS)
def test_redaction_is_idempotent_and_names_what_it_hid(name, text, secret):
    once = redact_text(text)
    assert redact_text(once) == once
    assert "[REDACTED" in once


def test_url_passwords_keep_the_user_and_the_host():
    assert (redact_text("db postgresql://admin:Hunter2Secret@db/prod ok")
            == "db postgresql://admin:[REDACTED]@db/prod ok")
    assert redact_text("mysql://root:p@ssW0rdX@10.0.0.5/app") == "mysql://root:[REDACTED]@10.0.0.5/app"
    assert redact_text("redis://:pw@cache:6379") == "redis://:[REDACTED]@cache:6379"


def test_redact_url_hides_the_password_and_secret_parameters_of_a_ledger_url():
    url = "postgresql://fluke:s3cr3t@db.example:5432/runs?sslmode=require&password=other&sslpassword=p2"
    assert redact_url(url) == ("postgresql://fluke:[REDACTED]@db.example:5432/runs?sslmode=require"
                               "&password=[REDACTED]&sslpassword=[REDACTED]")
    for plain in ("fluke.db", "sqlite:///tmp/x/fluke.db", "postgresql://fluke@db/runs", "postgresql:///runs"):
        assert redact_url(plain) == plain


def test_a_service_account_file_as_a_dict_loses_its_key_and_key_id():
    out = redact(_SERVICE_ACCOUNT)
    assert out["private_key"] == "[REDACTED]" and out["private_key_id"] == "[REDACTED]"
    assert out["client_email"] == _SERVICE_ACCOUNT["client_email"] and out["type"] == "service_account"


def test_every_string_under_a_secret_key_is_hidden_and_other_values_pass():
    value = {"password": ["a", {"x": "b"}], "api_key": 12345, "Authorization": "Bearer x", "user": "ann"}
    assert redact(value) == {"password": ["[REDACTED]", {"x": "[REDACTED]"}], "api_key": 12345,
                             "Authorization": "[REDACTED]", "user": "ann"}


#: Strings that look like secrets to a careless pattern and are not: digests, ids, paths, URLs.
NOT_SECRETS = [
    "40f46d3540dc95aca145ddecb0464fdd9a1e8c15",                    # a SHA-1 (40 hex)
    "B02B509367E8436F956C334741AC7CF7C9F5DABE",                    # upper-case hex
    "0961dcc4e2c9d0b9fc78de279476be45d25e1e7b3237a3cef0ae7d673a56f24f",
    "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",               # a base64 SHA-256 (44 chars)
    "123e4567-e89b-12d3-a456-426614174000",
    "Users/alice/Projects/Repo2/src/main/Foo1.java",
    "/home/ci/Work/Build42/lib/python3.11/site/Pkg9/x.py",
    "https://example.com/a/b?x=1&sort_key=name", "ssh://git@github.com/org/repo.git",
    "mailto:ann@example.com", "meet at 10:30 in room A", "user mia_li_3668 order #W2378156",
    "getUserAccountBalanceForCustomerId12345X", "the token expires in an hour", "ask-me-anything",
    "password policy: 12 chars", "order W2378156 for AKIA", "sk-short", "task_live_report",
    "The basic plan costs 10 dollars", "eyJhbGci", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_ordinary_values_pass_untouched(text):
    assert redact_text(text) == text
    assert not holds_secret({"v": text, text: 1})


def test_real_runs_lose_nothing_to_the_redactor():
    """Every distinct string (keys included) in the shared τ-bench and τ²-bench files: none is
    secret-shaped, so none may change. 35,064 distinct strings when this was written."""
    root = need(DATA)
    seen: set[str] = set()
    for path in sorted(root.rglob("*.json")):
        seen.update(_strings(json.loads(path.read_text())))
    assert len(seen) > 30_000
    changed = sorted(s for s in seen if redact_text(s) != s)
    assert changed == []


# -- properties ----------------------------------------------------------------------
_secret = st.sampled_from([text for _, text, _ in SHAPES] + [text for _, text, _ in CORPUS])
_filler = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_filler, _secret), max_size=6), st.sampled_from(["", " ", "\n", "/", ":", "="]))
def test_redaction_is_idempotent_on_any_mixture(parts, sep):
    text = sep.join(parts)
    once = redact_text(text)
    assert redact_text(once) == once
    value = {text: [text, {"password": text}]}
    assert redact(redact(value)) == redact(value)


#: Tokens of ordinary run text: words, numbers, ids, digests, paths and plain URLs.
_word = st.from_regex(r"[A-Za-z]{1,12}", fullmatch=True)
_token = st.one_of(
    _word, st.integers(-10**9, 10**12).map(str), st.from_regex(r"[A-Z]{1,3}[0-9]{3,9}", fullmatch=True),
    st.from_regex(r"[0-9a-f]{40}|[0-9a-f]{64}|[0-9A-F]{40}", fullmatch=True), st.uuids().map(str),
    st.lists(_word, min_size=1, max_size=5).map("/".join),
    st.lists(_word, min_size=1, max_size=3).map(lambda w: "https://example.com/" + "/".join(w)),
    st.from_regex(r"[a-z]{2,8}_[a-z]{2,8}_[0-9]{1,5}", fullmatch=True))


@settings(max_examples=300, deadline=None)
@given(st.lists(_token, max_size=12), st.sampled_from([" ", ", ", "\n", ". "]))
def test_redaction_never_changes_or_lengthens_ordinary_text(tokens, sep):
    text = sep.join(tokens)
    out = redact_text(text)
    assert len(out) <= len(text)
    assert out == text


# -- error messages --------------------------------------------------------------------
def test_an_ingest_error_quoting_a_bad_value_does_not_quote_the_secret(tmp_path):
    from fluke.adapters import read_file
    from fluke.errors import InputError

    path = tmp_path / "a.jsonl"
    path.write_text('{"format_version":1,"scenario":"s","trial":0}\n'
                    '{"format_version":1,"scenario":"s2","trial":"AKIAIOSFODNN7EXAMPLE"}\n')
    with pytest.raises(InputError) as caught:
        list(read_file(path))
    text = str(caught.value)
    assert "line 2" in text and "trial" in text
    assert "AKIAIOSFODNN7EXAMPLE" not in text and "[REDACTED:aws-key-id]" in text
    assert "AKIAIOSFODNN7EXAMPLE" not in repr(caught.value.args) + str(caught.value.message)


def test_every_fluke_error_redacts_its_message_and_errors_stay_free_of_pydantic():
    import subprocess
    import sys

    from fluke.errors import LedgerError, SpecError

    assert str(LedgerError("postgresql://fluke:pw-Secret9@db/runs: cannot connect")) == \
        "postgresql://fluke:[REDACTED]@db/runs: cannot connect"
    assert "sk_live_4eC39HqLyjWDarjtT1zdp7dc" not in str(SpecError("bad value 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'"))
    code = ("import sys, fluke.errors; "
            "print(sorted(m for m in ('pydantic', 'orjson', 'fluke.record') if m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


_json_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10, 10), _filler, _secret),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.one_of(_filler, _secret, st.sampled_from(
                                ["password", "db_password", "Authorization", "token", "input_tokens"])),
                                inner, max_size=4)),
    max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(_json_value)
def test_holds_secret_is_exactly_whether_redaction_changes_a_value(value):
    import orjson

    from fluke.record import may_hold_secret

    assert holds_secret(value) == (redact(value) != value)
    if holds_secret(value):   # the quick test on a document's text never misses what holds_secret finds
        assert may_hold_secret(orjson.dumps(value).decode())


@pytest.mark.parametrize("text", [
    "BEARER 00000000=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",   # found by the idempotence property
    "key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
])
def test_a_key_right_after_another_replacement_goes_in_the_same_pass(text):
    once = redact_text(text)
    assert "bPxRfiCYEXAMPLEKEY" not in once and redact_text(once) == once
