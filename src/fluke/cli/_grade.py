"""``fluke grade``: grade run paths against a spec; per-run verdicts, luck rate, the gate."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..adapters import FORMATS, read_file
from ..errors import InputError
from ._common import Context, console, emit_json, fmt_share, json_option, pass_context


def _prior(text: str) -> tuple[float, float]:
    try:
        a, b = (float(x) for x in text.split(","))
    except ValueError:
        raise InputError(None, None, "--prior", f"{text!r} is not two numbers a,b (e.g. 0.5,0.5)") from None
    if a <= 0 or b <= 0:
        raise InputError(None, None, "--prior", f"{text!r}: both numbers must be positive")
    return a, b


def _verdict(g: Any) -> str:
    if g.output_ok is True:
        return "LUCKY" if not g.path_ok else "pass"
    return "fail" if g.output_ok is False else "unknown"


def _summary(g: Any, limit: int = 6) -> str:
    counts: dict[tuple[str, Any], int] = {}
    for v in g.violations:
        key = (v.check, v.index)
        counts[key] = counts.get(key, 0) + 1
    parts = [f"{c}@{'—' if i is None else i}" + (f"×{n}" if n > 1 else "") for (c, i), n in counts.items()]
    more = len(parts) - limit
    return ", ".join(parts[:limit]) + (f", +{more} more" if more > 0 else "") if parts else "—"


@click.command()
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--spec", "spec_path", required=True, type=click.Path(dir_okay=False),
              help="The spec: a YAML, JSON or TOML file.")
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), help="Force the input format of FILES.")
@click.option("--identity", "identity", multiple=True, metavar="FIELD=VALUE",
              help="Fill an identity field FILES lack (model, harness, ...).")
@click.option("--version", "version", help="Ledger only: versions by hash prefix or field=value.")
@click.option("--scenario", help="Ledger only: scenario id; * matches any characters.")
@click.option("--prior", default="0.5,0.5", show_default=True,
              help="Beta prior a,b of the luck-rate credible interval (0.5,0.5 is Jeffreys).")
@click.option("--level", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.95,
              show_default=True, help="Credible level of the interval.")
@click.option("--violations", "show_violations", is_flag=True, help="Print every violation's message.")
@click.option("--no-store", is_flag=True, help="Ledger only: do not store the grades.")
@json_option
@pass_context
def grade(ctx: Context, files: tuple[str, ...], spec_path: str, fmt: str | None, identity: tuple[str, ...],
          version: str | None, scenario: str | None, prior: str, level: float, show_violations: bool,
          no_store: bool) -> None:
    """Grade the path of every run against a spec: per-run verdicts, the luck rate, the gate.

    Runs come from the ledger, or from FILES when given (format auto-detected). Grading
    the ledger stores each run's grade under the spec's SHA-256 digest, with the spec
    itself, so any verdict can be re-created. Exit code 1 when the gate fails (a hard
    violation anywhere, or a soft check failed by a strict majority of a case's runs).

    \b
    Example:
      fluke grade --spec examples/specs/airline.yaml \\
          ../shared/data/tau-bench/historical_trajectories/gpt-4o-airline.json --identity model=gpt-4o
    """
    from ..grading import gate, grade_run, load_spec, luck_rate
    from ._ingest import parse_identity

    spec = load_spec(spec_path)  # refused before any run is read
    prior_ab = _prior(prior)
    stored = None
    if files:
        if version or scenario:
            raise InputError(None, None, "--version/--scenario", "filter the ledger only; with FILES, "
                             "grade the files you want")
        supplied = parse_identity(identity)
        runs = [r for path in files for r in read_file(path, format=fmt, identity=supplied)]
        origin = ", ".join(files)
    else:
        ledger = ctx.ledger()
        selected = None
        if version:
            selected = ledger.select_versions(version) or [ledger.resolve_version(version)]
        runs = list(ledger.runs(scenario=scenario, version=selected))
        origin = f"ledger {ctx.ledger_url}"
    import gc

    gc.freeze()  # the runs are read once and never change: keep full collections off them
    grades = [grade_run(r, spec) for r in runs]
    labels = {r.version: r.identity.label() for r in runs}
    if not files and not no_store:
        ledger.put_document("spec", spec.body)
        stored = ledger.put_grades(spec.digest, [(g.run_hash, g.to_dict()) for g in grades])

    by_version: dict[str, list] = {}
    for g in grades:
        by_version.setdefault(g.version, []).append(g)
    reports = {v: luck_rate(gs, prior=prior_ab, level=level) for v, gs in by_version.items()}
    verdict = gate(grades)

    if ctx.as_json:
        emit_json("grade", {
            "spec": {"digest": spec.digest, "name": spec.name, "path": spec_path},
            "source": origin, "stored": stored,
            "runs": [g.to_dict() for g in grades],
            "luck": {v: {"label": labels[v], **rep.to_dict()} for v, rep in reports.items()},
            "gate": verdict.to_dict(),
        })
    else:
        _print(spec, spec_path, origin, grades, reports, labels, verdict, stored, show_violations)
    if not verdict.passed:
        sys.exit(1)


def _print(spec, spec_path, origin, grades, reports, labels, verdict, stored, show_violations) -> None:
    from rich.table import Table
    from rich.text import Text

    out = console()
    out.print(Text(f"spec {spec_path} (sha256 {spec.digest[:12]}) over {len(grades)} runs from {origin}"))
    if not grades:
        out.print("no runs to grade")
        return
    failed_cases = {(c.version, c.scenario) for c in verdict.cases if c.failed}
    for version, gs in sorted(reports.items(), key=lambda kv: labels[kv[0]]):
        rows = [g for g in grades if g.version == version]
        table = Table(title=f"runs of version {version[:12]} ({labels[version]})", title_justify="left")
        for col in ("scenario", "trial", "output", "path", "verdict", "violations (check@event)"):
            table.add_column(col, justify="right" if col == "trial" else "left")
        for g in rows:
            path = "ok" if g.path_ok else ("hard" if g.hard else
                                           "soft" if g.soft_checks else "warn")
            table.add_row(Text(g.scenario), str(g.trial), {True: "ok", False: "fail", None: "—"}[g.output_ok],
                          path, _verdict(g), Text(_summary(g)))
        out.print(table)
        if show_violations:
            for g in rows:
                for v in g.violations:
                    where = "—" if v.index is None else v.index
                    out.print(Text(f"  {g.scenario} #{g.trial} [{v.severity}] {v.check} at event {where}: "
                                   f"{v.message}"))
        report = reports[version]
        cases = Table(title=f"luck rate per case, version {version[:12]}", title_justify="left")
        for col in ("scenario", "runs", "output ok", "lucky", "luck rate", "credible interval", "gate"):
            cases.add_column(col, justify="left" if col in ("scenario", "gate") else "right")
        for name, lr in report.cases.items():
            interval = "—" if lr.interval is None else f"{100 * lr.interval[0]:.1f}–{100 * lr.interval[1]:.1f}%"
            cases.add_row(Text(name), str(lr.runs), fmt_share(lr.green, lr.runs), str(lr.lucky),
                          fmt_share(lr.lucky, lr.green), interval,
                          "FAIL" if (version, name) in failed_cases else "pass")
        out.print(cases)
        out.print(Text(f"pooled luck rate: {report.pooled}"))
        out.print(Text(f"  conditional on: version {version[:12]} ({labels[version]}); spec {spec.digest[:12]}; "
                       f"{report.conditional_on}"))
    if stored is not None:
        out.print(Text(f"grades stored under spec {spec.digest[:12]} ({stored} new)"))
    if verdict.passed:
        out.print("gate: PASS (no hard violation; no soft check failed by a majority of a case's runs)")
    else:
        failing = [c for c in verdict.cases if c.failed]
        out.print(Text(f"gate: FAIL in {len(failing)} of {len(verdict.cases)} cases"))
        for reason in verdict.reasons[:20]:
            out.print(Text(f"  {reason}"))
        if len(verdict.reasons) > 20:
            out.print(Text(f"  … {len(verdict.reasons) - 20} more (use --json for all)"))
