"""Every reader, on mutated real files, raises only fluke's own errors (issue 15, point 4).

Per reader and per run of the suite: ``FUZZ_EXAMPLES`` hypothesis examples (default 600, so
4,200 inputs in all with the stored-body test; 91 s at a load average of 8 on the shared
2-core machine, where 300 per reader took 21 s at a load of 3; set ``FLUKE_FUZZ_EXAMPLES``
to change it). Each example is one input file: a real file from ../shared (cut small) with
one to three drawn edits, sometimes damaged at byte level, read with the format forced or
detected, then ingested into a real SQLite ledger and read back. Outside CI the examples
are random each run and hypothesis keeps failures in its database (``.hypothesis/``) to
replay first, so the inputs add up across runs (seventeen runs make 10,000 per reader);
under CI (``CI`` set) they are derandomized, so a CI failure reproduces. On 2026-12-01,
``FLUKE_FUZZ_EXAMPLES=10000`` (70,000 inputs) passed in 21.5 minutes.

What must hold: the input reads, or it raises a :class:`fluke.errors.FlukeError`; an
:class:`InputError` from reading names this file; a run that reads comes back from the
ledger equal to itself (its source aside) with the same hash. And the mutations are not all
rejected: a fair share of the inputs must still read (else the test would only exercise the
parser).
"""

from __future__ import annotations

import json
import os
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fluke.adapters import read_file
from fluke.errors import FlukeError, InputError
from fluke.ledger import open_ledger
from fluke.ledger._rows import row_run

from ..conftest import need
from ._fuzz import SAMPLES, TAU2, TAU_AIRLINE, encode, mutate_tree, seeds

FUZZ_EXAMPLES = int(os.environ.get("FLUKE_FUZZ_EXAMPLES", "600"))
READERS = ["tau-bench", "tau2-bench", "langgraph", "openai", "n8n", "fluke"]


@pytest.mark.parametrize("reader", READERS)
def test_a_reader_on_mutated_real_files_raises_only_fluke_errors(reader, tmp_path):
    need(SAMPLES), need(TAU_AIRLINE), need(TAU2)
    docs = seeds(reader)
    path = tmp_path / ("input.jsonl" if reader == "fluke" else "input.json")
    seen: Counter[str] = Counter()
    ledger = open_ledger(":memory:")   # a real SQLite database, without a file to sync

    @settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=bool(os.environ.get("CI")),
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def one_input(data):
        seed = docs[data.draw(st.integers(0, len(docs) - 1))]
        path.write_bytes(encode(data.draw, mutate_tree(data.draw, seed), lines=reader == "fluke"))
        forced = reader if data.draw(st.booleans()) else None
        try:
            runs = list(read_file(path, format=forced))
        except FlukeError as exc:
            seen["refused"] += 1
            if isinstance(exc, InputError):
                assert exc.file == str(path), f"the error names {exc.file!r}, not the file read"
            return
        try:
            ledger.ingest(runs)
        except FlukeError:
            seen["refused at ingest"] += 1
            return
        stored = ledger.query("SELECT body, source FROM runs WHERE ingest = (SELECT MAX(id) FROM ingests)")
        back = {run.hash: run for run in (row_run(body, source) for body, source in stored)}
        for run in runs:   # the same content twice in one file is stored once, with its first source
            if run.hash in back:
                assert back[run.hash].model_copy(update={"source": run.source}) == run
        seen["read"] += 1

    try:
        one_input()
    finally:
        ledger.close()
    assert sum(seen.values()) >= FUZZ_EXAMPLES
    assert seen["read"] >= FUZZ_EXAMPLES // 20, f"too few mutated inputs still read: {dict(seen)}"
    assert seen["refused"] >= FUZZ_EXAMPLES // 20, f"too few mutated inputs were refused: {dict(seen)}"


def test_the_ledger_reading_mutated_stored_bodies_raises_only_fluke_errors():
    """A stored body edited outside fluke (mutated real runs, as JSON or as damaged text), read
    through every path that parses bodies: ``runs()`` (SQLite's ORDER BY reads the trial of
    every body), its condition filter, and a dated count. ``FUZZ_EXAMPLES`` inputs per run."""
    need(TAU2)
    from fluke.record import content_json

    runs = [r.model_copy(update={"events": r.events[:6]}) for r in
            read_file(TAU2 / "gpt-4.1_telecom_default_gpt-4.1_1trials.json")][:3]
    docs = [json.loads(content_json(r)) for r in runs]
    ledger = open_ledger(":memory:")
    ledger.ingest(runs[:1])
    seen: Counter[str] = Counter()

    @settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=bool(os.environ.get("CI")),
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def one_body(data):
        tree = mutate_tree(data.draw, docs[data.draw(st.integers(0, len(docs) - 1))])
        body = encode(data.draw, tree, lines=False).decode("utf-8", "replace")
        ledger.execute("UPDATE runs SET body = ?", (body,))
        try:
            read = list(ledger.runs())
            list(ledger.runs(condition="a=1"))
            ledger.count(since="2000-01-01")
        except FlukeError:
            seen["refused"] += 1
            return
        assert len(read) == 1
        seen["read"] += 1

    try:
        one_body()
    finally:
        ledger.close()
    assert seen["refused"] >= FUZZ_EXAMPLES // 20 and seen["read"] >= FUZZ_EXAMPLES // 20, dict(seen)
