"""What every verb shares: the context object, JSON output, tables and error mapping.

>>> ctx = Context(ledger_url="fluke.db", as_json=True)
>>> ctx.as_json
True
"""

from __future__ import annotations

import contextlib
import math
import sys
from dataclasses import dataclass, field
from typing import Any, Iterator

import click
import orjson

from ..errors import FlukeError

#: The version of every JSON document fluke prints. Bump on an incompatible change.
JSON_FORMAT_VERSION = 1


@dataclass
class Context:
    """Global options, shared by every verb through ``click.pass_obj``."""

    ledger_url: str
    as_json: bool = False
    _ledger: Any = field(default=None, repr=False)

    def ledger(self):
        """Open (once) and return the ledger named by ``--ledger``."""
        if self._ledger is None:
            from ..ledger import open_ledger

            self._ledger = open_ledger(self.ledger_url)
        return self._ledger


pass_context = click.make_pass_decorator(Context)


def _set_json(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    if value and isinstance(ctx.find_object(Context), Context):
        ctx.find_object(Context).as_json = True
    return value


#: ``--json`` on a verb, equivalent to the global ``fluke --json VERB``.
json_option = click.option("--json", "as_json", is_flag=True, expose_value=False,
                           callback=_set_json, help="Print one JSON document (with format_version).")


def _default(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"cannot serialise {type(value).__name__}")


def _finite(value: Any) -> Any:
    """NaN and infinities are not JSON: print them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def emit_json(kind: str, payload: dict[str, Any]) -> None:
    """Print one JSON document: ``{"format_version": 1, "kind": ..., **payload}``."""
    doc = {"format_version": JSON_FORMAT_VERSION, "kind": kind, **payload}
    data = orjson.dumps(doc, default=_default, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY)
    data = orjson.dumps(_finite(orjson.loads(data)), option=orjson.OPT_INDENT_2)
    sys.stdout.write(data.decode() + "\n")


def console():
    """A rich console on stdout (imported lazily: rich is slow to import)."""
    from rich.console import Console

    return Console(highlight=False)


def fmt_p(p: float) -> str:
    """A p-value with an honest floor: never prints 0.000.

    >>> fmt_p(0.0004), fmt_p(0.0312), fmt_p(float("nan"))
    ('<0.001', '0.031', '—')
    """
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "—"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def fmt_share(k: int, n: int, digits: int = 1) -> str:
    """A percentage with its counts beside it; '—' when there is no denominator.

    >>> fmt_share(1, 3), fmt_share(0, 0)
    ('33.3% (1/3)', '— (0/0)')
    """
    if n == 0:
        return f"— ({k}/{n})"
    return f"{100 * k / n:.{digits}f}% ({k}/{n})"


@contextlib.contextmanager
def cli_errors() -> Iterator[None]:
    """Turn a :class:`FlukeError` into one line on stderr and exit code 2."""
    try:
        yield
    except FlukeError as exc:
        click.echo(f"fluke: error: {exc}", err=True)
        sys.exit(2)
