"""``fluke <verb>``: a thin shell over the library.

Each verb lives in its own module and is imported only when it runs, so ``fluke --help``
stays fast and a verb's heavy dependencies load only for that verb.

>>> from click.testing import CliRunner
>>> result = CliRunner().invoke(group, ["--help"])
>>> result.exit_code, "ingest" in result.output
(0, True)
"""

from __future__ import annotations

import importlib

import click

from ._common import CREATING_VERBS, Context, cli_errors

#: verb -> "module:attribute" of its click command. Add a verb by adding a line here.
VERBS: dict[str, str] = {
    "ingest": "fluke.cli._ingest:ingest",
    "formats": "fluke.cli._ingest:formats",
    "runs": "fluke.cli._runs:runs",
    "export": "fluke.cli._export:export",
    "summary": "fluke.cli._runs:summary",
    "schema": "fluke.cli._runs:schema",
    "grade": "fluke.cli._grade:grade",
    "believe": "fluke.cli._believe:believe",
    "predict": "fluke.cli._believe:predict",
    "calibration": "fluke.cli._calibration:calibration",
    "compare": "fluke.cli._compare:compare",
    "fixcheck": "fluke.cli._compare:fixcheck",
    "consistency": "fluke.cli._compare:consistency",
    "simulate": "fluke.cli._compare:simulate",
    "calibrate": "fluke.cli._compare:calibrate",
    "interval": "fluke.cli._design:interval",
    "passk": "fluke.cli._design:passk",
    "contrast": "fluke.cli._design:contrast",
    "seal": "fluke.cli._design:seal",
    "unseal": "fluke.cli._design:unseal",
    "run": "fluke.cli._run:run",
    "replay": "fluke.cli._replay:replay",
    "intervene": "fluke.cli._replay:intervene",
    "report": "fluke.cli._report:report",
    "demo": "fluke.cli._demo:demo",
    "gate": "fluke.cli._gate:gate",
    "leaderboard": "fluke.cli._many:leaderboard",
    "plan": "fluke.cli._many:plan",
    "judge": "fluke.cli._judge:judge",
    "boundary": "fluke.cli._boundary:boundary",
    "incident": "fluke.cli._boundary:incident",
    "decide": "fluke.cli._decide:decide",
}


def _load(verb: str) -> click.Command | None:
    target = VERBS.get(verb)
    if target is None:
        return None
    module_name, attr = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:  # the verb is planned but not built yet
            return None
        raise
    return getattr(module, attr, None)


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(v for v in VERBS if _load(v) is not None)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return _load(cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        """Click's lookup, with the nearest verb suggested for a misspelt one (``belive`` → ``believe``)."""
        name = click.utils.make_str(args[0]) if args else ""
        if args and self.get_command(ctx, name) is None and not name.startswith("-"):
            import difflib

            near = difflib.get_close_matches(name, list(VERBS), n=2, cutoff=0.6)
            hint = f"; did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
            raise click.UsageError(f"no verb {name!r}{hint}", ctx)
        return super().resolve_command(ctx, args)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        """Click's main, with its usage errors as one line like every other fault."""
        import sys

        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.UsageError as exc:
            from ..format import safe

            where = exc.ctx.command_path if exc.ctx is not None else "fluke"
            click.echo(f"fluke: error: {safe(exc.format_message(), newlines=False)} (see: {where} --help)",
                       err=True)
            sys.exit(exc.exit_code)
        except click.exceptions.ClickException as exc:
            from ..format import safe

            click.echo(f"fluke: error: {safe(exc.format_message(), newlines=False)}", err=True)
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("fluke: interrupted; nothing half-written was kept", err=True)
            sys.exit(130)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context):
        with cli_errors(ctx):
            return super().invoke(ctx)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--ledger", envvar="FLUKE_LEDGER", default="fluke.db", show_default=True,
              help="The ledger: a SQLite file path, a postgresql:// URL, or (read-only, the count verbs) "
                   "parquet:DIR or duckdb:FILE. Also FLUKE_LEDGER.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (with format_version).")
@click.option("--format", "fmt", default=None,
              type=click.Choice(["text", "markdown", "json", "github-summary", "github"]),
              help="Output: text (default), markdown (a pull-request comment), json, github-summary (GitHub's "
                   "job summary) or github (annotations).")
@click.option("--all", "all_rows", is_flag=True, help="Print every row of long tables.")
@click.version_option(package_name="fluke")
@click.pass_context
def group(ctx: click.Context, ledger: str, as_json: bool, fmt: str | None, all_rows: bool) -> None:
    """fluke: what do your agent eval runs actually let you believe?

    \b
    Example:
      fluke ingest ../shared/data/tau-bench/historical_trajectories/gpt-4o-airline.json
      fluke summary
    """
    ctx.obj = Context(ledger_url=ledger, fmt="json" if as_json else (fmt or "text"), all_rows=all_rows,
                      creates=ctx.invoked_subcommand in CREATING_VERBS)


#: BLAS threads a command-line process starts with unless the environment names its own number.
#: A verb's matrix products are small (a leaderboard's bootstrap, a CR2 sandwich): OpenBLAS's
#: worker threads only spin for them, a fifth of a leaderboard's CPU on two cores.
BLAS_THREADS = "1"


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (fluke errors become one line on stderr and exit code 2).

    Before any verb imports numpy, BLAS is held to :data:`BLAS_THREADS` thread unless
    ``OPENBLAS_NUM_THREADS`` (or ``OMP_NUM_THREADS``) is set already.
    """
    import os

    if "OPENBLAS_NUM_THREADS" not in os.environ and "OMP_NUM_THREADS" not in os.environ:
        os.environ["OPENBLAS_NUM_THREADS"] = BLAS_THREADS
    group.main(args=argv, prog_name="fluke", standalone_mode=True)

