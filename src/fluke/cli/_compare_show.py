"""Payloads (for ``--json``) and rich tables for the comparison verbs. No statistics here.

>>> _interval((0.1234, 0.5))
'[0.123, 0.500]'
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ..comparison import CLOSING_STATEMENT, DIFFERENT, TOO_SMALL
from ._common import console, fmt_p, fmt_share


def _num(x: float, digits: int = 3) -> str:
    return "—" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def _interval(pair) -> str:
    lo, hi = pair
    return "—" if not (math.isfinite(lo) and math.isfinite(hi)) else f"[{lo:.3f}, {hi:.3f}]"


def _arm_line(arm) -> str:
    trials = "" if arm.trials is None else f" trials {','.join(map(str, arm.trials))}"
    names = ", ".join(f"{v[:8]} {lab}" for v, lab in zip(arm.versions, arm.labels))
    return f"{arm.selector} → {names}{trials}"


# -- compare ---------------------------------------------------------------------------
def comparison_payload(arm_a, arm_b, result, steps, cells, excluded, died_from, strata, *,
                       scenario, spec) -> dict[str, Any]:
    lr = result.logrank
    conditional = (f"runs of A ({', '.join(v[:12] for v in arm_a.versions)}) and B "
                   f"({', '.join(v[:12] for v in arm_b.versions)}) in the {strata} scenario × condition "
                   f"strata both ran; log-rank stratified by stratum; α = {result.alpha:g}, power = "
                   f"{result.power:g}, ceiling {result.ceiling:g}; died_at from "
                   + ", ".join(f"{k} {v}" for k, v in died_from.items() if v))
    return {
        "a": {**arm_a.describe(), "compared": result.runs_a, "deaths": result.deaths_a},
        "b": {**arm_b.describe(), "compared": result.runs_b, "deaths": result.deaths_b},
        "scenario": scenario, "spec": spec, "strata": strata, "excluded": excluded, "died_at_from": died_from,
        "verdict": result.verdict, "pvalue": result.pvalue, "statistic": result.statistic,
        "detection_limit": result.detection_limit, "ceiling": result.ceiling, "alpha": result.alpha,
        "power": result.power, "runs_needed_per_arm": result.runs_needed_per_arm,
        "direction": result.direction, "hazard_ratio": lr.hazard_ratio, "observed_b": lr.observed,
        "expected_b": lr.expected, "summary": result.summary(),
        "steps": [dataclasses.asdict(s) for s in steps.steps],
        "cells": [dataclasses.asdict(c) for c in cells.cells],
        "cells_only_a": list(cells.only_a), "cells_only_b": list(cells.only_b),
        "conditional_on": conditional, "statement": CLOSING_STATEMENT,
    }


def print_comparison(payload, result, steps, cells, limit_rows: int) -> None:
    from rich.table import Table

    out = console()
    a, b = payload["a"], payload["b"]
    out.print(f"[bold]A[/] {_arm_line_from(a)}   {fmt_share(a['deaths'], a['compared'])} died")
    out.print(f"[bold]B[/] {_arm_line_from(b)}   {fmt_share(b['deaths'], b['compared'])} died")
    colour = {DIFFERENT: "red", TOO_SMALL: "yellow"}.get(result.verdict, "green")
    out.print(f"\n[bold {colour}]{result.verdict}[/]{result.summary()[len(result.verdict):]}")
    out.print(f"p = {fmt_p(result.pvalue)}; B's deaths {result.logrank.observed:.0f} against "
              f"{result.logrank.expected:.1f} expected; hazard ratio B/A ≈ {_num(result.logrank.hazard_ratio)}")
    if steps.steps and limit_rows:
        table = Table(title="deaths per step (runs at risk there), Fisher exact, BH across steps")
        for col in ("step", "event", "A", "B", "p", "q"):
            table.add_column(col, justify="left" if col == "event" else "right")
        for s in sorted(steps.steps, key=lambda s: (s.qvalue, s.step))[:limit_rows]:
            mark = "[bold red]" if s.qvalue < 0.05 else ""
            table.add_row(str(s.step), s.label or "—", fmt_share(s.deaths_a, s.at_risk_a),
                          fmt_share(s.deaths_b, s.at_risk_b), fmt_p(s.pvalue), f"{mark}{fmt_p(s.qvalue)}")
        out.print(table)
    if cells.cells and limit_rows:
        table = Table(title="failures per scenario × condition, Fisher exact, BH across cells")
        for col in ("cell", "A", "B", "p", "q"):
            table.add_column(col, justify="left" if col == "cell" else "right")
        for c in sorted(cells.cells, key=lambda c: (c.qvalue, c.scenario))[:limit_rows]:
            name = f"{c.scenario} {c.condition}".strip()
            table.add_row(name, fmt_share(c.failures_a, c.trials_a), fmt_share(c.failures_b, c.trials_b),
                          fmt_p(c.pvalue), fmt_p(c.qvalue))
        out.print(table)
        out.print(f"{len(cells.significant())} of {len(cells.cells)} cells at q < 0.05")
    ex = payload["excluded"]
    if ex["a"] or ex["b"]:
        out.print(f"left out: {ex['a']} runs of A and {ex['b']} of B in scenarios the other arm never ran")
    if ex["unknown_a"] or ex["unknown_b"]:
        out.print(f"left out: {ex['unknown_a'] + ex['unknown_b']} runs with no pass/fail outcome")
    out.print(f"\n[dim]Conditional on: {payload['conditional_on']}.[/]")
    out.print(f"[dim]{CLOSING_STATEMENT}[/]")


def _arm_line_from(arm: dict) -> str:
    trials = "" if arm["trials"] is None else f" trials {','.join(map(str, arm['trials']))}"
    names = ", ".join(f"{v[:8]} {lab}" for v, lab in zip(arm["versions"], arm["labels"]))
    return f"{arm['selector']} ({names}{trials})"


# -- fixcheck --------------------------------------------------------------------------
def _mean(m, *, test: bool = True) -> dict[str, Any] | None:
    """A clustered mean; ``test`` adds the p-value of "it is 0" (meaningful for differences only)."""
    if m is None:
        return None
    out = {"estimate": m.estimate, "low": m.low, "high": m.high, "se": m.se, "rows": m.rows,
           "clusters": m.clusters, "reason": m.reason}
    if test:
        out["pvalue"] = m.pvalue
    return out


def _rule(r) -> dict[str, Any] | None:
    if r is None:
        return None
    return {"fixed_once": _mean(r.fixed_once, test=False), "fixed_within": _mean(r.fixed_within, test=False),
            "tries": r.tries,
            "rows": r.rows, "inputs": r.inputs, "unmatched": r.unmatched}


def fixcheck_payload(first, cand, ctrl, check, chance, within) -> dict[str, Any]:
    return {
        "first": first.describe(), "candidate": cand.describe(),
        "control": ctrl.describe() if ctrl else None, "within": within,
        "candidate_rule": _rule(check.candidate), "control_rule": _rule(check.control),
        "difference_once": _mean(check.difference_once), "difference_within": _mean(check.difference_within),
        "chance": {"p": chance.p, "c": chance.c, "kappa": chance.kappa,
                   "fixed_once_if_pure_chance": chance.chance_fixed_once,
                   "fixed_within3_if_pure_chance": chance.chance_fixed_within3,
                   "tries": check.candidate.tries,
                   "fixed_within_tries_if_pure_chance": 1 - chance.p ** (check.candidate.tries or within)},
        "flags": [dataclasses.asdict(f) for f in check.flags], "flags_against": check.reference,
        "by_input": dataclasses.asdict(check.by_input),
        "conditional_on": "first-run failing episodes as rows; intervals clustered by input (CR1, t on G−1)",
        "statement": check.statement,
    }


def _share_cell(m) -> str:
    if m is None or not math.isfinite(m.estimate):
        return "—"
    k = round(m.estimate * m.rows)
    lo, hi = max(0.0, m.low), min(1.0, m.high)
    return f"{fmt_share(k, m.rows)} {_interval((lo, hi))}"


def print_fixcheck(payload, check, chance, within) -> None:
    from rich.table import Table

    out = console()
    arms = [("candidate", check.candidate, payload["candidate"])]
    if check.control is not None:
        arms.append(("control", check.control, payload["control"]))
    table = Table(title=f"re-run rule on the first run's {check.candidate.rows} failing episodes "
                        f"({check.candidate.inputs} inputs), 95% intervals clustered by input")
    for col in ("arm", "selector", "fixed once", f"fixed within {within}"):
        table.add_column(col)
    for name, rule, arm in arms:
        tries = f" (≤{rule.tries} tries)" if rule.tries < within else ""
        table.add_row(name, arm["selector"], _share_cell(rule.fixed_once), _share_cell(rule.fixed_within) + tries)
    k = check.candidate.tries or within
    table.add_row("pure chance", f"1 − p, 1 − p^{k}", f"{100 * chance.chance_fixed_once:.1f}%",
                  f"{100 * (1 - chance.p ** k):.1f}%")
    out.print(table)
    if check.difference_once is not None:
        for label, m in (("once", check.difference_once), (f"within {within}", check.difference_within)):
            out.print(f"candidate − control, fixed {label}: {100 * m.estimate:+.1f} points "
                      f"[{100 * m.low:+.1f}, {100 * m.high:+.1f}], p = {fmt_p(m.pvalue)} ({m.clusters} inputs)")
    else:
        out.print("[yellow]No control: the 'fixed' share above cannot be told from failures that pass on a "
                  "re-run by chance. Re-run the unchanged agent the same way and pass it as --control.[/]")
    flagged = [f for f in check.flags if f.flagged]
    out.print(f"per input (against the {check.reference}): {len(flagged)} of {len(check.flags)} flagged at q < 0.05")
    if flagged:
        ft = Table()
        for col in ("input", "candidate failed", check.reference + " failed", "p", "q"):
            ft.add_column(col)
        for f in flagged:
            ft.add_row(f.input, fmt_share(f.failures_candidate, f.trials_candidate),
                       fmt_share(f.failures_reference, f.trials_reference), fmt_p(f.pvalue), fmt_p(f.qvalue))
        out.print(ft)
    bi = check.by_input
    out.print(f"by input (sign test): {bi.improved} improved, {bi.worsened} worsened, {bi.unchanged} unchanged; "
              f"p = {fmt_p(bi.pvalue)}")
    out.print(f"\n[dim]Conditional on: {payload['conditional_on']}.[/]")
    out.print(f"[dim]{check.statement}[/]")


# -- consistency -----------------------------------------------------------------------
def consistency_payload(rows) -> dict[str, Any]:
    agents = []
    for arm, c in rows:
        agents.append({**arm.describe(), "c": c.c, "c_interval": list(c.c_interval), "p": c.p,
                       "p_interval": list(c.p_interval), "kappa": c.kappa,
                       "kappa_interval": list(c.kappa_interval), "failures": c.failures, "trials": c.trials,
                       "scenarios": c.scenarios, "scenarios_failed": c.scenarios_failed,
                       "fixed_once_if_pure_chance": c.chance_fixed_once,
                       "fixed_within3_if_pure_chance": c.chance_fixed_within3, "reason": c.reason})
    return {"agents": agents, "conditional_on": "intervals clustered by scenario (CR1, t on G−1)"}


def print_consistency(rows) -> None:
    from rich.table import Table

    table = Table(title="failure consistency (95% intervals clustered by scenario)")
    for col in ("agent", "runs", "p (fail)", "C (fail again)", "κ", "chance 'fixed' once / in 3"):
        table.add_column(col, justify="left" if col == "agent" else "right", overflow="fold")
    for arm, c in rows:
        table.add_row(arm.selector, f"{c.trials}\n{c.scenarios} scen.",
                      f"{fmt_share(c.failures, c.trials)}\n{_interval(c.p_interval)}",
                      f"{_num(c.c)}\n{_interval(c.c_interval)}", f"{_num(c.kappa)}\n{_interval(c.kappa_interval)}",
                      f"{100 * c.chance_fixed_once:.1f}% / {100 * c.chance_fixed_within3:.1f}%")
    out = console()
    out.print(table)
    for arm, _ in rows:
        out.print(f"[dim]{_arm_line(arm)}[/]")
    for arm, c in rows:
        if c.reason:
            out.print(f"{arm.selector}: {c.reason}")
    out.print("[dim]κ = 0: failures are pure chance (a re-run 'fixes' 1 − p); κ = 1: an input that failed "
              "always fails. Conditional on the scenarios and trials listed.[/]")
