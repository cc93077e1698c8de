"""``fluke interval``, ``passk``, ``contrast``, ``seal`` and ``unseal``: separate luck from policy."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click

from ..errors import InputError
from ._common import Context, console, emit_json, fmt_p, json_option, pass_context

_VERSION = click.option("--version", "version",
                        help="Versions: hash prefix or field=value[,field=value] (e.g. model=gpt-4o).")
_CONDITION = click.option("--condition", help="Only runs with these condition pairs key=value[,key=value].")
_OUTCOME = click.option("--outcome", type=click.Choice(["passed", "reward"]), default="passed",
                        show_default=True, help="What each run contributes: pass (0/1) or its reward.")
_LEVEL = click.option("--level", "confidence_level", type=click.FloatRange(0.5, 0.999), default=0.95,
                      show_default=True, help="Confidence level of the intervals.")


def _num(x: float | None, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return f"{x:.{digits}f}"


def _ci(low: float, high: float) -> str:
    return f"[{_num(low, 3)}, {_num(high, 3)}]"


def _versions(ctx: Context, selector: str | None) -> list[str] | None:
    if not selector:
        return None
    found = ctx.ledger().select_versions(selector)
    if not found:
        ctx.ledger().resolve_version(selector)  # raises, listing what the ledger has
    return found


def _runs(ctx: Context, version: str | None, condition: str | None) -> list:
    return list(ctx.ledger().runs(version=_versions(ctx, version), condition=condition))


def _outcome(runs: list, outcome: str) -> tuple[list[float], list]:
    """(values, runs kept): runs without the chosen outcome are left out, and said so."""
    vals, kept = [], []
    for r in runs:
        v = r.outcome.passed if outcome == "passed" else r.outcome.reward
        if v is not None:
            vals.append(float(v))
            kept.append(r)
    return vals, kept


def _labels(ctx: Context) -> dict[str, str]:
    return {v.version: v.identity.label() for v in ctx.ledger().versions()}


# -- interval ------------------------------------------------------------------------------

@click.command()
@click.option("--unit", type=click.Choice(["unit", "scenario"]), default="unit", show_default=True,
              help="The independent sampling unit: the run's declared unit, or its scenario.")
@_VERSION
@_CONDITION
@_OUTCOME
@_LEVEL
@click.option("--bootstrap", type=click.IntRange(min=0), default=0, show_default=True,
              help="Also a cluster bootstrap interval with this many resamples.")
@click.option("--seed", type=int, default=2026, show_default=True, help="Seed of the bootstrap.")
@click.option("--weighting", type=click.Choice(["rows", "units"]), default="rows", show_default=True,
              help="Target the mean over runs, or the equally weighted mean of unit means.")
@json_option
@pass_context
def interval(ctx: Context, unit: str, version: str | None, condition: str | None, outcome: str,
             confidence_level: float, bootstrap: int, seed: int, weighting: str) -> None:
    """The mean outcome per version with an interval clustered by the sampling unit.

    Prints the naive row-level interval beside it (and a warning when they differ
    materially), the variance components (unit / scenario / generation) and what more
    units, scenarios or generations would buy.

    \b
    Example:
      fluke interval --unit unit --version model=gpt-4o --bootstrap 2000
    """
    import numpy as np

    from ..inference import cluster_bootstrap_interval, clustered_interval, variance_components

    by_version: dict[str, list] = {}
    for r in _runs(ctx, version, condition):
        by_version.setdefault(r.version, []).append(r)
    if not by_version:
        raise InputError(ctx.ledger_url, None, None, "no runs match",
                         hint="ingest runs first, or loosen --version/--condition")
    labels = _labels(ctx)
    docs = []
    for v, vruns in by_version.items():
        y, kept = _outcome(vruns, outcome)
        doc: dict[str, Any] = {"version": v, "label": labels.get(v), "runs": len(vruns),
                               "without_outcome": len(vruns) - len(kept)}
        if kept:
            units = [r.sampling_unit if unit == "unit" else r.scenario for r in kept]
            ci = clustered_interval(y, units, confidence_level=confidence_level, unit=unit,
                                    weighting=weighting)
            vc = variance_components(y, units, [r.scenario for r in kept])
            doc.update(interval=ci, variance=vc, projections=vc.what_more_buys(2))
            if bootstrap:
                doc["bootstrap"] = cluster_bootstrap_interval(
                    y, units, rng=np.random.default_rng(seed), resamples=bootstrap,
                    confidence_level=confidence_level)
        docs.append(doc)
    if ctx.as_json:
        emit_json("interval", {"outcome": outcome, "unit": unit, "weighting": weighting,
                               "confidence_level": confidence_level,
                               "versions": [_interval_json(d) for d in docs]})
        return
    _interval_print(docs, outcome, unit, confidence_level)


def _interval_json(d: dict) -> dict:
    out = {k: d[k] for k in ("version", "label", "runs", "without_outcome")}
    if "interval" in d:
        ci, vc = d["interval"], d["variance"]
        out["clustered"] = {"statistic": ci.statistic, "standard_error": ci.standard_error,
                            "low": ci.low, "high": ci.high, "df": ci.df, "clusters": ci.clusters,
                            "rows": ci.rows, "method": ci.method, "reason": ci.reason,
                            "conditional_on": ci.conditional_on}
        out["naive"] = vars(ci.naive)
        out["design_effect"] = ci.design_effect
        out["warning"] = ci.warning
        out["variance_components"] = {"unit": vc.unit, "scenario": vc.scenario,
                                      "generation": vc.generation, "raw": list(vc.raw),
                                      "units": vc.units, "scenarios_per_unit": vc.scenarios,
                                      "generations_per_scenario": vc.generations,
                                      "reasons": list(vc.reasons)}
        out["what_more_buys"] = [vars(p) for p in d["projections"]]
        if "bootstrap" in d:
            out["bootstrap"] = vars(d["bootstrap"])
    return out


def _interval_print(docs: list[dict], outcome: str, unit: str, level: float) -> None:
    from rich.table import Table

    out = console()
    for d in docs:
        head = f"version {d['version'][:12]} ({d['label']}): mean {outcome}"
        if "interval" not in d:
            out.print(f"{head}: no run has outcome.{outcome} ({d['runs']} runs)")
            continue
        ci = d["interval"]
        table = Table(title=f"{head}, {ci.rows} runs in {ci.clusters} {unit}s")
        for col in ("interval", "estimate", "SE", f"{level:.0%} CI", "independent draws"):
            table.add_column(col, justify="left" if col in ("interval", "independent draws") else "right")
        table.add_row(f"clustered by {unit}", _num(ci.statistic, 3), _num(ci.standard_error, 4),
                      _ci(ci.low, ci.high), f"{ci.clusters} {unit}s")
        nv = ci.naive
        table.add_row("naive (row-level)", _num(nv.statistic, 3), _num(nv.standard_error, 4),
                      _ci(nv.low, nv.high), f"{ci.rows} runs")
        if "bootstrap" in d:
            b = d["bootstrap"]
            table.add_row("cluster bootstrap", _num(b.statistic, 3), _num(b.standard_error, 4),
                          _ci(b.low, b.high), f"{b.clusters} {unit}s")
        out.print(table)
        out.print(f"  clustered: {ci.method}, t on {ci.df} df; naive: every run independent, normal")
        if ci.reason:
            out.print(f"[yellow]undefined:[/] {ci.reason}")
        if ci.warning:
            out.print(f"[bold yellow]warning:[/] {ci.warning} (design effect {ci.design_effect:.2f})")
        vc = d["variance"]
        comp = Table(title="variance components (method of moments, nested)")
        for col in ("component", "variance", "std. dev."):
            comp.add_column(col, justify="right" if col != "component" else "left")
        for name, val in ((unit, vc.unit), ("scenario within unit", vc.scenario),
                          ("generation (run)", vc.generation)):
            comp.add_row(name, _num(val, 5), _num(math.sqrt(val) if val >= 0 else float("nan")))
        out.print(comp)
        for reason in vc.reasons:
            out.print(f"  note: {reason}")
        more = Table(title="what more evidence would buy (SE of the mean)")
        for col in ("panel", f"{unit}s", "scen./unit", "runs/scen.", "runs", "SE", "x now"):
            more.add_column(col, justify="left" if col == "panel" else "right")
        for p in d["projections"]:
            more.add_row(p.label.replace(" per scenario", "").replace(" per unit", ""),
                         f"{p.units:g}", f"{p.scenarios:.3g}",
                         f"{p.generations:.3g}" if math.isfinite(p.generations) else "∞",
                         f"{p.runs:.0f}" if math.isfinite(p.runs) else "∞", _num(p.standard_error),
                         f"{p.ratio:.2f}")
        out.print(more)
        out.print(f"conditional on: {ci.conditional_on}; version {d['version'][:12]}; "
                  f"{d['without_outcome']} runs without outcome.{outcome} left out")


# -- passk ---------------------------------------------------------------------------------

def _parse_ks(text: str) -> list[int]:
    try:
        if ".." in text:
            a, b = text.split("..", 1)
            ks = list(range(int(a), int(b) + 1))
        else:
            ks = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(f"{text!r}: give a range like 1..4 or a list like 1,2,5") from None
    if not ks or min(ks) < 1:
        raise click.BadParameter(f"{text!r}: every k must be at least 1")
    return ks


def _weights(path: str | None) -> dict[str, float] | None:
    if path is None:
        return None
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(path, None, None, f"cannot read weights ({exc})") from None
    if not isinstance(data, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                             for v in data.values()):
        raise InputError(path, None, None, "must map each scenario to a number (its weight)",
                         hint="e.g. 'airline/1: 2.0'")
    return {str(k): float(v) for k, v in data.items()}


@click.command()
@click.option("--k", "ks", default="1..4", show_default=True, help="Budgets: a range 1..4 or a list 1,2,5.")
@_VERSION
@_CONDITION
@click.option("--weights", type=click.Path(exists=True, dir_okay=False),
              help="YAML/JSON mapping scenario -> weight (default: equal weights).")
@click.option("--plugin", is_flag=True, help="Also show the biased plug-in 1-(1-c/n)^k (with a warning).")
@json_option
@pass_context
def passk(ctx: Context, ks: str, version: str | None, condition: str | None, weights: str | None,
          plugin: bool) -> None:
    """Unbiased pass@k (at least one of k passes) and pass^k (all k pass) per version.

    Computed per scenario (× condition) from the recorded trials, then averaged with the
    declared weights. A k above a scenario's trial count is refused with the reason.

    \b
    Example:
      fluke passk --k 1..4 --version model=gpt-4o
    """
    import warnings

    import numpy as np

    from ..inference import PlugInWarning, pass_at_k, pass_at_k_plugin, pass_hat_k

    k_list = _parse_ks(ks)
    declared = _weights(weights)
    rows = ctx.ledger().counts(version=_versions(ctx, version), condition=condition)
    if not rows:
        raise InputError(ctx.ledger_url, None, None, "no runs match",
                         hint="ingest runs first, or loosen --version/--condition")
    labels = _labels(ctx)
    by_version: dict[str, list] = {}
    for r in rows:
        by_version.setdefault(r.version, []).append(r)
    docs = []
    for v, vrows in by_version.items():
        names = [r.scenario + (f" [{r.condition}]" if r.condition else "") for r in vrows]
        c = np.array([r.passes for r in vrows])
        n = np.array([r.trials for r in vrows])
        w = None
        if declared is not None:
            missing = [r.scenario for r in vrows if r.scenario not in declared]
            if missing:
                raise InputError(weights, None, missing[0], "no weight declared for this scenario",
                                 hint="give every scenario in scope a weight")
            w = [declared[r.scenario] for r in vrows]
        entries = []
        for k in k_list:
            at, hat = pass_at_k(c, n, k, weights=w), pass_hat_k(c, n, k, weights=w)
            e = {"k": k, "pass_at_k": at.statistic, "pass_hat_k": hat.statistic, "reason": at.reason}
            if plugin:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", PlugInWarning)
                    pl = pass_at_k_plugin(c, n, k, weights=w)
                e["plugin_pass_at_k"], e["warning"] = pl.statistic, pl.warning
            entries.append(e)
        docs.append({"version": v, "label": labels.get(v), "scenarios": len(vrows),
                     "trials": int(n.sum()), "passes": int(c.sum()),
                     "trials_per_scenario": [int(n.min()), int(n.max())],
                     "weights": "declared in " + weights if weights else "equal",
                     "rows": entries, "per_scenario": dict(zip(names, zip(c.tolist(), n.tolist())))})
    if ctx.as_json:
        emit_json("passk", {"versions": docs})
        return
    from rich.table import Table

    out = console()
    for d in docs:
        lo, hi = d["trials_per_scenario"]
        table = Table(title=f"version {d['version'][:12]} ({d['label']}): {d['passes']} of "
                            f"{d['trials']} runs passed, {d['scenarios']} scenarios, "
                            f"{lo}–{hi} trials each")
        cols = ["k", "pass@k", "pass^k"] + (["plug-in pass@k (biased)"] if plugin else [])
        for col in cols:
            table.add_column(col, justify="right")
        for e in d["rows"]:
            cells = [str(e["k"]), _num(e["pass_at_k"]), _num(e["pass_hat_k"])]
            if plugin:
                cells.append(_num(e["plugin_pass_at_k"]))
            table.add_row(*cells)
        out.print(table)
        for e in d["rows"]:
            if e["reason"]:
                out.print(f"[yellow]k={e['k']} undefined:[/] {e['reason']}")
        if plugin:
            out.print("[bold yellow]warning:[/] the plug-in column is biased downwards for k > 1; "
                      "it is shown only for comparison")
        out.print(f"conditional on: {d['weights']} scenario weights; the trials of each scenario "
                  "being exchangeable (independent attempts, no adaptation between them); "
                  f"version {d['version'][:12]}")


# -- contrast ------------------------------------------------------------------------------

@click.command()
@click.option("--factors", required=True, help="The two condition keys of a 2 x 2 design, e.g. memory,retry.")
@_VERSION
@_CONDITION
@_OUTCOME
@_LEVEL
@json_option
@pass_context
def contrast(ctx: Context, factors: str, version: str | None, condition: str | None, outcome: str,
             confidence_level: float) -> None:
    """Factorial contrasts paired within each environment (the run's unit), clustered by it.

    Each factor's main effect, its effect at each level of the other, and the interaction,
    with t intervals over environments (G - 1 df). Versions may differ (each policy is its
    own version); --version selects the study's versions, e.g. model=sim-support.

    \b
    Example:
      fluke contrast --factors memory,retry --version model=sim-support
    """
    from ..design import factorial_contrasts

    names = [f.strip() for f in factors.split(",") if f.strip()]
    if len(names) != 2:
        raise click.BadParameter(f"{factors!r}: give exactly two condition keys", param_hint="--factors")
    y, kept = _outcome(_runs(ctx, version, condition), outcome)
    if not kept:
        raise InputError(ctx.ledger_url, None, None, f"no run matches with an outcome.{outcome}")
    lacking = [r for r in kept if any(f not in r.condition for f in names)]
    if lacking:
        f = next(f for f in names if f not in lacking[0].condition)
        raise InputError(ctx.ledger_url, f"run {lacking[0].hash[:12]}", f"condition.{f}",
                         f"{len(lacking)} runs in scope lack this factor",
                         hint="narrow the scope with --version or --condition")
    try:
        fc = factorial_contrasts(y, [r.sampling_unit for r in kept],
                                 {f: [r.condition[f] for r in kept] for f in names},
                                 confidence_level=confidence_level)
    except ValueError as exc:
        raise InputError(ctx.ledger_url, None, "condition", str(exc)) from None
    if ctx.as_json:
        emit_json("contrast", {"factors": names, "outcome": outcome, "levels": fc.levels,
                               "environments": fc.environments, "dropped": fc.dropped,
                               "confidence_level": confidence_level, "cell_means": fc.cell_means,
                               "contrasts": [vars(c) for c in fc.contrasts],
                               "conditional_on": fc.conditional_on})
        return
    from rich.table import Table
    from scipy import stats

    out = console()
    table = Table(title=f"{len(kept)} runs, {fc.environments} environments: contrasts of mean {outcome}")
    for col in ("contrast", "estimate", "SE", f"{confidence_level:.0%} CI", "p", "envs"):
        table.add_column(col, justify="left" if col == "contrast" else "right")
    for c in fc.contrasts:
        p = 2 * stats.t.sf(abs(c.statistic / c.standard_error), c.df) if c.standard_error > 0 else float("nan")
        style = "bold" if c.excludes_zero else ""
        table.add_row(c.name, _num(c.statistic, 3), _num(c.standard_error, 4), _ci(c.low, c.high),
                      fmt_p(p), str(c.environments), style=style)
    out.print(table)
    cells = Table(title="cell means (equal weight per environment)")
    cells.add_column("policy")
    cells.add_column(f"mean {outcome}", justify="right")
    for k, v in fc.cell_means.items():
        cells.add_row(k, _num(v))
    out.print(cells)
    if fc.dropped:
        out.print(f"[yellow]note:[/] {fc.dropped} environments lacked a policy and were left out")
    out.print(f"conditional on: {fc.conditional_on}")


# seal and unseal live in their own module; they are registered under this one.
from ._design_seal import seal, unseal  # noqa: E402,F401
