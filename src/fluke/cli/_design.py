"""``fluke interval``, ``passk``, ``contrast``, ``seal`` and ``unseal``: separate luck from policy."""

from __future__ import annotations

import sys

import click

from ._common import Context, output_options, pass_context, unknown_option
from ..errors import UsageError

_VERSION = click.option("--version", "version",
                        help="Versions: hash prefix or field=value[,field=value] (e.g. model=gpt-4o).")
_CONDITION = click.option("--condition", help="Only runs with these condition pairs key=value[,key=value].")
_OUTCOME = click.option("--outcome", type=click.Choice(["passed", "reward"]), default="passed",
                        show_default=True, help="What each run contributes: pass (0/1) or its reward.")
_LEVEL = click.option("--level", "confidence_level", type=click.FloatRange(0.5, 0.999), default=0.95,
                      show_default=True, help="Confidence level of the intervals.")


@click.command()
@click.option("--unit", type=click.Choice(["unit", "scenario"]), default="unit", show_default=True,
              help="The independent sampling unit: the run's declared unit, or its scenario.")
@_VERSION
@_CONDITION
@_OUTCOME
@_LEVEL
@click.option("--bootstrap", type=click.IntRange(min=0), default=0, show_default=True,
              help="Also a cluster bootstrap interval with this many resamples (at least 10).")
@click.option("--seed", type=int, default=2026, show_default=True, help="Seed of the bootstrap.")
@click.option("--weighting", type=click.Choice(["rows", "units"]), default="rows", show_default=True,
              help="Target the mean over runs, or the equally weighted mean of unit means.")
@unknown_option
@output_options
@pass_context
def interval(ctx: Context, unit: str, version: str | None, condition: str | None, outcome: str,
             confidence_level: float, bootstrap: int, seed: int, weighting: str, unknown: str) -> None:
    """The mean outcome per version with an interval clustered by the sampling unit.

    Prints the naive row-level interval beside it (and a warning when they differ
    materially), the variance components (unit / scenario / generation) and what more
    units, scenarios or generations would buy.

    \b
    Example:
      fluke interval --unit unit --version model=gpt-4o --bootstrap 2000
    """
    from ..analysis import interval as answer

    ctx.emit(answer(ctx.ledger(), unit=unit, version=version, condition=condition, outcome=outcome,
                    confidence_level=confidence_level, bootstrap=bootstrap, seed=seed, weighting=weighting,
                    unknown=unknown))


@click.command()
@click.option(
    "--k",
    "ks",
    default=None,
    help="Budgets: a range 1..4 or a list 1,2,5 (default: 1 … n, the fewest trials of any scenario; "
    "past n = 10: 1, 2, 5, 10, 20, 50, …, n).",
)
@_VERSION
@_CONDITION
@click.option("--weights", type=click.Path(exists=True, dir_okay=False),
              help="YAML/JSON mapping scenario -> weight (default: equal weights).")
@click.option("--plugin", is_flag=True, help="Also show the biased plug-in 1-(1-c/n)^k (with a warning).")
@unknown_option
@output_options
@pass_context
def passk(ctx: Context, ks: str | None, version: str | None, condition: str | None, weights: str | None,
          plugin: bool, unknown: str) -> None:
    """Unbiased pass@k (at least one of k passes) and pass^k (all k pass) per version.

    Computed per scenario (× condition) from the recorded trials, then averaged with the
    declared weights. A k above a scenario's trial count is refused with the reason.

    \b
    Example:
      fluke passk --k 1..4 --version model=gpt-4o
    """
    from ..analysis import passk as answer

    ctx.emit(answer(ctx.ledger(), ks=ks, version=version, condition=condition, weights=weights, plugin=plugin,
                    unknown=unknown))


@click.command()
@click.option("--factors", required=True, help="The two condition keys of a 2 x 2 design, e.g. memory,retry.")
@_VERSION
@_CONDITION
@_OUTCOME
@_LEVEL
@unknown_option
@output_options
@pass_context
def contrast(ctx: Context, factors: str, version: str | None, condition: str | None, outcome: str,
             confidence_level: float, unknown: str) -> None:
    """Factorial contrasts paired within each environment (the run's unit), clustered by it.

    Each factor's main effect, its effect at each level of the other, and the interaction,
    with t intervals over environments (G - 1 df). Versions may differ (each policy is its
    own version); --version selects the study's versions, e.g. model=sim-support.

    \b
    Example:
      fluke contrast --factors memory,retry --version model=sim-support
    """
    from ..analysis import contrast as answer

    ctx.emit(answer(ctx.ledger(), factors=factors, version=version, condition=condition, outcome=outcome,
                    confidence_level=confidence_level, unknown=unknown))


@click.command()
@click.argument("rule", type=click.Path(exists=True, dir_okay=False))
@output_options
@pass_context
def seal(ctx: Context, rule: str) -> None:
    """Seal a decision rule (with its predictions and thresholds) in the ledger before the runs.

    Stores the file's exact bytes, their SHA-256 and the parsed rule; prints the seal's
    digest, which `fluke unseal` takes after the runs.

    \b
    Example:
      fluke seal memory-rule.yaml
    """
    from ..analysis import seal as answer

    ctx.emit(answer(ctx.ledger(), rule))


@click.command()
@click.argument("digest", required=False)
@click.option("--rule", "rule_file", type=click.Path(exists=True, dir_okay=False),
              help="Also check that this file is byte-for-byte the sealed rule.")
@click.option("--list", "list_seals", is_flag=True, help="List the ledger's seals (digest, time, rule, looks) instead.")
@output_options
@pass_context
def unseal(ctx: Context, digest: str | None, rule_file: str | None, list_seals: bool) -> None:
    """Check a seal and decide its rule on the runs recorded after it. Exit 1 unless it holds.

    Checks the seal's digest (any changed byte is detected), that every run in scope was
    recorded after the seal, then reports the decision against the rule. --list shows the
    seals the ledger holds and how often each was opened.

    \b
    Example:
      fluke unseal --list
      fluke unseal 3f2a9c01e4b7 --rule memory-rule.yaml
    """
    from ..analysis import unseal as answer

    if list_seals or digest is None:
        if digest is not None or rule_file is not None:
            raise UsageError("--list takes no DIGEST or --rule")
        if not list_seals:
            raise UsageError("give a seal's DIGEST (at least 6 hex digits), or --list to see the seals")
        from ..analysis import seals

        ctx.emit(seals(ctx.ledger()))
        return

    result = answer(ctx.ledger(), digest, rule=rule_file)
    ctx.emit(result)
    if not result.holds:
        sys.exit(1)
