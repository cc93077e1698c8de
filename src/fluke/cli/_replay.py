"""``fluke replay`` and ``fluke intervene``: re-drive recorded runs, and intervene on them."""

from __future__ import annotations

import sys

import click

from ._common import Context, output_options, pass_context, progress_bar

_suite = click.option("--suite", "suite_file", required=True, type=click.Path(dir_okay=False),
                      help="The suite file whose agent (and declared tools) recorded the runs.")
_executor = click.option("--executor", type=click.Choice(["local", "threads", "ray"]), default="local",
                         show_default=True, help="Where agent calls run; ray needs pip install 'fluke[ray]'.")
_workers = click.option("--workers", type=int, default=None, help="Calls at once (threads, ray).")
_scenario = click.option("--scenario", default=None, help="Only runs of this scenario.")


@click.command("replay")
@click.argument("runs", nargs=-1, metavar="[RUN]...")
@_suite
@click.option("--k", "k", type=int, default=3, show_default=True, help="Replays per run.")
@_scenario
@_executor
@_workers
@output_options
@pass_context
def replay(ctx: Context, runs: tuple[str, ...], suite_file: str, k: int, scenario: str | None, executor: str,
           workers: int | None) -> None:
    """Re-drive the agent against each RUN's recorded tool I/O k times; print the observed fidelity.

    RUN is a run hash or a prefix of one (`fluke runs` lists them); none means every run with a
    tool log. A replay is faithful when it made the recorded calls with the recorded arguments
    and reached the recorded outcome; a request the recording does not hold stops the replay at
    that step, with the difference shown. Replays are stored as runs whose identity names the
    runs replayed.

    \b
    Example:
      fluke replay 4ec6372298 --suite suite.py --k 5
      fluke replay --suite suite.py --scenario env-0003 --json
    """
    from ..analysis import replay_runs

    with progress_bar(enabled=not ctx.as_json and sys.stderr.isatty()) as bar:
        result = replay_runs(ctx.ledger(), suite_file, runs, scenario=scenario, k=k, executor=executor,
                             workers=workers, progress=bar.for_runs() if bar else None)
    ctx.emit(result)


@click.command("intervene")
@click.argument("runs", nargs=-1, metavar="[RUN]...")
@_suite
@click.option("--step", type=int, required=True, help="The tool call (0-based) where the intervention applies.")
@click.option("--respond", metavar="JSON", default=None, help="Replace the response at the step by this one.")
@click.option("--raise", "raise_", metavar="TEXT", default=None, help="Replace it by an exception with this text.")
@click.option("--set", "sets", metavar="NAME=JSON", multiple=True,
              help="Set a policy parameter (a key of the agent's input), e.g. retry=3.")
@click.option("--forget", metavar="KEY", multiple=True, help="Remove this memory item from the restored state.")
@click.option("--remember", metavar="KEY=JSON", multiple=True, help="Set this memory item in the restored state.")
@click.option("--n", "n", type=int, default=200, show_default=True, help="Continuations per run and arm.")
@click.option("--coupling", type=click.Choice(["coupled", "fresh"]), default="coupled", show_default=True,
              help="coupled: both arms read the same tape draws (a conditional effect, lower variance); "
                   "fresh: independent draws (the total effect).")
@click.option("--seed", type=int, default=0, show_default=True, help="Base seed of the continuations.")
@click.option("--force-stale-reuse", "stale", is_flag=True,
              help="Serve recorded responses even where request or state differ: biased, to measure that bias.")
@_scenario
@_executor
@_workers
@output_options
@pass_context
def intervene(ctx: Context, runs: tuple[str, ...], suite_file: str, step: int, respond: str | None,
              raise_: str | None, sets: tuple[str, ...], forget: tuple[str, ...], remember: tuple[str, ...], n: int,
              coupling: str, seed: int, stale: bool, scenario: str | None, executor: str,
              workers: int | None) -> None:
    """Apply an intervention at a step of each RUN and re-execute downstream n times, against a baseline.

    Both arms restore the recorded start and re-execute the agent; a recorded response is reused
    only where request and state digests match, the suite's declared simulator answers the rest
    (none declared: such a call is refused and counted). Prints the effect on the pass rate with
    its interval, the share of continuations that needed the simulator, whether the contrast is
    the total or the conditional effect, and (coupled) the measured variance reduction. Both
    arms are stored as runs: `fluke compare` reads them.

    \b
    Example:
      fluke intervene 4ec6372298 --suite suite.py --step 1 --respond '{"account": "env-0000"}'
      fluke intervene 4ec6372298 --suite suite.py --step 1 --set retry=3 --n 200 --coupling fresh
    """
    from ..analysis import intervene_runs, parse_interventions

    changes = parse_interventions(respond=respond, raise_=raise_, sets=sets, forget=forget, remember=remember)
    with progress_bar(enabled=not ctx.as_json and sys.stderr.isatty()) as bar:
        result = intervene_runs(ctx.ledger(), suite_file, runs, changes, step=step, n=n, coupling=coupling,
                                seed=seed, stale=stale, scenario=scenario, executor=executor, workers=workers,
                                progress=bar.for_runs() if bar else None)
    ctx.emit(result)
