"""Two tallies an ingest keeps beside ``counts`` and ``steps``, so that the fix check and the
interval read a few rows instead of every run.

``trial_outcomes``
    Each run's outcome in trial order, per version × scenario × condition × *block* of 256
    trials (``block = trial >> 8``): ``seq`` is a byte string of 2-byte entries ``(trial & 255,
    outcome)``, outcome 0 passed, 1 failed, 2 unknown. Each ingest appends one *segment* to each
    row it adds runs to: a header of four entries of outcome 3 whose first bytes are the
    ingest's id (little-endian), then its entries in the order of trial and then content key.
    So the runs of an input come out in trial order, ties in version order and then in the
    order :meth:`fluke.ledger.Ledger.runs` gives them (ingest, then key), from the table alone;
    a row stays about 512 bytes while its trials are distinct.
``unit_cells``
    Per version × sampling unit (the declared ``unit``, else the scenario) × scenario ×
    condition: trials, passes, unknowns, runs with a reward, Σ reward and Σ reward². Everything
    the clustered interval, its variance components and a cluster bootstrap need.

Both are written from the runs an ingest *added* (a run already stored adds nothing) in the
transaction that makes those runs visible (:meth:`fluke.ledger._writer.RunWriter.finish`), so a
reader sees them change exactly when it sees the runs. An ingest holds its entries (10 bytes
a run: the key orders ties) until then, and past :data:`HOLD_ENTRIES` of them it moves them
into ``trial_outcomes_staged`` under its id (removed with the ingest if it fails).

>>> entries = [(1, 0, 5), (0, 2, 9), (1, 1, -3)]    # (trial & 255, outcome, key)
>>> segment(7, b"".join(ENTRY.pack(*e) for e in entries)).hex(" ", 2)
'0703 0003 0003 0003 0002 0101 0100'
>>> [tuple(map(int, e)) for e in zip(*decode([segment(7, ENTRY.pack(1, 0, 5)), segment(300, ENTRY.pack(4, 2, 1))]))]
[(0, 1, 0, 7), (1, 4, 2, 300)]
"""

from __future__ import annotations

import struct
from itertools import compress
from typing import Any, Callable, Iterable, Sequence

from ..errors import LedgerError

#: An entry held during an ingest: trial & 255, outcome, content key.
ENTRY = struct.Struct("<BBq")
#: Entries an ingest holds in memory before it moves them to ``trial_outcomes_staged``.
HOLD_ENTRIES = 2_000_000
HEADER = 3

_APPEND = {"sqlite": "CAST({t}.seq || excluded.seq AS BLOB)", "postgresql": "{t}.seq || excluded.seq"}


def _append_sql(table: str, key: str, dialect: str) -> str:
    return (f"INSERT INTO {table} ({key}, seq) VALUES ({', '.join('?' * (key.count(',') + 2))}) "
            f"ON CONFLICT ({key}) DO UPDATE SET seq = {_APPEND[dialect].format(t=table)}")


_OUTCOME_KEY = "vid, scenario, condition, block"
_UPSERT_CELLS = ("INSERT INTO unit_cells (vid, unit, scenario, condition, trials, passes, unknowns, rewarded, "
                 "reward_sum, reward_squares) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                 "ON CONFLICT (vid, unit, scenario, condition) DO UPDATE SET "
                 "trials = unit_cells.trials + excluded.trials, passes = unit_cells.passes + excluded.passes, "
                 "unknowns = unit_cells.unknowns + excluded.unknowns, "
                 "rewarded = unit_cells.rewarded + excluded.rewarded, "
                 "reward_sum = unit_cells.reward_sum + excluded.reward_sum, "
                 "reward_squares = unit_cells.reward_squares + excluded.reward_squares")


def segment(ingest: int, entries: bytes) -> bytes:
    """One ingest's segment of a ``trial_outcomes`` row from its held entries (:data:`ENTRY`s):
    the header, then ``(trial & 255, outcome)`` of each, ordered by trial and key."""
    if not 0 <= ingest < 2 ** 32:
        raise LedgerError(f"ingest id {ingest} does not fit the trial_outcomes table (32 bits)")
    held = sorted(ENTRY.iter_unpack(entries), key=lambda e: (e[0], e[2])) if len(entries) > ENTRY.size else \
        list(ENTRY.iter_unpack(entries))
    out = bytearray(b"".join(bytes((b, HEADER)) for b in ingest.to_bytes(4, "little")))
    for low, outcome, _ in held:
        out += bytes((low, outcome))
    return bytes(out)


class Tallies:
    """What one ingest adds to ``trial_outcomes`` and ``unit_cells``, held until it finishes."""

    def __init__(self, sql: Callable[[str], str], dialect: str) -> None:
        self.sql, self.dialect = sql, dialect
        self.held: dict[tuple, bytearray] = {}   # (vid, scenario, condition, block) -> entries
        self.entries = 0
        self.staged = False
        self.cells: dict[tuple, list] = {}       # (vid, unit, scenario, condition) -> six sums

    def add(self, rows: Sequence[Any], added: Sequence[bool] | None = None) -> None:
        """Tally the runs of a batch (:class:`fluke.ledger._rows.RunRow`) that were added
        (``added`` marks them; None: every one)."""
        held, cells, pack = self.held, self.cells, ENTRY.pack
        chosen: Iterable[Any] = rows if added is None else compress(rows, added)
        n = 0
        for row in chosen:
            key, vid, scenario, condition, ok = row.key, row.vid, row.scenario, row.condition, row.passed
            trial, unit, reward = row.trial, row.unit, row.reward
            n += 1
            group = (vid, scenario, condition, trial >> 8)
            entries = held.get(group)
            if entries is None:
                entries = held[group] = bytearray()
            entries += pack(trial & 255, 2 if ok is None else 1 - ok, key)
            cell = cells.get((vid, unit, scenario, condition))
            if cell is None:
                cell = cells[(vid, unit, scenario, condition)] = [0, 0, 0, 0, 0.0, 0.0]
            cell[0] += 1
            if ok:
                cell[1] += 1
            elif ok is None:
                cell[2] += 1
            if reward is not None:
                cell[3] += 1
                cell[4] += reward
                cell[5] += reward * reward
        self.entries += n

    def stage(self, cur: Any, ingest: int, *, force: bool = False) -> None:
        """Move the held entries into ``trial_outcomes_staged`` once they are many (or ``force``)."""
        if not self.held or (self.entries < HOLD_ENTRIES and not force):
            return
        sql = self.sql(_append_sql("trial_outcomes_staged", "ingest, " + _OUTCOME_KEY, self.dialect))
        cur.executemany(sql, [(ingest, *group, bytes(e)) for group, e in sorted(self.held.items())])
        self.held, self.entries, self.staged = {}, 0, True

    def write(self, cur: Any, ingest: int) -> None:
        """Append this ingest's segments to ``trial_outcomes`` and add its sums to ``unit_cells``,
        in key order (the lock order every ingest shares)."""
        append = self.sql(_append_sql("trial_outcomes", _OUTCOME_KEY, self.dialect))
        if self.staged:
            self.stage(cur, ingest, force=True)
            cur.execute(self.sql(f"SELECT {_OUTCOME_KEY} FROM trial_outcomes_staged WHERE ingest = ?"), (ingest,))
            groups = sorted(tuple(row) for row in cur.fetchall())
            read = self.sql("SELECT seq FROM trial_outcomes_staged WHERE ingest = ? AND vid = ? AND scenario = ? "
                            "AND condition = ? AND block = ?")
            for start in range(0, len(groups), 1000):
                rows = []
                for group in groups[start:start + 1000]:
                    cur.execute(read, (ingest, *group))
                    rows.append((*group, segment(ingest, bytes(cur.fetchone()[0]))))
                cur.executemany(append, rows)
            cur.execute(self.sql("DELETE FROM trial_outcomes_staged WHERE ingest = ?"), (ingest,))
        elif self.held:
            cur.executemany(append, [(*group, segment(ingest, bytes(e))) for group, e in sorted(self.held.items())])
        if self.cells:
            cur.executemany(self.sql(_UPSERT_CELLS), [(*g, *c) for g, c in sorted(self.cells.items())])
        self.held, self.entries, self.staged, self.cells = {}, 0, False, {}


def decode(seqs: Sequence[bytes]):
    """``(row, low, outcome, ingest)`` arrays of the entries of ``trial_outcomes`` rows (their
    ``seq``): the row each came from, its trial's low byte, its outcome and its ingest, row by
    row and within a row in stored order, the headers left out."""
    import numpy as np

    lengths = np.fromiter((len(s) // 2 for s in seqs), dtype=np.int64, count=len(seqs))
    raw = np.frombuffer(b"".join(bytes(s) for s in seqs), dtype=np.uint8).reshape(-1, 2)
    low, outcome = raw[:, 0], raw[:, 1]
    header = outcome == HEADER
    first = header.copy()
    first[1:] &= ~header[:-1]
    starts = np.flatnonzero(first)
    ids = (low[starts[:, None] + np.arange(4)].astype(np.int64) << (8 * np.arange(4, dtype=np.int64))).sum(axis=1)
    ingest = ids[np.cumsum(first) - 1]
    row = np.repeat(np.arange(len(seqs)), lengths)
    keep = ~header
    return row[keep], low[keep], outcome[keep], ingest[keep]


#: Entries of ``trial_outcomes`` decoded at a time (whole inputs at a time): the arrays of one
#: part stay tens of megabytes however many runs an arm holds.
DECODE_ENTRIES = 1 << 20


def _outcome_rows(ledger: Any, version: Any, scenario: str | None, condition: str | None,
                  trials: Iterable[int] | None):
    """``(rows, wanted)``: the ``trial_outcomes`` rows in scope by input, block and version, and
    the trials asked for (None: all)."""
    import numpy as np

    where, params = ledger._where(scenario=scenario, version=version, runs=False)
    where, params = ledger._condition_where(where, params, condition)
    wanted = None if trials is None else np.unique(np.fromiter((int(t) for t in trials), dtype=np.int64))
    if wanted is not None:
        blocks = np.unique(wanted >> 8).tolist()
        if len(blocks) <= 500:   # else every block is read and the trials picked below
            where += (" AND " if where else " WHERE ") + f"block IN ({', '.join('?' * len(blocks)) or 'NULL'})"
            params = [*params, *blocks]
    rows = ledger.query(f"SELECT vid, scenario, condition, block, seq FROM trial_outcomes{where}", params)
    rows.sort(key=lambda r: (r[1], r[2], r[3], r[0]))    # by input, block, version
    return rows, wanted


def _parts(rows: Sequence[tuple], entries: int) -> Iterable[Sequence[tuple]]:
    """Runs of ``rows`` (sorted by input) of whole inputs, each of about ``entries`` entries or more."""
    start, held = 0, 0
    for i, row in enumerate(rows):
        if held >= entries and (row[1], row[2]) != (rows[i - 1][1], rows[i - 1][2]):
            yield rows[start:i]
            start, held = i, 0
        held += len(row[4]) // 2
    if start < len(rows):
        yield rows[start:]


def _ordered(rows: Sequence[tuple], vcode: dict, icode: dict, wanted: Any):
    """``(version, input, trial, outcome)`` codes of the entries of ``rows`` (whole inputs, sorted
    by input, block and version), in the order of :meth:`fluke.ledger.Ledger.trial_outcomes`."""
    import numpy as np

    row, low, outcome, ingest = decode([row[4] for row in rows])
    row_version = np.fromiter((vcode[r[0]] for r in rows), dtype=np.int32, count=len(rows))
    row_input = np.fromiter((icode[(r[1], r[2])] for r in rows), dtype=np.int32, count=len(rows))
    row_block = np.fromiter((int(r[3]) for r in rows), dtype=np.int64, count=len(rows))
    trial = row_block[row] * 256 + low
    ver, inp = row_version[row], row_input[row]
    # Entries now run by input, block, version, then segment by segment as stored, each
    # segment by trial and key. Where a row's segments are in the order of their ingests (an
    # ingest's id is taken when it begins, and concurrent ones may finish in another order),
    # a stable sort by trial within each (input, block) gives input, trial, version, ingest, key.
    same_row = row[1:] == row[:-1]
    if ((ingest[1:] < ingest[:-1]) & same_row).any():
        order = np.lexsort((np.arange(trial.size), ingest, ver, trial, inp))
    else:
        group = np.cumsum(np.concatenate(([True], (row_input[1:] != row_input[:-1])
                                          | (row_block[1:] != row_block[:-1])))) - 1 if len(rows) else row_block
        key = group[row] * 256 + low
        order = np.argsort(key, kind="stable") if (key[1:] < key[:-1]).any() else None
    del same_row, ingest, row
    if wanted is not None:
        picked = np.isin(trial, wanted)
        order = np.flatnonzero(picked) if order is None else order[picked[order]]
    if order is not None:
        ver, inp, trial, outcome = ver[order], inp[order], trial[order], outcome[order]
    return ver, inp, trial, outcome


def read_trial_outcomes(ledger: Any, *, version: Any = None, scenario: str | None = None,
                        condition: str | None = None, trials: Iterable[int] | None = None,
                        sequences: bool = False):
    """:meth:`fluke.ledger.Ledger.trial_outcomes` (see there); with ``sequences``,
    :meth:`fluke.ledger.Ledger.outcome_sequences` (the outcomes alone, and the runs of each input).

    The rows are decoded :data:`DECODE_ENTRIES` entries (of whole inputs) at a time: an input's
    order depends on its own entries only, so the parts join to the order of the whole."""
    import numpy as np

    from ._types import OutcomeSequences, TrialOutcomes

    rows, wanted = _outcome_rows(ledger, version, scenario, condition, trials)
    names = dict(ledger.query("SELECT vid, version FROM versions"))
    vids = sorted({row[0] for row in rows})
    inputs = sorted({(row[1], row[2]) for row in rows})
    vcode = {vid: i for i, vid in enumerate(vids)}
    icode = {key: i for i, key in enumerate(inputs)}
    got: list[tuple] = []
    per_input, per_version = np.zeros(len(inputs), np.int64), np.zeros(len(vids), np.int64)
    for part in _parts(rows, DECODE_ENTRIES):
        ver, inp, trial, outcome = _ordered(part, vcode, icode, wanted)
        if sequences:
            per_input += np.bincount(inp, minlength=len(inputs))
            per_version += np.bincount(ver, minlength=len(vids))
            got.append((outcome,))
        else:
            got.append((ver, inp, trial, outcome))
    del rows
    if sequences:
        vused, iused = np.flatnonzero(per_version).tolist(), np.flatnonzero(per_input)
        outcome = np.concatenate([g[0] for g in got]) if got else np.zeros(0, np.uint8)
        return OutcomeSequences(tuple(names[vids[i]] for i in vused), tuple(inputs[i] for i in iused.tolist()),
                                per_input[iused], outcome)
    empty = (np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros(0, np.uint8))
    ver, inp, trial, outcome = (np.concatenate(c) for c in zip(*got, strict=True)) if got else empty
    # only the versions and inputs left with runs, their codes renumbered in the same order
    vused, ver = _renumber(ver, len(vids))
    iused, inp = _renumber(inp, len(inputs))
    return TrialOutcomes(tuple(names[vids[i]] for i in vused), tuple(inputs[i] for i in iused), ver, inp,
                         trial, outcome)


def _renumber(codes, size: int):
    """``(codes used, codes renumbered 0, 1, ... in the same order)``, in linear time."""
    import numpy as np

    used = np.bincount(codes, minlength=size) > 0
    return np.flatnonzero(used).tolist(), (np.cumsum(used) - 1).astype(np.int32)[codes]


def read_unit_cells(ledger: Any, *, version: Any = None, scenario: str | None = None,
                    condition: str | None = None) -> list:
    """:meth:`fluke.ledger.Ledger.unit_cells` (see there)."""
    from ._types import UnitCell

    where, params = ledger._where(scenario=scenario, version=version, runs=False)
    where, params = ledger._condition_where(where, params, condition)
    rows = ledger.query("SELECT vid, unit, scenario, condition, trials, passes, unknowns, rewarded, reward_sum, "
                        f"reward_squares FROM unit_cells{where}", params)
    names = dict(ledger.query("SELECT vid, version FROM versions"))
    out = [UnitCell(names[v], u, s, c, int(n), int(k), int(x), int(r), float(t), float(q))
           for v, u, s, c, n, k, x, r, t, q in rows]
    out.sort(key=lambda c: (c.version, c.unit, c.scenario, c.condition))
    return out


def backfill(ledger: Any) -> None:
    """Migration 0006: both tables from the stored bodies, an ingest at a time in the order its
    runs were stored (the runs of an unfinished ingest, listed in ``pending``, left out)."""
    import orjson

    from ..record import condition_key

    if ledger.dialect == "sqlite":   # sort the row ids, not the bodies (see SqliteLedger._ordered_runs)
        sql = ("SELECT r.k, r.vid, r.ingest, r.scenario, r.body FROM (SELECT rowid AS id FROM runs WHERE ingest "
               "NOT IN (SELECT ingest FROM pending) ORDER BY ingest, rowid LIMIT -1) o "
               "CROSS JOIN runs r ON r.rowid = o.id")
    else:
        sql = ("SELECT k, vid, ingest, scenario, body FROM runs WHERE ingest NOT IN (SELECT ingest FROM pending) "
               "ORDER BY ingest, k")
    from ._rows import RunRow

    cur = ledger._conn.cursor()
    tallies = Tallies(ledger._sql, ledger.dialect)
    current: int | None = None
    batch: list[RunRow] = []

    def flush() -> None:
        tallies.add(batch)
        tallies.stage(cur, current)
        batch.clear()

    for key, vid, ingest, scenario, body in ledger.stream(sql):
        if ingest != current:
            if current is not None:
                flush()
                tallies.write(cur, current)
            current = ingest
        doc = orjson.loads(body)
        outcome = doc.get("outcome") or {}
        passed = outcome.get("passed")
        condition = doc.get("condition") or {}
        unit = doc.get("unit")
        batch.append(RunRow(key, 0, vid, scenario, condition_key(condition) if condition else "",
                            None if passed is None else int(bool(passed)), None, "", None, doc.get("trial", 0),
                            scenario if unit is None else unit, outcome.get("reward")))
        if len(batch) >= 5000:
            flush()
    if current is not None:
        flush()
        tallies.write(cur, current)
