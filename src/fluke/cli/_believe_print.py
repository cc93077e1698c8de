"""How ``believe`` and ``calibration`` print: rich tables and plain statements, apart from the arithmetic."""

from __future__ import annotations

from ._common import console, fmt_share


def _name(cell: tuple[str, str]) -> str:
    return f"{cell[0]} [{cell[1]}]" if cell[1] else cell[0]


def _review_json(review: dict) -> dict:
    r = review["result"]
    return dict(against=review["old"], level=r.level, clean_batch=r.clean_batch, scenarios=[dict(
        scenario=c[0], condition=c[1], old=[int(review["ko"][i]), int(review["no"][i])],
        new=[int(review["kn"][i]), int(review["nn"][i])], role="frontier" if r.frontier[i] else "regression",
        p_worse=float(r.p_worse[i]), fisher_worse=float(r.fisher_worse[i]), fisher_better=float(r.fisher_better[i]),
        regressed=bool(r.regressed[i]), progressed=bool(r.progressed[i]), graduated=bool(r.graduated[i]))
        for i, c in enumerate(review["cells"])])


def _print_review(review: dict) -> None:
    from rich.table import Table

    r = review["result"]
    table = Table(title=f"against version {review['old']}: {int(r.regressed.sum())} regressed, "
                        f"{int(r.progressed.sum())} progressed, {int(r.graduated.sum())} graduated "
                        f"(regression set = scenarios clean on the old version; flagged at "
                        f"P ≥ {r.level:g}; uniform priors)", title_justify="left")
    for col in ("scenario", "set", "old", "new", "P(new worse)", "Fisher p worse / better"):
        table.add_column(col, justify="left" if col in ("scenario", "set") else "right")
    table.add_column("verdict", no_wrap=True, min_width=9)
    for i, c in enumerate(review["cells"]):
        verdict = ("[red]regressed[/]" if r.regressed[i] else "[green]progressed[/]" if r.progressed[i] else "—")
        if r.graduated[i]:
            verdict += " graduates"
        table.add_row(_name(c), "frontier" if r.frontier[i] else "regression",
                      fmt_share(int(review["ko"][i]), int(review["no"][i]), 0),
                      fmt_share(int(review["kn"][i]), int(review["nn"][i]), 0), _pct(r.p_worse[i]),
                      f"{_pct(r.fisher_worse[i])} / {_pct(r.fisher_better[i])}", verdict)
    out = console()
    out.print(table)
    out.print("A week-over-week comparison says whether a scenario moved, never whether it is above a bar.",
              markup=False)


def _print_believe(b, mean, p_above, lo, hi, p_next, certify, suite, suite_certify, suite_stmt, per, *,
                   bar, level, next_m, statements, check=None) -> None:
    from rich import box
    from rich.table import Table

    out = console()
    table = Table(title=f"version {b.label}: {len(b.cells)} scenarios, {int(b.k.sum())} passes in "
                        f"{int(b.n.sum())} runs; prior {b.prior_text[0] if len(set(b.prior_text)) == 1 else 'per scenario'}",
                  title_justify="left")
    table.box, table.pad_edge, table.collapse_padding = box.SIMPLE_HEAD, False, True
    table.add_column("scenario", no_wrap=True, min_width=10)
    table.add_column("passed", no_wrap=True, justify="right")
    for col in ("next", f"P(θ>{bar:g})", f"{level * 100:g}% CrI", f"P(next {next_m})", "certify"):
        table.add_column(col, justify="right", no_wrap=True)

    for i, c in enumerate(b.cells):
        row = [_name(c), fmt_share(int(b.k[i]), int(b.n[i]), 0), f"{mean[i]:.3f}", _pct(p_above[i]),
               f"{lo[i]:.3f}–{hi[i]:.3f}", _pct(p_next[i]),
               f"{certify[i]:.0f}"]
        table.add_row(*row)
    out.print(table)
    out.print(f"next = P(the next run passes); P(θ>{bar:g}) = P(the pass rate clears the bar); CrI = equal-tailed "
              f"credible interval; P(next {next_m}) = P(the next {next_m} runs all pass); certify = clean runs "
              f"still needed for P(θ>{bar:g}) ≥ 0.95.", markup=False, style="dim")
    if check is not None:
        _print_check(out, b, check)
    blo, bhi = suite.below_interval(0.9)
    flo, fhi = suite.failures_interval(0.9)
    suite_table = Table(title=f"suite questions at bar {bar:g}", title_justify="left", show_header=False)
    suite_table.add_column("question")
    suite_table.add_column("answer", justify="right")
    suite_table.add_row("average pass rate (posterior mean ± sd)", f"{suite.average_mean:.3f} ± {suite.average_sd:.3f}")
    suite_table.add_row(f"scenarios below {bar:g} (expected, 90% range)",
                        f"{suite.expected_below:.1f} of {suite.scenarios} ({blo} to {bhi})")
    suite_table.add_row(f"P(every scenario above {bar:g})", suite.p_all_clear_text())
    suite_table.add_row("failures in the next full execution (expected, 90% range)",
                        f"{suite.expected_failures:.1f} ({flo} to {fhi})")
    suite_table.add_row(f"clean runs per scenario to reach P(all above {bar:g}) ≥ 0.95",
                        "already" if suite_certify == 0 else f"{suite_certify:.0f} more each")
    out.print(suite_table)
    out.print(suite_stmt.text(), markup=False)
    if statements or len(per) <= 3:
        for s in per:
            out.print("")
            out.print(s.text(), markup=False)


def _pct(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _print_check(out, b, check, limit: int = 20) -> None:
    """The change check of the latest batch, most likely changes first."""
    from rich import box
    from rich.table import Table

    p_changed, surprise = check
    order = sorted(range(len(b.cells)), key=lambda i: -p_changed[i])
    account = b.account is not None and len(b.account_labels) > 1
    table = Table(title=f"change check of the latest batch ({int((p_changed >= 0.5).sum())} of {len(b.cells)} "
                        "scenarios reset at P(changed) ≥ 0.5)", title_justify="left", box=box.SIMPLE_HEAD,
                  pad_edge=False)
    for col in ("scenario", "batch", "surprise", "P(changed)") + (("evidence since", "resets") if account else ()):
        table.add_column(col, no_wrap=True, justify="left" if col in ("scenario", "evidence since") else "right")
    for i in order[:limit]:
        row = [_name(b.cells[i]), fmt_share(int(b.k[i]), int(b.n[i]), 0),
               "—" if surprise[i] != surprise[i] else _pct(surprise[i]), f"{p_changed[i]:.3f}"]
        if account:
            since = b.account_labels[int(b.account.since[-1, i])]
            row += [since.split(" (", 1)[-1].rstrip(")"), str(int(b.account.reset[:, i].sum()))]
        table.add_row(*row)
    out.print(table)
    if len(order) > limit:
        out.print(f"... and {len(order) - limit} more (all in --json)", markup=False, style="dim")
    out.print("surprise = P(a batch this bad or worse | the carried belief).", markup=False, style="dim")
