"""``fluke leaderboard`` and ``fluke plan``: many versions at once, and a plan before the runs."""

from __future__ import annotations

import click

from ._common import Context, output_options, pass_context, unknown_both_option, unknown_option


@click.command()
@click.argument("versions", nargs=-1)
@click.option("--baseline", help="Test each version against this one only (a selector naming one version).")
@click.option("--correction", type=click.Choice(["holm", "bh"]), default="holm", show_default=True,
              help="Across pairs: Holm (family-wise error) or Benjamini–Hochberg (false discovery rate).")
@click.option("--scenario", help="Only these scenarios; * matches any characters.")
@click.option("--condition", help="Only cells with these condition pairs key=value[,key=value].")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Level of the corrected tests.")
@click.option("--power", type=float, default=0.8, show_default=True, help="Power of the detection limit.")
@click.option("--ceiling", type=float, default=5.0, show_default=True,
              help="Largest detection limit, in points, that allows 'no significant difference'.")
@click.option("--replicates", type=click.IntRange(min=100), default=2000, show_default=True,
              help="Bootstrap resamples of the scenarios for the rank intervals, and P(first)'s posterior draws.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the rank bootstrap and of P(first).")
@click.option("--costs/--no-costs", default=None,
              help="Read cost and latency (a scan of the stored runs); by default only up to 20,000 runs.")
@click.option("--judge", "judge_sel", metavar="JUDGE",
              help="Rank PPI-corrected pass rates: this judge's verdicts (fluke judge run), corrected by --labels.")
@click.option("--labels", "labels_path", type=click.Path(dir_okay=False),
              help="With --judge: the people's labels (the filled audit sample, or a CSV of run,label).")
@click.option("--rank", "rank_by", type=click.Choice(["pass", "cost"]), default="pass", show_default=True,
              help="cost: add each version's cost per success (every run charged), cheapest first, and the "
                   "cost–quality frontier (streams each version's runs once).")
@click.option("--cost", "cost_key", default="usd", show_default=True,
              help="With --rank cost: the cost keys that make a run's spend (those ending in this).")
@unknown_both_option
@output_options
@pass_context
def leaderboard(ctx: Context, versions: tuple[str, ...], baseline: str | None, correction: str,
                scenario: str | None, condition: str | None, alpha: float, power: float, ceiling: float,
                replicates: int, seed: int, costs: bool | None, unknown: str, judge_sel: str | None,
                labels_path: str | None, rank_by: str, cost_key: str) -> None:
    """Every version on the scenarios all of them ran: rates, pairs, groups and ranks.

    VERSIONS are selectors (hash prefix or field=value); none means every version.
    Pairs use the stratified test of `compare`, corrected across pairs. P(first) is the
    posterior probability of the highest mean pass rate, with the versions' effects shrunk
    toward each other (the spread τ it estimated is printed). `--unknown both`
    adds each version's rate and rank with unknown outcomes left out, and flags the pairs
    whose order flips between the two policies.

    \b
    Example:
      fluke leaderboard --correction bh
      fluke leaderboard --unknown both
      fluke leaderboard model=gpt-4o model=gpt-4.1 model=o3 --baseline model=gpt-4o
      fluke leaderboard --judge 3f2a9c --labels audit.jsonl
      fluke leaderboard --rank cost --cost agent_usd
    """
    from ..analysis import leaderboard as board

    if judge_sel is not None or labels_path is not None:
        from ..analysis import leaderboard_corrected
        from ..errors import UsageError

        if judge_sel is None or labels_path is None:
            raise UsageError("corrected rates need both --judge JUDGE and --labels FILE")
        given = [name for name, value in (("--baseline", baseline), ("--scenario", scenario),
                                          ("--condition", condition),
                                          ("--rank cost", rank_by == "cost")) if value]
        if given or correction != "holm":
            raise UsageError(f"{given[0] if given else '--correction bh'} does not apply to a leaderboard of "
                             "corrected rates (--judge)")
        ctx.emit(leaderboard_corrected(ctx.ledger(), list(versions), judge=judge_sel, labels=labels_path,
                                       alpha=alpha, power=power, ceiling=ceiling))
        return

    ctx.emit(board(ctx.ledger(), list(versions) or None, baseline=baseline, correction=correction,
                   scenario=scenario, condition=condition, alpha=alpha, power=power, ceiling=ceiling,
                   replicates=replicates, seed=seed, costs=costs, rows=10_000 if ctx.all_rows else 10,
                   unknown=unknown, rank=rank_by, cost=cost_key))


@click.command()
@click.option("--detect", type=float, help="Difference in points to detect between two versions.")
@click.option("--rate", type=float, help="Expected pass rate of the first version (0-1), for --detect.")
@click.option("--scenarios", type=click.IntRange(min=1), help="Scenarios available (plan runs per scenario).")
@click.option("--runs", type=click.IntRange(min=1), help="Runs per scenario and version (plan scenarios).")
@click.option("--bar", type=float, help="Certify P(pass rate > BAR) on every scenario (e.g. 0.9).")
@click.option("--level", type=float, default=0.95, show_default=True, help="Certainty wanted for --bar.")
@click.option("--budget", type=click.IntRange(min=1), help="Allocate this many next runs (needs --version).")
@click.option("--version", "version", help="Start from this version's runs in the ledger.")
@click.option("--against", help="A second version: allocate to tell the two apart.")
@click.option("--scenario", help="Only these scenarios; * matches any characters.")
@click.option("--condition", help="Only cells with these condition pairs key=value[,key=value].")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Level of the test.")
@click.option("--power", type=float, default=0.8, show_default=True, help="Power wanted.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the expected-gain Monte Carlo.")
@click.option("--seal", "seal_it", is_flag=True, help="Seal the plan in the ledger (decide later with unseal).")
@click.option("--explore", is_flag=True, help="With --space and --budget: the points (run or named but not run) "
              "whose next runs tell most about the boundary (see fluke boundary).")
@click.option("--space", type=click.Path(dir_okay=False), help="With --explore: the condition space (YAML).")
@click.option("--floor", type=float, default=0.5, show_default=True, help="With --explore: a point fails when "
              "P(θ < FLOOR) ≥ the --level.")
@unknown_option
@output_options
@pass_context
def plan(ctx: Context, seal_it: bool, explore: bool, space: str | None, floor: float, **options) -> None:
    """Before any run: runs and scenarios to detect a difference, certify a bar, or where the next runs go.

    \b
    Example:
      fluke plan --detect 5 --rate 0.8 --scenarios 50
      fluke plan --bar 0.9 --level 0.95 --scenarios 50
      fluke plan --budget 200 --version model=gpt-4o --bar 0.9
      fluke plan --explore --space space.yaml --budget 40 --bar 0.9 --level 0.9
    """
    if explore or space:
        from ._boundary import explore_plan

        ctx.emit(explore_plan(ctx, explore=explore, space=space, floor=floor, seal_it=seal_it, **options))
        return
    from ..analysis import plan as make_plan

    needs_ledger = bool(options.get("version") or seal_it)
    ctx.emit(make_plan(ctx.ledger() if needs_ledger else None, seal=seal_it, **options))
