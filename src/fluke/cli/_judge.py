"""``fluke judge run`` and ``fluke judge audit``: label runs with a declared judge, then audit it
against people and correct its pass rate."""

from __future__ import annotations

import click

from ._common import Context, output_options, pass_context


@click.group()
def judge() -> None:
    """Judge runs with a frozen, hashed judge; audit it against people (PPI++).

    \b
    Example:
      fluke judge run judge.yaml --version model=agent-v2
      fluke judge audit 3f2a9c --draw audit.jsonl --width 0.1
      fluke judge audit 3f2a9c --labels audit.jsonl
      fluke judge import logs/run.eval --name inspect-model-graded --score model_graded_qa
      fluke judge pairs pairwise.yaml model=agent-v2 model=agent-v1
    """


@judge.command("run")
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--version", "version_sel", help="Only the runs of this version (default: every unjudged run).")
@click.option("--scenario", help="Only these scenarios (* wildcards).")
@click.option("--record", is_flag=True, help="Also ingest the judged copies as their own version (grader = judge).")
@output_options
@pass_context
def judge_run(ctx: Context, config: str, version_sel: str | None, scenario: str | None, record: bool) -> None:
    """Ask the judge CONFIG declares about every run, K times, blinded; store every judgment.

    The judge sees a run without its identity, condition, tags or outcome. CONFIG (YAML or
    JSON) names model, endpoint (openai, python, fake), prompt, rubric, references,
    temperature, replicates, aggregation, tie and target (the URL, or module:function); its
    SHA-256 is the judge's identity, and a run judged again by the same judge is not re-asked.

    \b
    Example:
      fluke judge run judge.yaml --version model=agent-v2 --record
    """
    from ..analysis._judge import judge as answer
    from ..judging import load_judge

    ctx.emit(answer(ctx.ledger(), load_judge(config), version=version_sel, scenario=scenario, record=record))


@judge.command("audit")
@click.argument("judge_sel", metavar="JUDGE")
@click.option("--draw", "draw_path", type=click.Path(dir_okay=False),
              help="Write the blinded sample for people to label here (JSON lines).")
@click.option("--size", type=click.IntRange(min=2), help="How many runs to draw.")
@click.option("--width", type=click.FloatRange(0.01, 0.99, min_open=False),
              help="Draw as many as a human-only 95%% interval this wide needs (0.1 = 10 points).")
@click.option("--labels", "labels_path", type=click.Path(dir_okay=False),
              help="The people's labels: the filled sample, or a CSV of run,label.")
@click.option("--strata", help="Stratify by scenario, family, version (corrected rates compared) or condition.KEY.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the draw.")
@click.option("--kappa", "kappa_floor", type=float, default=0.6, show_default=True,
              help="The judge may gate when kappa's lower end reaches this.")
@click.option("--flips", "flips_ceiling", type=float, default=0.1, show_default=True,
              help="... and at most this share of runs flip between repeats.")
@click.option("--min-labels", type=click.IntRange(min=2), default=50, show_default=True,
              help="... and people labelled at least this many runs.")
@output_options
@pass_context
def judge_audit(ctx: Context, judge_sel: str, draw_path: str | None, size: int | None, width: float | None,
                labels_path: str | None, strata: str | None, seed: int, kappa_floor: float, flips_ceiling: float,
                min_labels: int) -> None:
    """Audit JUDGE (a digest prefix or its model name) against people.

    With --draw, write a blinded, stratified sample to label. With --labels, report the
    PPI++-corrected pass rate beside the judge-only and human-only ones, Cohen's kappa with
    the base rate, the confusion matrix, the judge's bias in points, its self-consistency,
    and whether it has earned the right to gate.

    \b
    Example:
      fluke judge audit 3f2a9c --draw audit.jsonl --width 0.1 --strata family
      fluke judge audit 3f2a9c --labels audit.jsonl --strata family
    """
    from ..analysis._judge import judge_audit as answer
    from ..analysis._judge import judge_audit_draw
    from ..errors import UsageError

    if (draw_path is None) == (labels_path is None):
        raise UsageError("give --draw FILE (write the sample to label) or --labels FILE (read it back), not both")
    if draw_path is not None:
        ctx.emit(judge_audit_draw(ctx.ledger(), judge_sel, draw_path, size=size, width=width, strata=strata,
                                  seed=seed))
    else:
        ctx.emit(answer(ctx.ledger(), judge_sel, labels_path, strata=strata, kappa=kappa_floor,
                        flips=flips_ceiling, min_labels=min_labels))


@judge.command("import")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--name", required=True, help="What to call the imported judge (e.g. the scorer's name).")
@click.option("--reader", "input_format", help="The reader for PATH (default: detected; a .csv is run,label).")
@click.option("--score", help="Inspect AI: the scorer (or scorer.key); DeepEval: the metric; whose verdicts to import.")
@click.option("--version", "version_sel", help="Match PATH's records to the runs of this version.")
@output_options
@pass_context
def judge_import(ctx: Context, path: str, name: str, input_format: str | None, score: str | None,
                 version_sel: str | None) -> None:
    """Store verdicts another tool made (an Inspect scorer, a DeepEval metric, a CSV of run,label) as a judge's.

    Nothing is re-judged: each record's verdict is matched to the stored run (by run hash in a
    CSV, else by scenario and trial) and kept as one replicate under an imported judge whose
    digest covers the name, the source's grader and the file's SHA-256.

    \b
    Example:
      fluke ingest logs/run.eval
      fluke judge import logs/run.eval --name inspect-match --score match
      fluke judge audit inspect-match --draw audit.jsonl --size 60
      fluke judge import .deepeval/.latest_test_run.json --name geval --score Correctness
    """
    from ..analysis._judge import import_judgments

    options = {"score": score} if score else None
    ctx.emit(import_judgments(ctx.ledger(), path, name=name, input_format=input_format, options=options,
                              version=version_sel))


@judge.command("pairs")
@click.argument("config", type=click.Path(dir_okay=False))
@click.argument("a")
@click.argument("b")
@output_options
@pass_context
def judge_pairs_cmd(ctx: Context, config: str, a: str, b: str) -> None:
    """Judge version A against version B pair by pair, in balanced order; report the positional bias.

    Pairs are the two versions' runs of the same scenario, condition and trial. Each pair is
    judged K times (the judge's replicates), each side first in turn, so a judge's taste for
    the first slot stays out of the verdict and is reported beside it.

    \b
    Example:
      fluke judge pairs pairwise.yaml model=agent-v2 model=agent-v1
    """
    from ..analysis._judge import judge_pairwise
    from ..judging import load_judge

    ctx.emit(judge_pairwise(ctx.ledger(), load_judge(config), a, b))
