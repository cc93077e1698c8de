"""``fluke gate RULE``: a declared decision rule checked on the ledger (exit 0 holds, 1 not, 2 bad input)."""

from __future__ import annotations

import sys

import click

from ._common import Context, _set_format, all_option, json_option, pass_context

#: ``--format`` on gate: the verbs' own, and junit (a test case per check, for a CI's test view).
_format = click.option("--format", "fmt",
                       type=click.Choice(["text", "markdown", "json", "junit", "github-summary", "github"]),
                       expose_value=False, callback=_set_format,
                       help="Output: text (default), markdown (a pull-request comment), json, junit (JUnit XML), "
                            "github-summary (GitHub's job summary) or github (annotations, at most 50).")


@click.command()
@click.argument("rule", type=click.Path(dir_okay=False))
@click.option("--version", "version", default=None, help="Judge this version (a selector), not the rule's.")
@click.option("--baseline", default=None, help="Compare against this version (a selector), not the rule's.")
@click.option("--seal", "do_seal", is_flag=True,
              help="Seal the rule file in the ledger now, before the runs it will judge (then exit 0).")
@json_option
@_format
@all_option
@pass_context
def gate(ctx: Context, rule: str, version: str | None, baseline: str | None, do_seal: bool) -> None:
    """Check a decision rule (YAML or TOML) on the ledger; list every reason it does not hold.

    Exit 0 when every check holds (or is too small to tell under the rule's on_inconclusive: warn,
    the default, or pass), 1 when one does not, 2 on a bad rule.

    \b
    Example:
      fluke --ledger fluke-demo/fluke.db gate release.yaml --format markdown
      fluke gate examples/ci/gate.yaml --version harness=$HEAD_SHA --baseline harness=$BASE_SHA
      fluke gate release.yaml --format junit > fluke-gate.junit.xml
      fluke gate release.yaml --format github-summary >> "$GITHUB_STEP_SUMMARY"
    """
    from .. import analysis

    if do_seal:
        ctx.creates = True  # a seal comes before any run
        ctx.emit(analysis.seal_gate(ctx.ledger, rule))
        return
    # the rule is validated before the ledger is opened
    result = analysis.gate(ctx.ledger, rule, version=version, baseline=baseline)
    if ctx.fmt == "junit":
        from ..exports._junit import gate_junit

        sys.stdout.write(gate_junit(result))
    else:
        ctx.emit(result)
    if not result.holds:
        sys.exit(1)


__all__ = ["gate"]
