"""``fluke seal`` and ``fluke unseal``: pre-registration (registered through ``fluke.cli._design``)."""

from __future__ import annotations

import math
from pathlib import Path

import click

from ..errors import InputError
from ._common import Context, console, emit_json, json_option, pass_context


def _num(x: float | None, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return f"{x:.{digits}f}"


# -- seal / unseal -------------------------------------------------------------------------

@click.command()
@click.argument("rule", type=click.Path(exists=True, dir_okay=False))
@json_option
@pass_context
def seal(ctx: Context, rule: str) -> None:
    """Seal a decision rule (with its predictions and thresholds) in the ledger before the runs.

    Stores the file's exact bytes, their SHA-256 and the parsed rule; prints the seal's
    digest, which `fluke unseal` takes after the runs.

    \b
    Example:
      fluke seal memory-rule.yaml
    """
    from ..design import seal as do_seal
    from ..errors import SpecError

    raw = Path(rule).read_bytes()
    try:
        digest = do_seal(ctx.ledger(), raw)
    except SpecError as exc:
        raise InputError(rule, None, None, str(exc)) from None
    doc = next(d for d in ctx.ledger().documents("seal") if d.digest == digest)
    if ctx.as_json:
        emit_json("seal", {"digest": digest, "recorded_at": doc.recorded_at, "file": rule,
                           "text_sha256": doc.body["text_sha256"], "rule": doc.body["rule"]})
        return
    out = console()
    out.print(f"sealed {rule} at {doc.recorded_at}")
    out.print(f"digest: [bold]{digest}[/]")
    out.print(f"only runs recorded after this moment can confirm it: fluke unseal {digest[:12]}")


@click.command()
@click.argument("digest")
@click.option("--rule", "rule_file", type=click.Path(exists=True, dir_okay=False),
              help="Also check that this file is byte-for-byte the sealed rule.")
@json_option
@pass_context
def unseal(ctx: Context, digest: str, rule_file: str | None) -> None:
    """Check a seal and decide its rule on the runs recorded after it. Exit 1 unless it holds.

    Checks the seal's digest (any changed byte is detected), that every run in scope was
    recorded after the seal, then reports the decision against the rule.

    \b
    Example:
      fluke unseal 3f2a9c01e4b7 --rule memory-rule.yaml
    """
    from ..design import unseal as do_unseal

    text = Path(rule_file).read_bytes() if rule_file else None
    report = do_unseal(ctx.ledger(), digest, text=text)
    dec = report.decision
    if ctx.as_json:
        emit_json("unseal", {"digest": report.digest, "sealed_at": report.sealed_at,
                             "intact": report.intact, "problems": report.problems(),
                             "runs": report.runs, "early_runs": list(report.early),
                             "decision": vars(dec), "decision_text": dec.text(),
                             "holds": report.holds, "rule": report.rule})
    else:
        out = console()
        name = report.rule.get("name") or "(unnamed rule)"
        out.print(f"seal {report.digest[:12]} — {name}, sealed {report.sealed_at}")
        out.print(("[green]intact[/]: digest, text and rule match" if report.intact
                   else "[red]NOT intact[/]"))
        for p in report.problems():
            out.print(f"  [red]✗[/] {p}")
        if not report.early:
            out.print(f"order: all {report.runs} runs in scope were recorded after the seal")
        interval = "" if dec.low is None else f" ({_num(dec.low)} to {_num(dec.high)})"
        out.print(f"decision: {dec.statistic} = {_num(dec.estimate)}{interval} on {dec.runs} runs; "
                  f"{dec.text()}")
        verdict = "[green]HOLDS[/]" if report.holds else "[red]DOES NOT HOLD[/]"
        out.print(f"pre-registration {verdict}")
    if not report.holds:
        ctx_click = click.get_current_context()
        ctx_click.exit(1)
