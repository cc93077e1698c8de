"""Variance components — unit, scenario within unit, generation — and what more of each buys.

The model is nested: y = μ + U_unit + V_scenario(unit) + E_generation. The grand mean of a
panel of n units × k scenarios × r generations has

    Var(ȳ) = σ²_U / n + σ²_V / (n k) + σ²_E / (n k r)

so more generations shrink only the last term, more scenarios the last two, and more units
all three. The components are estimated by the method of moments (nested ANOVA), with the
Henderson-type expected mean squares for unequal cell sizes; negative estimates are
truncated at zero and the untruncated ones kept in ``raw``.

>>> round(grand_mean_sd(0.06, 0.04, 0.04, units=40, scenarios=3, generations=4), 5)
0.01033
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UsageError, UsageTypeError
from ._cells import Cells

__all__ = ["Projection", "VarianceComponents", "grand_mean_sd", "variance_components", "variance_components_cells"]


def grand_mean_sd(sigma_unit: float, sigma_scenario: float, sigma_generation: float, *,
                  units: float, scenarios: float, generations: float) -> float:
    """The standard deviation of a balanced panel's grand mean across new panels.

    Arguments are standard deviations (not variances) and the panel's shape.

    >>> round(grand_mean_sd(0.06, 0.04, 0.04, units=80, scenarios=3, generations=4), 5)
    0.0073
    """
    for name, value in (("sigma_unit", sigma_unit), ("sigma_scenario", sigma_scenario),
                        ("sigma_generation", sigma_generation)):
        if not value >= 0:
            raise UsageError(f"{name}={value} must be a non-negative standard deviation")
    for name, value in (("units", units), ("scenarios", scenarios), ("generations", generations)):
        if not value > 0:
            raise UsageError(f"{name}={value} must be positive")
    var = (sigma_unit**2 / units + sigma_scenario**2 / (units * scenarios)
           + sigma_generation**2 / (units * scenarios * generations))
    return float(np.sqrt(var))


@dataclass(frozen=True)
class Projection:
    """The standard error of the grand mean under another panel shape."""

    label: str
    units: float
    scenarios: float
    generations: float
    runs: float
    standard_error: float
    ratio: float


@dataclass(frozen=True)
class VarianceComponents:
    """Estimated variances (σ², not σ) of the unit, scenario and generation components.

    ``units``, ``scenarios`` (mean scenarios per unit) and ``generations`` (mean runs per
    scenario) describe the panel the estimates came from. ``reasons`` names components that
    the panel cannot separate.
    """

    unit: float
    scenario: float
    generation: float
    raw: tuple[float, float, float]
    units: int
    scenarios: float
    generations: float
    rows: int
    reasons: tuple[str, ...] = ()

    def standard_error(self, *, units: float | None = None, scenarios: float | None = None,
                       generations: float | None = None) -> float:
        """SE of the grand mean for a panel of this shape (defaults: the current one)."""
        n = self.units if units is None else units
        k = self.scenarios if scenarios is None else scenarios
        r = self.generations if generations is None else generations
        return grand_mean_sd(np.sqrt(self.unit), np.sqrt(self.scenario), np.sqrt(self.generation),
                             units=n, scenarios=k, generations=r)

    def what_more_buys(self, factor: float = 2.0) -> list[Projection]:
        """The SE now, and with ``factor`` × more units, scenarios per unit, or generations.

        The last row is the floor that more generations alone can never go below. When each
        unit has one scenario (the unit *is* the scenario) the scenarios row is left out.
        """
        if not factor > 0:
            raise UsageError(f"factor={factor} must be positive")
        n, k, r = self.units, self.scenarios, self.generations
        now = self.standard_error()
        shapes = [("as recorded", n, k, r),
                  (f"{factor:g}x units", n * factor, k, r),
                  (f"{factor:g}x scenarios per unit", n, k * factor, r),
                  (f"{factor:g}x generations per scenario", n, k, r * factor)]
        if any("one scenario per unit" in r for r in self.reasons):
            del shapes[2]           # scenarios are the units here: "more per unit" means nothing
        rows = []
        for label, a, b, c in shapes:
            se = self.standard_error(units=a, scenarios=b, generations=c)
            rows.append(Projection(label, a, b, c, a * b * c, se, se / now if now > 0 else np.nan))
        floor = float(np.sqrt(self.unit / n + self.scenario / (n * k)))
        rows.append(Projection("unlimited generations", n, k, float("inf"), float("inf"), floor,
                               floor / now if now > 0 else np.nan))
        return rows


def variance_components(values, units, scenarios) -> VarianceComponents:
    """Method-of-moments variance components for scenarios nested in units.

    ``units[i]`` and ``scenarios[i]`` label row i; a scenario label is read within its unit
    (the same scenario name under two units is two cells).

    >>> import numpy as np
    >>> rng = np.random.default_rng(3)
    >>> u = rng.normal(0, 1, 200).repeat(12)
    >>> v = rng.normal(0, 0.5, 600).repeat(4)
    >>> y = u + v + rng.normal(0, 0.25, 2400)
    >>> vc = variance_components(y, np.arange(200).repeat(12), np.tile(np.arange(3).repeat(4), 200))
    >>> [round(float(x), 2) for x in (vc.unit, vc.scenario, vc.generation)]  # truth 1, 0.25, 0.0625
    [1.02, 0.26, 0.06]
    """
    return variance_components_cells(Cells.from_rows(values, units, scenarios))


def variance_components_cells(cells: Cells) -> VarianceComponents:
    """:func:`variance_components` from per-cell sums: each cell is a scenario within its unit.

    Cells built with ``scenarios=None`` (each unit its own scenario) fold the scenario
    component into the unit component, as the row-level function does when the two labels agree.

    >>> c = Cells.from_sums(["u1", "u1", "u2", "u2"], ["s1", "s2", "s1", "s2"], [4, 4, 4, 4],
    ...                     [3.0, 1.0, 2.0, 2.0], [3.0, 1.0, 2.0, 2.0])
    >>> vc = variance_components_cells(c)
    >>> vc.units, vc.scenarios, vc.generations, round(vc.generation, 4)
    (2, 2.0, 4.0, 0.2917)
    """
    if not isinstance(cells, Cells):
        raise UsageTypeError(f"cells must be fluke.inference.Cells, not {type(cells).__name__}")
    csize = cells.n.astype(float)
    cell_unit = cells.unit
    g, c = cells.clusters, csize.size
    usize = np.bincount(cell_unit, weights=csize, minlength=g)
    big_n = float(csize.sum())

    # Sums of squares from per-cell and per-unit sums; the cell sums are centred on the grand
    # mean first so that the differences of large sums do not cancel badly.
    within = float(np.sum(cells.sumsq - cells.sum * cells.sum / csize))       # Σ over cells of Σ(y − ȳ_cell)²
    csum = cells.sum - csize * (float(cells.sum.sum()) / big_n)
    usum = np.bincount(cell_unit, weights=csum, minlength=g)
    between_cells = float(np.dot(csum, csum / csize))
    between_units = float(np.dot(usum, usum / usize))
    ss_e = max(0.0, within)
    ss_v = max(0.0, between_cells - between_units)
    ss_u = between_units                        # the centred grand sum is zero
    df_e, df_v, df_u = big_n - c, c - g, g - 1

    # Expected sums of squares (Searle, Casella & McCulloch, nested unbalanced):
    #   E[SS_E] = df_e σ²_E
    #   E[SS_V] = df_v σ²_E + (N − Σ n_ij²/n_i) σ²_V
    #   E[SS_U] = df_u σ²_E + (Σ n_ij²/n_i − Σ n_ij²/N) σ²_V + (N − Σ n_i²/N) σ²_U
    sq_within = float(np.sum(csize**2 / usize[cell_unit]))
    reasons = []
    s2_e = ss_e / df_e if df_e > 0 else float("nan")
    if df_e <= 0:
        reasons.append("one run per scenario: generation variance is folded into the scenario "
                       "component")
        s2_e = 0.0
    if df_v > 0:
        s2_v = (ss_v - df_v * s2_e) / (big_n - sq_within)
    else:
        reasons.append("one scenario per unit: scenario variance is folded into the unit component")
        s2_v = 0.0
    if df_u > 0:
        s2_u = (ss_u - df_u * s2_e - (sq_within - float(np.sum(csize**2)) / big_n) * s2_v) / (
            big_n - float(np.sum(usize**2)) / big_n)
    else:
        reasons.append("one unit: the unit component cannot be estimated")
        s2_u = float("nan")
    raw = (float(s2_u), float(s2_v), float(s2_e))
    trunc = tuple(max(0.0, v) if np.isfinite(v) else v for v in raw)
    return VarianceComponents(trunc[0], trunc[1], trunc[2], raw, int(g), c / g, big_n / c,
                              int(big_n), tuple(reasons))
