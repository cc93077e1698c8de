"""A SQLite ledger with damaged pages is refused before anything reads or writes it (issue 28):
``ingest`` and ``summary`` (which reads only the small counts table) say so in one line, exit 2,
and leave the file as it was."""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.ledger import _sqlite, open_ledger
from fluke.record import Identity, Outcome, Run


def _page_size(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA page_size").fetchone()[0]
    finally:
        conn.close()


def _roots(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT name, rootpage FROM sqlite_master WHERE rootpage > 0"))
    finally:
        conn.close()


def _damage(path: Path, how: str) -> None:
    """Overwrite pages of the file in place (its size and header kept), its log first folded in."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    size, data = _page_size(path), bytearray(path.read_bytes())
    pages = len(data) // size
    rng = random.Random(how)
    roots = _roots(path)

    def hit(page: int, fill: bytes | None = None) -> None:    # pages count from 1
        at = (page - 1) * size
        data[at:at + size] = fill if fill is not None else bytes(rng.randrange(256) for _ in range(size))

    if how == "a middle page of garbage":
        hit(pages // 2)
    elif how == "a middle page zeroed":
        hit(pages // 2 + 1, bytes(size))
    elif how == "the root of the counts table":
        hit(roots["counts"])
    elif how == "the root of an index of runs":
        hit(next(page for name, page in roots.items() if name.startswith("sqlite_autoindex_runs")
                 or name.startswith("runs_") or name.startswith("idx_runs")))
    elif how == "three scattered pages":
        for page in rng.sample(range(2, pages + 1), 3):
            hit(page)
    path.write_bytes(bytes(data))


DAMAGE = ["a middle page of garbage", "a middle page zeroed", "the root of the counts table",
          "the root of an index of runs", "three scattered pages"]


@pytest.fixture()
def files(tmp_path):
    path = tmp_path / "l.db"
    runs = [Run(scenario=f"s{i % 40}", trial=i, identity=Identity(model=f"m{i % 3}"),
                outcome=Outcome(passed=i % 4 != 0)) for i in range(3000)]
    with open_ledger(str(path)) as ledger:
        ledger.ingest(runs)
    for extra in ("-wal", "-shm"):
        assert not Path(f"{path}{extra}").exists() or Path(f"{path}{extra}").stat().st_size == 0
    more = tmp_path / "more.jsonl"
    more.write_text("\n".join(json.dumps({"format_version": 1, "scenario": f"n{i}", "outcome": {"passed": True}})
                              for i in range(50)) + "\n")
    return path, more


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("how", DAMAGE)
def test_ingest_and_summary_refuse_a_damaged_file_and_write_nothing(files, how):
    path, more = files
    _damage(path, how)
    before = _digest(path)
    for args in (["ingest", str(more)], ["summary"], ["runs"]):
        result = CliRunner().invoke(group, ["--ledger", str(path), *args])
        lines = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
        assert result.exit_code == 2, (how, args, result.output)
        assert len(lines) == 1 and "is damaged" in lines[0] and ".recover" in lines[0], (how, args, lines)
        assert "Traceback" not in result.output
    assert _digest(path) == before
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0


def test_an_intact_file_passes_and_a_large_one_is_checked_but_its_runs(files, monkeypatch):
    path, more = files
    result = CliRunner().invoke(group, ["--ledger", str(path), "ingest", str(more)])
    assert result.exit_code == 0, result.output
    monkeypatch.setattr(_sqlite, "CHECK_WHOLE_BYTES", 1)         # "large": every table but runs checked
    _damage(path, "the root of the counts table")
    result = CliRunner().invoke(group, ["--ledger", str(path), "summary"])
    assert result.exit_code == 2 and "is damaged" in result.output
