"""Every reader, and the ledger's read of stored bodies, on mutated real files raises only
fluke's own errors (issue 15, point 4).

Per reader and per run of the suite: ``FUZZ_INPUTS`` inputs (10,240 by default: 640
hypothesis examples of 16 inputs each; set ``FLUKE_FUZZ_INPUTS`` to change it), as many
stored bodies, and 320 stored bodies on PostgreSQL. Each input is one file: a real file from
../shared or the fixtures (cut small) with one to three edits and maybe byte-level damage (see ``_fuzz.py``), read by
:func:`fluke.adapters.read_file` with the format forced or detected. The runs an example
reads are ingested into a real SQLite ledger and read back. A second, smaller sample goes
through the command line (``fluke ingest``): a refused input ends in one line and exit 2.
Under CI (``CI`` set) the examples are derandomized (the "ci" profile in tests/conftest.py),
so a CI failure reproduces; outside CI they vary from run to run. The count each reader
reached is asserted and printed at the end of the session.

What must hold: the input reads, or it raises a :class:`fluke.errors.FlukeError` of one
line; an :class:`InputError` names this file; a run that reads comes back from the ledger
equal to itself (its source aside) with the same hash. And the mutations are not all
rejected, nor all harmless: a fair share of the inputs reads, and a fair share is refused.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fluke.adapters import read_file
from fluke.errors import FlukeError, InputError
from fluke.ledger import open_ledger
from fluke.ledger._rows import row_run

from .._repro import GOOD_BODY
from ..conftest import need
from ._fuzz import EvalMutator, Mutator
from ._fuzz_seeds import EVAL_SAMPLE, SAMPLES, TAU2, TAU_AIRLINE, seeds, stored_bodies
from .conftest import FUZZ_COUNTS

FUZZ_INPUTS = int(os.environ.get("FLUKE_FUZZ_INPUTS", "10240"))
BATCH = 16
EXAMPLES = -(-FUZZ_INPUTS // BATCH)
READERS = ["tau-bench", "tau2-bench", "langgraph", "openai", "n8n", "fluke", "inspect", "otel-genai",
           "openinference", "openai-agents", "openai-agents-items", "terminal-bench", "crewai", "lm-eval"]
#: One hypothesis example: BATCH inputs, each the bytes its choices are read from.
BATCHES = st.lists(st.binary(min_size=2, max_size=40), min_size=BATCH, max_size=BATCH)


def _settings(examples: int):
    return settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck))


class Inputs:
    """A reader's mutators; input bytes → (a file's bytes, the format forced or None)."""

    def __init__(self, reader: str) -> None:
        need(SAMPLES), need(TAU_AIRLINE), need(TAU2)
        self.reader = reader
        self.mutators = seeds(reader)
        self.eval = EvalMutator(need(EVAL_SAMPLE)) if reader == "inspect" else None

    def make(self, raw: bytes) -> tuple[bytes, str | None]:
        head, rest = (raw[0], raw[1:]) if raw else (0, b"")
        forced = self.reader if head % 2 == 0 else None
        if self.eval is not None and head % 8 < 2:   # a quarter of Inspect's inputs are .eval archives
            return self.eval.input(rest), forced
        return self.mutators[(head >> 1) % len(self.mutators)].input(rest), forced


def _write(path, data: bytes) -> None:
    """Overwrite ``path`` in place (truncating to zero first makes ext4 flush the file at close,
    about 1 ms each time)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        os.write(fd, data)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)


def _read(path, data: bytes, forced: str | None):
    _write(path, data)
    try:
        return list(read_file(path, format=forced))
    except FlukeError as exc:
        assert "\n" not in str(exc), f"a fluke error prints as one line: {exc}"
        if isinstance(exc, InputError):
            assert exc.file == str(path), f"the error names {exc.file!r}, not the file read"
        return exc


@pytest.mark.parametrize("reader", READERS)
def test_a_reader_on_mutated_real_files_raises_only_fluke_errors(reader, tmp_path):
    inputs = Inputs(reader)
    path = tmp_path / "input"
    seen: Counter[str] = Counter()
    ledger = open_ledger(":memory:")   # a real SQLite database, without a file to sync

    @_settings(EXAMPLES)
    @given(BATCHES)
    def one_example(batch):
        runs = []
        for raw in batch:
            result = _read(path, *inputs.make(raw))
            seen["refused" if isinstance(result, FlukeError) else "read"] += 1
            if not isinstance(result, FlukeError):
                runs += result
        if not runs:
            return
        try:
            ledger.ingest(runs)
        except FlukeError:
            seen["refused at ingest"] += 1
            return
        stored = ledger.query("SELECT body, source FROM runs WHERE ingest = (SELECT MAX(id) FROM ingests)")
        back = {run.hash: run for run in (row_run(body, source) for body, source in stored)}
        for run in runs:   # the same content twice is stored once, with its first source
            if run.hash in back:
                assert back[run.hash].model_copy(update={"source": run.source}) == run
        seen["ingests"] += 1

    try:
        one_example()
    finally:
        ledger.close()
    total = seen["read"] + seen["refused"]
    FUZZ_COUNTS[reader] = total
    assert total >= FUZZ_INPUTS, f"{reader}: {total} inputs this run, short of {FUZZ_INPUTS}"
    assert seen["read"] >= total // 20, f"too few mutated inputs still read: {dict(seen)}"
    assert seen["refused"] >= total // 20, f"too few mutated inputs were refused: {dict(seen)}"
    assert seen["ingests"] >= EXAMPLES // 4, dict(seen)


def _read_stored(ledger, body: str) -> bool:
    """Store ``body`` as the ledger's one run and read it through every path that parses
    bodies: ``runs()`` (its ORDER BY reads the trial of every body), its condition filter,
    and a dated count. False when the ledger refuses it (in one line)."""
    ledger.execute("UPDATE runs SET body = ?", (body,))
    try:
        assert len(list(ledger.runs())) == 1
        list(ledger.runs(condition="a=1"))
        ledger.count(since="2000-01-01")
    except FlukeError as exc:
        assert "\n" not in str(exc)
        return False
    return True


def test_the_ledger_reading_mutated_stored_bodies_raises_only_fluke_errors():
    """A stored body (or source) edited outside fluke: mutated real runs, as JSON or damaged
    text. Every input is rebuilt as the ledger does (``row_run``); the first of each example
    is also put in a real SQLite ledger and read through every path that parses bodies:
    ``runs()`` (SQLite's ORDER BY reads the trial of every body), its condition filter, and
    a dated count. ``FUZZ_INPUTS`` inputs per run."""
    need(TAU2), need(SAMPLES)
    bodies = [Mutator(b) for b in stored_bodies()]
    source = Mutator({"adapter": "tau2-bench", "file": "/runs/a.json", "position": 3})
    ledger = open_ledger(":memory:")
    ledger.ingest([row_run(GOOD_BODY)])
    seen: Counter[str] = Counter()

    @_settings(EXAMPLES)
    @given(BATCHES)
    def one_example(batch):
        for i, raw in enumerate(batch):
            head, rest = (raw[0], raw[1:]) if raw else (0, b"")
            data = (source if head % 8 == 7 else bodies[(head >> 3) % len(bodies)]).input(rest)
            text = data.decode("utf-8", "replace")
            try:
                if head % 8 == 7:
                    row_run(GOOD_BODY, text)
                else:
                    row_run(data if head % 2 else text)
            except FlukeError as exc:
                assert "\n" not in str(exc)
                seen["refused"] += 1
            else:
                seen["read"] += 1
            if i == 0 and head % 8 != 7:
                _read_stored(ledger, text)
                seen["through the ledger"] += 1

    try:
        one_example()
    finally:
        ledger.close()
    total = seen["read"] + seen["refused"]
    FUZZ_COUNTS["stored bodies"] = total
    assert total >= FUZZ_INPUTS, total
    assert seen["refused"] >= total // 20 and seen["read"] >= total // 20, dict(seen)
    assert seen["through the ledger"] >= EXAMPLES // 10, dict(seen)


CLI_EXAMPLES = 6


@pytest.mark.parametrize("reader", READERS)
def test_fluke_ingest_of_a_mutated_file_ends_in_one_line_and_exit_2(reader, tmp_path):
    """The command line on a sample of the same inputs: per example, the first input the
    reader refuses and the first it reads go through ``fluke ingest``; a refusal is one line
    on stderr naming the file, exit 2, and no traceback."""
    from fluke.cli import group

    inputs = Inputs(reader)
    path = tmp_path / "input"
    seen: Counter[str] = Counter()

    @_settings(CLI_EXAMPLES)
    @given(BATCHES)
    def one_example(batch):
        tried: set[bool] = set()
        for n, raw in enumerate(batch):
            data, forced = inputs.make(raw)
            refused = isinstance(_read(path, data, forced), FlukeError)
            if refused in tried:
                continue
            tried.add(refused)
            args = ["--ledger", str(tmp_path / "l.db"), "ingest", str(path)] + (["--format", forced] if forced else [])
            result = CliRunner().invoke(group, args, catch_exceptions=False)
            assert result.exit_code in (0, 2), (result.exit_code, result.output)
            if result.exit_code == 2:
                lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
                assert len(lines) == 1 and str(path) in lines[0], lines
                assert "Traceback" not in result.output
                seen["exit 2"] += 1
            else:
                seen["exit 0"] += 1

    one_example()
    assert seen["exit 2"] >= CLI_EXAMPLES // 2 and seen["exit 0"] >= 1, dict(seen)


PG_EXAMPLES = 40


@pytest.mark.postgres
def test_a_postgres_ledger_reading_mutated_stored_bodies_raises_only_fluke_errors(postgres_url):
    """The same stored bodies on a real PostgreSQL server, whose SQL reads each body as JSON
    (the trial it sorts by): ``PG_EXAMPLES`` × 8 bodies (no NUL: its text type cannot hold
    one, so no run stores one). A refused read leaves the ledger answering the next call."""
    need(TAU2), need(SAMPLES)
    bodies = [Mutator(b) for b in stored_bodies()]
    seen: Counter[str] = Counter()
    with open_ledger(postgres_url) as ledger:
        ledger.ingest([row_run(GOOD_BODY)])

        @_settings(PG_EXAMPLES)
        @given(st.lists(st.binary(min_size=2, max_size=40), min_size=8, max_size=8))
        def one_example(batch):
            for raw in batch:
                head, rest = (raw[0], raw[1:]) if raw else (0, b"")
                text = bodies[head % len(bodies)].input(rest).decode("utf-8", "replace").replace("\x00", "")
                seen["read" if _read_stored(ledger, text) else "refused"] += 1

        one_example()
        assert ledger.count() == 1   # still answering, after every refusal
    assert seen["refused"] >= 8 * PG_EXAMPLES // 20 and seen["read"] >= 8 * PG_EXAMPLES // 20, dict(seen)
