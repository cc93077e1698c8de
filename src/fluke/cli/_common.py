"""What every verb shares: the context object, output of a result, and the mapping of faults to one line.

>>> ctx = Context(ledger_url="fluke.db", fmt="json")
>>> ctx.as_json
True
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Iterator

import click

from ..errors import FlukeError
from ..policies import ALIASES

#: Verbs that may create a ledger that does not exist yet; every other verb refuses a missing one.
#: ``seal`` is among them: a pre-registration is written before the runs it governs.
CREATING_VERBS = frozenset({"ingest", "run", "demo", "simulate", "seal",   # a seal comes before any run
                            "incident"})                                    # so may an incident


@dataclass
class Context:
    """Global options, shared by every verb through ``click.pass_obj``."""

    ledger_url: str
    fmt: str = "text"
    all_rows: bool = False
    creates: bool = False
    _ledger: Any = field(default=None, repr=False)
    _new_file: str | None = field(default=None, repr=False)  # a SQLite file this command created

    @property
    def as_json(self) -> bool:
        return self.fmt == "json"

    def ledger(self):
        """Open (once) and return the ledger named by ``--ledger``.

        A read verb pointed at a SQLite file that does not exist says so instead of creating it.
        """
        if self._ledger is None:
            from ..ledger import open_ledger

            path = self.ledger_url.removeprefix("sqlite:///").removeprefix("sqlite://")
            fresh = self.creates and "://" not in path and path != ":memory:" and not os.path.exists(path)
            self._ledger = open_ledger(self.ledger_url, create=self.creates)
            self._new_file = path if fresh else None
        return self._ledger

    def discard_if_empty(self) -> None:
        """After a failed command: remove the SQLite ledger it created if nothing was stored in it.

        A failed ``fluke ingest`` in an empty folder then leaves no ``fluke.db`` behind, and the
        next verb says "no ledger" rather than "the ledger has no runs".
        """
        if self._new_file is None or self._ledger is None:
            return
        try:
            held = sum(int(self._ledger.query(f"SELECT COUNT(*) FROM {table}")[0][0])
                       for table in ("runs", "documents", "grades"))
        except Exception:  # noqa: BLE001 - a ledger we cannot read is not ours to delete
            return
        if held:
            return
        self._ledger.close()
        for suffix in ("", "-wal", "-shm", "-journal", "-ingest"):
            with contextlib.suppress(OSError):
                os.remove(self._new_file + suffix)
        self._new_file = None

    def emit(self, result) -> None:
        """Print one result in the chosen format (text with colour on a terminal, Markdown or JSON)."""
        if self.fmt == "json":
            sys.stdout.write(result.to_json() + "\n")
        elif self.fmt in ("markdown", "github-summary"):
            sys.stdout.write(result.render(self.fmt))
        elif self.fmt == "github":
            sys.stdout.write(result.render("github") + "\n")
        else:
            result.print(all_rows=self.all_rows)


pass_context = click.make_pass_decorator(Context)


def _set_format(ctx: click.Context, param: click.Parameter, value):
    obj = ctx.find_object(Context)
    if isinstance(obj, Context) and value:
        if param.name == "as_json":
            obj.fmt = "json"
        elif param.name == "fmt":
            obj.fmt = value
        elif param.name == "all_rows":
            obj.all_rows = True
    return value


#: ``--json`` on a verb, equivalent to the global ``fluke --json VERB``.
json_option = click.option("--json", "as_json", is_flag=True, expose_value=False, callback=_set_format,
                           help="Print one JSON document (with format_version).")
#: ``--format`` on a verb: text (default), markdown (a pull-request comment) or json.
format_option = click.option("--format", "fmt",
                             type=click.Choice(["text", "markdown", "json", "github-summary", "github"]),
                             expose_value=False, callback=_set_format,
                             help="Output: text (default), markdown (a pull-request comment), json, "
                                  "github-summary (GitHub's job summary) or github (annotations, at most 50).")
#: ``--all``: print every row of long tables (by default the worst rows and a count of the rest).
all_option = click.option("--all", "all_rows", is_flag=True, expose_value=False, callback=_set_format,
                          help="Print every row of long tables (default: the worst rows and how many more).")


#: ``--unknown``: what a run whose outcome is unknown (``passed`` null) counts as, on every verb
#: that counts outcomes (``failure`` is accepted as another spelling of ``fail``).
unknown_option = click.option(
    "--unknown", type=click.Choice(list(ALIASES)), default="fail", show_default=True,
    help="A run whose outcome is unknown (a crashed harness, a parse error) counts as a failure, as harnesses "
         "count it, or is left out.")

#: ``--unknown`` of the verbs that can show both policies side by side and flag what flips.
unknown_both_option = click.option(
    "--unknown", type=click.Choice([*ALIASES, "both"]), default="fail", show_default=True,
    help="A run whose outcome is unknown (a crashed harness, a parse error) counts as a failure, as harnesses "
         "count it, or is left out; 'both' shows each side by side and flags an order that flips between them.")


def output_options(func):
    """``--json``, ``--format`` and ``--all`` on a verb that prints a result."""
    return json_option(format_option(all_option(func)))


def _fault_line(exc: BaseException) -> str:
    """One line for an environment fault or an unexpected error, saying what to do."""
    import errno

    if isinstance(exc, OSError):
        where = exc.filename or ""
        if exc.errno == errno.ENOSPC:
            return f"{where or 'the disk'}: no space left on device; nothing of this command was kept " \
                   "(free some space and run it again)"
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return f"{where}: cannot write here ({exc.strerror}); choose a writable path"
        if exc.errno == errno.ENOENT:
            return f"{where}: does not exist (create the folder first, or check the path)"
        return f"{where + ': ' if where else ''}{exc.strerror or exc}"
    if type(exc).__module__.startswith("sqlite3"):
        return f"the SQLite ledger cannot be used: {exc} (is it a fluke ledger, and is it intact?)"
    if type(exc).__module__.startswith("psycopg"):
        return f"PostgreSQL: {str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__} " \
               "(check the server and run the command again; nothing of an interrupted ingest was kept)"
    if isinstance(exc, MemoryError):
        return "out of memory; narrow the query (--version, --scenario) and run it again"
    return f"internal error: {type(exc).__name__}: {exc} (please report it; FLUKE_DEBUG=1 shows the traceback)"


def error_line(exc: BaseException) -> str:
    """The text of the one stderr line for ``exc``: redacted, controls visible, passwords in URLs hidden.

    >>> error_line(FlukeError("bad \\x1b[2J value sk_live_4eC39HqLyjWDarjtT1zdp7dc"))[:20]
    'fluke: error: bad \\\\x'
    """
    from ..format import safe

    text = str(exc) if isinstance(exc, FlukeError) else _fault_line(exc)
    return "fluke: error: " + safe(text, newlines=False)


@contextlib.contextmanager
def cli_errors(ctx: click.Context | None = None) -> Iterator[None]:
    """Turn any fault into one line on stderr and exit code 2 (1 stays for a failed gate).

    A ledger file the failed command created and left empty is removed (see :meth:`Context.discard_if_empty`).
    """
    try:
        with _one_line():
            yield
    except BaseException as exc:
        obj = ctx.obj if ctx is not None else None
        code = exc.code if isinstance(exc, SystemExit) else getattr(exc, "exit_code", 2)
        if isinstance(obj, Context) and code not in (0, None):
            obj.discard_if_empty()
        raise


@contextlib.contextmanager
def _one_line() -> Iterator[None]:
    """The fault handling of :func:`cli_errors`."""
    try:
        yield
    except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
        raise
    except BrokenPipeError:  # `fluke runs | head`: the reader left; say nothing
        with contextlib.suppress(Exception):
            sys.stdout = open(os.devnull, "w")
        sys.exit(0)
    except KeyboardInterrupt:
        click.echo("fluke: interrupted; nothing half-written was kept", err=True)
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - the one place every fault becomes one line
        if os.environ.get("FLUKE_DEBUG") and not isinstance(exc, FlukeError):
            raise
        click.echo(error_line(exc), err=True)
        sys.exit(2)


class _Bar:
    """A transient rich progress bar on stderr: one task per file, or one for a run of N."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TextColumn("{task.fields[note]}"), TimeElapsedColumn(),
                                 console=Console(stderr=True, markup=False, highlight=False), transient=True)

    def for_file(self, path: str):
        from ..format import safe

        task = self.progress.add_task(safe(f"ingesting {path}", newlines=False), total=None, note="")
        return lambda n: self.progress.update(task, completed=n)

    def for_runs(self, label: str = "running"):
        task = self.progress.add_task(label, total=None, note="")
        raised = [0]

        def tick(done: int, total: int, result: Any) -> None:
            raised[0] += getattr(getattr(result, "run", None), "error", None) is not None
            self.progress.update(task, completed=done, total=total,
                                 note=f"{raised[0]} raised" if raised[0] else "")
        return tick

    def for_total(self, label: str):
        """``tick(done, total)`` for work counted in runs."""
        task = self.progress.add_task(label, total=None, note="")
        return lambda done, total: self.progress.update(task, completed=done, total=total)


@contextlib.contextmanager
def progress_bar(*, enabled: bool) -> Iterator[_Bar | None]:
    """A progress bar on stderr when it is a terminal (``None`` otherwise)."""
    if not enabled:
        yield None
        return
    bar = _Bar()
    with bar.progress:
        yield bar
