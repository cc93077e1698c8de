"""Sufficient statistics per (unit, scenario) cell: rows ``n``, Σy and Σy².

The clustered interval, the variance components and the cluster bootstrap need nothing
more of the rows than these per-cell sums, so a ledger that keeps them at ingest answers
without reading a run. :class:`Cells` holds them; it is built from rows
(:meth:`Cells.from_rows`, what the row-level functions do), from sums kept elsewhere
(:meth:`Cells.from_sums`: rewards as runs with a reward, Σreward, Σreward²) or from
pass counts under the unknown-outcome policy (:meth:`Cells.from_passes`).

Units and scenarios are coded 0, 1, … in sorted label order (as
:func:`fluke.inference.cluster_codes` codes them), so the cluster bootstrap draws the same
clusters for the same seed whichever way the cells were built. A scenario is read within
its unit: the same scenario under two units is two cells.

>>> c = Cells.from_rows([1.0, 0.0, 1.0, 1.0, 0.0], ["b", "b", "a", "a", "a"])
>>> c.unit_labels.tolist(), c.n.tolist(), c.rows, c.clusters
(['a', 'b'], [3, 2], 5, 2)
>>> (c.shift + c.sum / c.n).round(4).tolist()       # the cell means
[0.6667, 0.5]
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..errors import UsageError
from ._unknown import check_unknown_policy

__all__ = ["Cells", "check_values", "cluster_codes"]


def cluster_codes(clusters, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes 0..G−1 for ``clusters`` and the size of each cluster.

    Non-negative integer labels are used directly (a bincount, no sort); anything else is
    factorised with a sort.

    >>> codes, sizes = cluster_codes(["b", "a", "b"], 3)
    >>> codes.tolist(), sizes.tolist()
    ([1, 0, 1], [1, 2])
    """
    arr = np.asarray(clusters)
    if arr.shape != (rows,):
        raise UsageError(f"clusters has shape {arr.shape}; it needs one label per row ({rows})")
    if arr.dtype.kind in "iu" and rows and arr.min() >= 0 and arr.max() < 4 * rows + 1024:
        sizes = np.bincount(arr)
        present = sizes > 0
        if present.all():
            return arr.astype(np.intp, copy=False), sizes
        remap = np.cumsum(present) - 1
        return remap[arr], sizes[present]
    _, codes = np.unique(arr, return_inverse=True)
    codes = codes.reshape(-1)
    return codes, np.bincount(codes)


def check_values(values) -> np.ndarray:
    """``values`` as a one-dimensional, non-empty array of finite floats (or a :class:`fluke.errors.UsageError`).

    >>> check_values([1, 0, 1]).tolist()
    [1.0, 0.0, 1.0]
    """
    y = np.asarray(values, dtype=float)
    if y.ndim != 1:
        raise UsageError(f"values has shape {y.shape}; it must be one-dimensional")
    if y.size == 0:
        raise UsageError("values is empty: at least one row is needed")
    if not np.all(np.isfinite(y)):
        raise UsageError(f"values has {int((~np.isfinite(y)).sum())} missing or infinite entries; "
                         "drop them (and say why) before computing an interval")
    return y


def _factor(labels, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """(code per entry, label per code): the codes of :func:`cluster_codes`, and the labels in that order."""
    arr = np.asarray(labels)
    codes, sizes = cluster_codes(arr, rows)
    out = np.empty(sizes.size, dtype=arr.dtype)
    out[codes] = arr                    # the entries of a code share its label: any one will do
    return codes, out


def _cell_codes(key: np.ndarray, space: int) -> tuple[np.ndarray, np.ndarray]:
    """(the distinct keys, sorted; the cell code of each entry) for integer keys below ``space``."""
    if space <= 4 * key.size + 1024:                        # dense keys: a bincount, no sort
        present = np.bincount(key, minlength=space) > 0
        cells = np.flatnonzero(present)
        return cells, (key if cells.size == space else (np.cumsum(present) - 1)[key])
    cells, code = np.unique(key, return_inverse=True)
    return cells, code.reshape(-1)


def _whole(name: str, value, size: int) -> np.ndarray:
    arr = np.asarray(value, dtype=float).reshape(-1)
    arr = np.broadcast_to(arr, (size,)) if arr.size == 1 else arr
    if arr.shape != (size,):
        raise UsageError(f"{name} has {arr.size} entries; it needs one per cell ({size})")
    if np.any(~np.isfinite(arr) | (arr < 0) | (arr != np.round(arr))):
        bad = arr[~np.isfinite(arr) | (arr < 0) | (arr != np.round(arr))][0]
        raise UsageError(f"{name} has {float(bad):g}: every entry must be a whole count, at least 0")
    return arr


@dataclass(frozen=True, eq=False)
class Cells:
    """Rows per (unit, scenario) cell and the sums of their values, shifted by ``shift``.

    ``unit`` and ``scenario`` are each cell's codes into ``unit_labels`` and
    ``scenario_labels`` (sorted); ``n`` counts its rows (at least 1), ``sum`` and ``sumsq``
    are Σ(y − shift) and Σ(y − shift)² over them. ``shift`` is 0 for sums kept at ingest,
    and for rows in :meth:`from_rows` unless their mean is large against their spread (then
    the mean, so that values far from zero keep their variance). ``unknowns`` and
    ``unknown_policy`` say what the unknown-outcome policy did before the cells were counted
    (carried into the clustered interval). ``binary`` is True when every value is 0 or 1
    (pass/fail outcomes: :meth:`from_passes`, or rows that are all 0/1).
    """

    unit: np.ndarray
    scenario: np.ndarray
    n: np.ndarray
    sum: np.ndarray
    sumsq: np.ndarray
    unit_labels: np.ndarray
    scenario_labels: np.ndarray
    shift: float = 0.0
    unknowns: int = 0
    unknown_policy: str | None = None
    binary: bool = False

    @property
    def rows(self) -> int:
        """Rows over all cells (N)."""
        return int(self.n.sum())

    @property
    def clusters(self) -> int:
        """Distinct units (G)."""
        return int(self.unit_labels.size)

    def unit_totals(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, Σ(y − shift)) per unit, as floats, in unit-code order.

        >>> Cells.from_rows([1.0, 3.0, 5.0], [7, 7, 9]).unit_totals()[0].tolist()
        [2.0, 1.0]
        """
        g = self.clusters
        return (np.bincount(self.unit, weights=self.n, minlength=g),
                np.bincount(self.unit, weights=self.sum, minlength=g))

    @classmethod
    def _build(cls, ucode, ulabels, scode, slabels, n, first, second, shift, same) -> Cells:
        g, s = ulabels.size, slabels.size
        key = ucode if same else ucode * s + scode          # scenarios read within their unit
        cells, code = _cell_codes(key, g if same else g * s)
        c = cells.size
        counts = (np.bincount(code, minlength=c) if n is None
                  else np.bincount(code, weights=n, minlength=c).astype(np.int64))
        unit = cells if same else cells // s
        return cls(unit, unit if same else cells % s, counts, np.bincount(code, weights=first, minlength=c),
                   np.bincount(code, weights=second, minlength=c), ulabels, ulabels if same else slabels,
                   float(shift))

    @classmethod
    def from_rows(cls, values, units, scenarios=None) -> Cells:
        """Cells of one value per row; ``scenarios=None`` makes each unit its own (only) scenario.

        >>> c = Cells.from_rows([2.0, 4.0, 6.0], ["u", "u", "v"], ["x", "y", "x"])
        >>> c.n.tolist(), c.unit.tolist(), c.scenario_labels[c.scenario].tolist()
        ([1, 1, 1], [0, 0, 1], ['x', 'y', 'x'])
        """
        y = check_values(values)
        mean, spread = float(y.mean()), float(y.var())
        # Σy² − (Σy)²/N loses digits as the mean grows against the spread: past a loss of three
        # digits (the variance under 1/1000 of the mean square) the sums are taken about the mean.
        shift = 0.0 if spread >= 1e-3 * (spread + mean * mean) else mean
        d = y - shift
        ucode, ulabels = _factor(units, y.size)
        if scenarios is None:
            scode, slabels = ucode, ulabels
        else:
            scode, slabels = _factor(scenarios, y.size)
        cells = cls._build(ucode, ulabels, scode, slabels, None, d, d * d, shift, scenarios is None)
        return replace(cells, binary=True) if bool(np.all((y == 0) | (y == 1))) else cells

    @classmethod
    def from_sums(cls, units, scenarios, n, sums, sumsq, *, shift: float = 0.0) -> Cells:
        """Cells from per-entry rows ``n``, Σy and Σy² (each entry a unit × scenario, perhaps
        repeated: entries with the same pair are added, those with ``n`` 0 dropped).

        For rewards from a ledger: ``n`` the runs with a reward, ``sums`` Σreward,
        ``sumsq`` Σreward². ``scenarios=None`` makes each unit its own scenario. Sums kept
        about a centre c (Σ(y − c), Σ(y − c)²) pass ``shift=c``; plain sums of values far
        from zero against their spread lose digits in Σy² − (Σy)²/n.

        >>> c = Cells.from_sums(["u", "u", "v"], ["x", "x", "x"], [2, 1, 0], [1.5, 0.5, 0.0], [1.25, 0.25, 0.0])
        >>> c.n.tolist(), c.sum.tolist(), c.clusters
        ([3], [2.0], 1)
        """
        ulab = np.asarray(units).reshape(-1)
        size = ulab.size
        if size == 0:
            raise UsageError("units is empty: at least one cell is needed")
        counts = _whole("n", n, size)
        first, second = (np.asarray(x, dtype=float).reshape(-1) for x in (sums, sumsq))
        for name, arr in (("sums", first), ("sumsq", second)):
            if arr.shape != (size,):
                raise UsageError(f"{name} has {arr.size} entries; it needs one per cell ({size})")
            if not np.all(np.isfinite(arr)):
                raise UsageError(f"{name} has missing or infinite entries")
        if np.any(second < 0):
            raise UsageError(f"sumsq has {float(second[second < 0][0]):g}: a sum of squares is at least 0")
        keep = counts > 0
        if not keep.any():
            raise UsageError("every cell has n = 0: at least one row is needed")
        ulab = ulab[keep]
        ucode, ulabels = _factor(ulab, ulab.size)
        if scenarios is None:
            scode, slabels = ucode, ulabels
        else:
            slab = np.asarray(scenarios).reshape(-1)
            if slab.shape != (size,):
                raise UsageError(f"scenarios has {slab.size} entries; units has {size}")
            scode, slabels = _factor(slab[keep], ulab.size)
        return cls._build(ucode, ulabels, scode, slabels, counts[keep], first[keep], second[keep], shift,
                          scenarios is None)

    @classmethod
    def from_passes(cls, units, scenarios, trials, passes, unknowns=0, *, policy: str = "fail") -> Cells:
        """Cells of pass/fail outcomes (1/0) from counts, the unknown-outcome policy applied.

        ``trials`` include the ``unknowns`` (runs whose ``passed`` is unknown), as the
        ledger counts them; ``passes`` are the runs that passed. ``policy="fail"`` counts an
        unknown as a failed row (n = trials); ``"exclude"`` leaves it out (n = trials −
        unknowns). Σy = Σy² = passes. The same cells as :meth:`from_rows` on the 1/0 values
        after :func:`fluke.inference.apply_unknown_policy`.

        >>> c = Cells.from_passes(["u", "v"], None, [4, 3], [2, 1], [1, 0], policy="exclude")
        >>> c.n.tolist(), c.sum.tolist(), c.unknowns, c.unknown_policy
        ([3, 3], [2.0, 1.0], 1, 'exclude')
        """
        policy = check_unknown_policy(policy)
        size = np.asarray(units).reshape(-1).size
        t, k, u = (_whole(name, x, size) for name, x in (("trials", trials), ("passes", passes),
                                                          ("unknowns", unknowns)))
        if np.any(k + u > t):
            raise UsageError("passes and unknowns must fit in the trials (passes ≤ trials − unknowns)")
        cells = cls.from_sums(units, scenarios, policy.apply(t, k, u)[0], k, k)
        return replace(cells, unknowns=int(u.sum()), unknown_policy=policy, binary=True)
