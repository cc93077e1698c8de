"""The human audit of a judge: draw a blinded, stratified sample to label, read the labels back,
and decide how far the judge may be trusted.

The sample file is JSON lines, one run per line: its hash, its stratum, the blinded view a
person reads (no policy labels, no judge verdict) and an empty ``label`` to fill with
``pass``/``fail`` (or true/false). A CSV with columns ``run`` and ``label`` is read the same way,
which is also how labels made by another tool are imported.

>>> import io
>>> text = '{"run": "ab", "label": "pass"}\\n{"run": "cd", "label": false}\\n'
>>> read_labels(io.StringIO(text), "audit.jsonl")
{'ab': True, 'cd': False}
>>> draw_sample({"a": "x", "b": "x", "c": "y", "d": "y"}, 2, seed=1)
['a', 'd']
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
import orjson

from ..errors import InputError
from ..format import fmt_interval

_TRUE = {"pass", "passed", "true", "1", "yes", "y", "p"}
_FALSE = {"fail", "failed", "false", "0", "no", "n", "f"}


def parse_label(value: Any) -> bool | None:
    """A human label: True, False, or None when left blank; raises ValueError on anything else."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"{str(value)[:40]!r} is not a label: write pass or fail")


def draw_sample(strata: dict[str, str], size: int, *, seed: int = 0) -> list[str]:
    """``size`` run hashes drawn without replacement from ``strata`` (hash -> stratum), allocated to
    strata in proportion to their runs (at least two per stratum when it has two), sorted by hash
    so the file a person labels carries no order from the judge or the policy."""
    by: dict[str, list[str]] = {}
    for run_hash, stratum in sorted(strata.items()):
        by.setdefault(stratum, []).append(run_hash)
    total = len(strata)
    size = min(size, total)
    rng = np.random.default_rng(seed)
    least = 2 if size >= 2 * len(by) else 1 if size >= len(by) else 0
    quota = {s: min(len(h), max(min(least, len(h)), math.floor(size * len(h) / total))) for s, h in sorted(by.items())}
    while sum(quota.values()) > size:   # the floors overshot: take back from the largest strata
        quota[max(quota, key=lambda s: (quota[s], s))] -= 1
    # the remainder to the strata with the largest fractional shares, in name order on ties
    short = size - sum(quota.values())
    order = sorted(by, key=lambda s: (-(size * len(by[s]) / total - math.floor(size * len(by[s]) / total)), s))
    while short > 0 and any(quota[s] < len(by[s]) for s in order):
        for s in order:
            if short > 0 and quota[s] < len(by[s]):
                quota[s] += 1
                short -= 1
    chosen: list[str] = []
    for s, hashes in sorted(by.items()):
        picks = rng.choice(len(hashes), size=quota[s], replace=False)
        chosen += [hashes[i] for i in sorted(picks)]
    return sorted(chosen)


def write_sample(handle: IO[str], rows: list[dict[str, Any]]) -> None:
    """The sample as JSON lines: ``run``, ``stratum``, ``view`` and an empty ``label``."""
    for row in rows:
        handle.write(orjson.dumps({"run": row["run"], "stratum": row["stratum"], "view": row["view"],
                                   "label": None}).decode() + "\n")


def read_labels(handle: IO[str], name: str) -> dict[str, bool]:
    """Human labels by run hash from JSON lines (``run`` and ``label``) or a CSV (columns ``run``
    and ``label``; ``run_id``/``id`` and ``score``/``value`` accepted too). A blank label is left
    out; a bad one is an :class:`~fluke.errors.InputError` naming the file, line and field."""
    text = handle.read()
    first = text.lstrip()[:1]
    out: dict[str, bool] = {}
    if first == "{":
        for number, raw in enumerate(text.splitlines(), 1):
            if not raw.strip():
                continue
            try:
                row = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                raise InputError(name, f"line {number}", None, f"not JSON ({exc.msg})") from None
            if not isinstance(row, dict) or not isinstance(row.get("run"), str):
                raise InputError(name, f"line {number}", "run", "each line needs the run's hash as a string")
            _put(out, row["run"], row.get("label"), name, f"line {number}")
        return out
    reader = csv.DictReader(io.StringIO(text))
    fields = {f.strip().lower(): f for f in reader.fieldnames or []}
    run_col = next((fields[c] for c in ("run", "run_id", "id", "hash") if c in fields), None)
    label_col = next((fields[c] for c in ("label", "score", "value", "passed") if c in fields), None)
    if run_col is None or label_col is None:
        raise InputError(name, "line 1", None, "a labels CSV needs a run column (run, run_id, id) and a label "
                         "column (label, score, value, passed)")
    for number, row in enumerate(reader, 2):
        _put(out, (row.get(run_col) or "").strip(), row.get(label_col), name, f"line {number}")
    return out


def _put(out: dict[str, bool], run: str, value: Any, name: str, where: str) -> None:
    if not run:
        raise InputError(name, where, "run", "no run hash")
    try:
        label = parse_label(value)
    except ValueError as exc:
        raise InputError(name, where, "label", str(exc)) from None
    if label is None:
        return
    if run in out and out[run] != label:
        raise InputError(name, where, "label", f"run {run[:12]} is labelled both pass and fail")
    out[run] = label


@dataclass(frozen=True)
class Floor:
    """What a judge must show before it may gate: κ against people (the interval's lower end),
    self-consistency (the flip share's upper end) and the fewest human labels."""

    kappa: float = 0.6
    flips: float = 0.1
    labels: int = 50

    def to_dict(self) -> dict[str, Any]:
        return {"kappa": self.kappa, "flips": self.flips, "labels": self.labels}


def earned(floor: Floor, kappa: Any, flips: Any) -> tuple[str, str, int | None]:
    """(status, reason, labels that would settle it): ``holds`` when κ's lower end is at the floor
    or above, the flip share's upper end at most the ceiling and enough labels; ``fails`` when κ's
    upper end is under the floor or the flip share's lower end over the ceiling; else too small to tell.

    >>> from fluke.judging import Estimate
    >>> earned(Floor(), Estimate(0.8, 0.7, 0.9, 80, ""), Estimate(0.02, 0.0, 0.06, 80, ""))[0]
    'holds'
    >>> earned(Floor(), Estimate(0.7, 0.5, 0.9, 30, ""), Estimate(0.02, 0.0, 0.06, 80, ""))
    ('too small to tell', 'kappa 0.700 [0.500, 0.900] from 30 labels; floor 0.6 needs 50 labels and a lower end
    of 0.6 or more', 120)
    """
    if not kappa.defined or math.isnan(kappa.low):
        return "too small to tell", f"kappa cannot be computed from {kappa.n} labels", max(floor.labels, 2 * kappa.n)
    if kappa.high < floor.kappa:
        return "fails", f"kappa {kappa.value:.3f} {fmt_interval(kappa.low, kappa.high)} is under the floor " \
                        f"{floor.kappa}", None
    if flips.defined and not math.isnan(flips.low) and flips.low > floor.flips:
        return "fails", f"{100 * flips.value:.1f}% of runs flip between repeats, over the ceiling " \
                        f"{100 * floor.flips:.0f}%", None
    reasons, needed = [], kappa.n
    if kappa.low < floor.kappa or kappa.n < floor.labels:
        reasons.append(f"kappa {kappa.value:.3f} {fmt_interval(kappa.low, kappa.high)} from {kappa.n} labels; floor "
                       f"{floor.kappa} needs {floor.labels} labels and a lower end of {floor.kappa} or more")
        half = (kappa.high - kappa.low) / 2
        gap = kappa.value - floor.kappa
        scale = (half / gap) ** 2 if gap > 0 else math.inf
        needed = max(floor.labels, math.ceil(kappa.n * scale - 1e-9) if math.isfinite(scale) else 0)
    if not flips.defined or math.isnan(flips.high) or flips.high > floor.flips:
        reasons.append("self-consistency unknown (judge each run K >= 2 times)" if not flips.defined else
                       f"flip share up to {100 * flips.high:.1f}% over the ceiling {100 * floor.flips:.0f}%")
    if not reasons:
        return "holds", f"kappa {kappa.value:.3f} {fmt_interval(kappa.low, kappa.high)} from {kappa.n} labels, " \
                        f"flip share at most {100 * flips.high:.1f}%", None
    return "too small to tell", "; ".join(reasons), (needed if needed and needed > kappa.n else None)
