"""One base exception for fluke, and named subclasses for each condition.

Every message says what was seen, where, and what to do about it. The CLI turns any
:class:`FlukeError` into one line on stderr and exit code 2.

>>> err = InputError("runs.jsonl", "line 3", "outcome.reward", "expected a number, got 'high'")
>>> str(err)
"runs.jsonl: line 3: field outcome.reward: expected a number, got 'high'"
"""

from __future__ import annotations


class FlukeError(Exception):
    """Base class of every error fluke raises on purpose."""


class InputError(FlukeError, ValueError):
    """Bad input: names the file, the record and the field, and says what to do."""

    def __init__(self, file: str | None, record: str | None, field: str | None, message: str,
                 *, hint: str | None = None) -> None:
        self.file, self.record, self.field, self.message, self.hint = file, record, field, message, hint
        parts = [p for p in (file, record) if p]
        if field:
            parts.append(f"field {field}")
        text = ": ".join(parts + [message])
        if hint:
            text += f" ({hint})"
        super().__init__(text)


class FormatVersionError(InputError):
    """A stored record was written by a newer fluke than this one."""


class SpecError(FlukeError, ValueError):
    """A grading spec is invalid; raised before any agent runs."""


class LedgerError(FlukeError):
    """The ledger cannot be opened, migrated or queried as asked."""


class SelectorError(FlukeError, LookupError):
    """A version or run selector matched nothing, or more than one thing."""


class MissingDependency(FlukeError, ImportError):
    """An optional dependency is needed; the message carries the install command."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        super().__init__(f"{purpose} needs the '{package}' package: pip install 'fluke[{extra}]'")


def require(module: str, *, package: str, extra: str, purpose: str):
    """Import an optional dependency lazily, or raise :class:`MissingDependency`.

    >>> require("json", package="json", extra="x", purpose="reading JSON").__name__
    'json'
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingDependency(package, extra, purpose) from exc


class UsageError(FlukeError, ValueError):
    """An option or argument that cannot be used as given (a level outside (0, 1), too few replicates)."""
