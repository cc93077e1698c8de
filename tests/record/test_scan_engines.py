"""The export's quick secret test has two engines, Hyperscan (where the ``hyperscan`` package is
installed) and the Aho-Corasick DFA of ``ahocorasick-rs``: on every text they must find the same
literals at the same places and the same key-sized runs of base64, so ``may_hold_secret`` answers
alike. The texts: every credential shape of the corpus planted in a run (bare, under its name,
JSON-escaped, in other cases), every anchor and keyword alone, runs of base64 around 40
characters, random documents, and the stored bodies of real τ-bench and τ²-bench runs."""

from __future__ import annotations

import random
import string

import orjson
import pytest

from fluke import _gitleaks, _redact
from fluke._redact import _found_by_automaton, _key_sized_by_translation, may_hold_secret

from ..conftest import DATA
from .secret_corpus import SHAPES

hyperscan = pytest.importorskip("hyperscan", reason="the hyperscan package is not installed here")


@pytest.fixture(scope="module")
def engine():
    return _redact._Hyperscan()


def _agree(engine, data: bytes) -> bool:
    """Both engines' parts agree on ``data``; returns may_hold_secret's answer."""
    found, keywords = engine.found(data)
    found_ac, keywords_ac = _found_by_automaton(data)
    assert found == found_ac, data[:200]
    assert {k: sorted(v) for k, v in keywords.items()} == {k: sorted(v) for k, v in keywords_ac.items()}, data[:200]
    assert engine.key_sized(data) == _key_sized_by_translation(data), data[:200]
    return may_hold_secret(data)


def _case_variants(rng: random.Random, text: str) -> list[str]:
    mixed = "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in text)
    return [text, text.upper(), text.lower(), mixed]


def test_the_automaton_scans_first_and_hyperscan_past_switch_bytes(monkeypatch):
    """A small job does not pay for Hyperscan's databases; a large one moves to it."""
    monkeypatch.setattr(_redact, "ENGINE", None)
    monkeypatch.setattr(_redact, "_SCANNED", [0])
    body = orjson.dumps({"note": "refund approved " * 400})
    used = []
    for _ in range(_redact.SWITCH_BYTES // len(body) + 2):
        find, _ = _redact._engine(len(body))
        used.append(getattr(find, "__self__", None) is not None)
    assert not used[0] and used[-1]   # the automaton first, Hyperscan last
    assert sum(not u for u in used) == _redact.SWITCH_BYTES // len(body)   # switched just past SWITCH_BYTES
    monkeypatch.setattr(_redact, "ENGINE", "automaton")
    assert _redact._engine(10 ** 9)[0] is _found_by_automaton


def test_a_hyperscan_that_cannot_build_its_databases_leaves_the_automaton(monkeypatch):
    """Where Hyperscan is installed but will not run (a CPU without the instructions it needs), the
    quick test goes on with the automaton instead of failing."""
    def refuse():
        raise hyperscan.error("this CPU lacks SSSE3")

    monkeypatch.setattr(_redact, "ENGINE", None)
    monkeypatch.setattr(_redact, "_SCANNED", [_redact.SWITCH_BYTES])
    monkeypatch.setattr(_redact, "_HS", [])
    monkeypatch.setattr(_redact, "_INSTALLED", [True])
    monkeypatch.setattr(_redact, "_Hyperscan", refuse)
    assert _redact._engine(100)[0] is _found_by_automaton and _redact._INSTALLED == [False]
    assert may_hold_secret(b'{"password":"x"}') and not may_hold_secret(b'{"n":"W1"}')


def test_every_credential_shape_is_seen_alike(engine):
    rng = random.Random(37)
    seen = 0
    for name, text, _secret in SHAPES:
        for planted in (text, f"the key is {text} ok", f"{name}: {text}", f"line one\n{text}"):
            for doc in ({"result": planted}, {"args": {"value": planted}}, {planted: 1}):
                for variant in (orjson.dumps(doc), orjson.dumps(doc).replace(b"\\n", b"\\n\\t")):
                    assert _agree(engine, variant)   # never missed, by either engine
                    seen += 1
        for variant in _case_variants(rng, text):   # a shape in another case may or may not be flagged: alike
            _agree(engine, orjson.dumps({"note": variant}))
    assert seen == 24 * len(SHAPES)


def test_every_anchor_and_keyword_is_found_alike_in_any_case(engine):
    rng = random.Random(38)
    words = [w.decode() for w in _redact._GATE_LITERALS + _redact._KEY_WORDS] + list(_gitleaks.keywords())
    flagged = 0
    for word in words:
        for variant in _case_variants(rng, word):
            for doc in (f'{{"note":"x {variant} y"}}', f'{{"{variant}":1}}', f"{variant}{variant}"):
                flagged += _agree(engine, doc.encode())
    assert flagged > len(words)   # each at least in its own case


def test_runs_of_base64_near_forty_characters_alike(engine):
    rng = random.Random(39)
    alphabet = string.ascii_letters + string.digits + "+/"
    for length in range(36, 50):
        for _ in range(20):
            run = "".join(rng.choice(alphabet) for _ in range(length))
            for doc in (f'{{"v":"{run}"}}', f'{{"v":"a\\n{run}"}}', f'{{"v":"{run}=="}}', f'{{"v":"x.{run}.y"}}',
                        f'{{"v":"\\u0009{run}"}}'):
                _agree(engine, doc.encode())


def test_random_documents_alike(engine):
    rng = random.Random(40)
    pieces = ["order W123", "refund", "key", "token", "api", "Sk-", "AKIA", "eyJ", " ", "\\n", "é", "界", "=", ":",
              "glpat-", "xoxb-", "ghp_", "hf_", "secret", "Bearer ", "/", "+", "A" * 12, "0123456789", "sig="]
    for _ in range(2000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        _agree(engine, orjson.dumps({"text": text, "n": rng.randint(0, 9)}))


def test_real_runs_alike(engine, tmp_path):
    from fluke.adapters import read_file
    from fluke.ledger import open_ledger

    files = sorted((DATA / "tau-bench" / "historical_trajectories").glob("*.json"))[:2] if DATA.is_dir() else []
    if not files:
        pytest.skip(f"the shared τ-bench runs are not at {DATA}")
    with open_ledger(str(tmp_path / "l.db")) as ledger:
        for path in files:
            ledger.ingest(read_file(str(path)))
        bodies = [body if isinstance(body, bytes) else body.encode() for body, _ in ledger.run_bodies()]
    assert len(bodies) > 100
    for body in bodies:
        _agree(engine, body)


def test_threads_scanning_at_once_answer_as_one_does(engine):
    """A scan's scratch space is per thread: four threads on the same texts get one thread's answers."""
    from concurrent.futures import ThreadPoolExecutor

    rng = random.Random(41)
    texts = [orjson.dumps({"note": f"{rng.choice(['refund', 'token glpat-', 'key ', 'x' * 50])}{i}" * 200})
             for i in range(400)]
    alone = [engine.found(t) for t in texts]
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(engine.found, texts * 4)) == alone * 4
