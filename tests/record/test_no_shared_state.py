"""No state kept where a caller can change it: process-wide caches hand out copies or immutable
values, and a copy of a run or an identity with a changed field computes its own hash."""

from __future__ import annotations

import hashlib

import numpy as np
import orjson
import pytest

from fluke.record import (CANONICAL, Identity, Outcome, Run, ToolCall, canonical_json, content_fields,
                          content_json)


def _fresh_hash(run: Run) -> str:
    """The oracle: the hash of the run's pydantic dump (no cache of fluke's on the way)."""
    return hashlib.sha256(canonical_json(run.model_dump(mode="json", exclude={"source"}))).hexdigest()


def _runs():
    ident = Identity(model="m", harness={"name": "h", "v": [1, 2]})
    return [Run(scenario=f"s{i}", trial=i, identity=ident, outcome=Outcome(passed=i % 2 == 0, reward=0.5))
            for i in range(3)]


def test_mutating_the_fields_of_one_run_changes_no_other_runs_hash():
    first, second, _ = _runs()
    expected = _fresh_hash(second)
    values = content_fields(first)
    values["outcome"]["passed"] = None                          # the outcome is a copy
    with pytest.raises(TypeError):
        values["identity"]["model"] = "someone else"            # the shared identity cannot be changed
    assert first.outcome.passed is True
    assert content_json(second) == canonical_json(second.model_dump(mode="json", exclude={"source"}))
    assert hashlib.sha256(content_json(second)).hexdigest() == expected


def test_the_identity_fragment_serialises_as_the_identity_itself():
    run = _runs()[1]
    doc = orjson.loads(orjson.dumps(content_fields(run), option=CANONICAL))
    assert doc["identity"] == run.identity.model_dump(mode="json")


@pytest.mark.parametrize("update", [{"scenario": "other"}, {"trial": 7}, {"outcome": Outcome(passed=False)},
                                    {"identity": Identity(model="n")}, {"events": [ToolCall(tool="t")]}])
def test_a_copy_with_a_changed_field_has_the_hash_of_a_freshly_built_run(update):
    run = _runs()[0]
    before = run.hash                                            # cached on the original
    copy = run.model_copy(update=update)
    rebuilt = Run.model_validate({**run.model_dump(), **{k: (v.model_dump() if hasattr(v, "model_dump") else
                                                             [e.model_dump() for e in v] if isinstance(v, list) else v)
                                                         for k, v in update.items()}})
    assert copy.hash == rebuilt.hash == _fresh_hash(rebuilt) != before
    assert copy.version == rebuilt.version
    assert run.hash == before == _fresh_hash(run)                # the original keeps its own


def test_a_copy_without_changes_keeps_the_hash_and_a_source_only_change_keeps_it_too():
    run = _runs()[0]
    assert run.model_copy().hash == run.hash
    from fluke.record import Source

    assert run.model_copy(update={"source": Source(adapter="fluke", file="x.jsonl", position=3)}).hash == run.hash


def test_an_identity_copy_with_a_changed_component_has_a_fresh_version():
    ident = Identity(model="m", tools="t1")
    before = ident.version
    changed = ident.model_copy(update={"tools": "t2"})
    assert changed.version == Identity(model="m", tools="t2").version != before
    assert ident.model_copy(update={"date": "2026-01-01"}).version == before   # the date is not in the version
    # the process-wide table of versions hands out strings: nothing in it can be changed in place
    assert isinstance(changed.version, str)


def test_a_stored_run_read_back_and_copied_computes_its_own_hash(tmp_path):
    from fluke.ledger import open_ledger

    with open_ledger(str(tmp_path / "l.db")) as ledger:
        ledger.ingest(_runs())
        stored = next(iter(ledger.runs()))
    copy = stored.model_copy(update={"trial": 99})
    assert copy.hash == _fresh_hash(copy) != stored.hash


def test_the_mcnemar_table_cached_for_the_detection_limit_is_read_only():
    from fluke.comparison._limit import _mcnemar_table

    d, c = _mcnemar_table(12, 0.05)
    with pytest.raises(ValueError):
        c[0] = 99
    assert np.array_equal(_mcnemar_table(12, 0.05)[1], c)


def test_the_secret_scanners_keyword_index_is_immutable():
    from fluke._gitleaks import _index

    _, words, by_word, always = _index()
    assert isinstance(words, tuple) and isinstance(always, tuple)
    with pytest.raises(TypeError):
        by_word["new"] = ()
