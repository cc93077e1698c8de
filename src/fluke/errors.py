"""One base exception for fluke, and named subclasses for each condition.

Every message says what was seen, where, and what to do about it. The CLI turns any
:class:`FlukeError` into one line on stderr and exit code 2.

>>> err = InputError("runs.jsonl", "line 3", "outcome.reward", "expected a number, got 'high'")
>>> str(err)
"runs.jsonl: line 3: field outcome.reward: expected a number, got 'high'"

A message never carries a secret: every string given to an error is redacted first (a
value quoted from a bad record, a ledger URL with its password).

>>> str(InputError("a.jsonl", "line 2", "trial", "got 'AKIAIOSFODNN7EXAMPLE'"))
"a.jsonl: line 2: field trial: got '[REDACTED:aws-key-id]'"
"""

from __future__ import annotations


def redact_text(text: str) -> str:
    """:func:`fluke._redact.redact_text`, imported when an error is first made: the patterns it
    compiles (and gitleaks' rules) cost a verb that raises nothing its start-up."""
    from ._redact import redact_text as redact   # plain ``re``: keeps this module free of pydantic

    return redact(text)


def _safe(text: str | None) -> str | None:
    """Redacted, with every control character (a newline too) shown as an escape: the error
    prints as one line whatever a hostile record put in a field name or value."""
    from .format import visible   # plain ``re`` too

    return visible(redact_text(text), newlines=False) if text else text


class FlukeError(Exception):
    """Base class of every error fluke raises on purpose; its string arguments are redacted."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact_text(a) if isinstance(a, str) else a for a in args))


class InputError(FlukeError, ValueError):
    """Bad input: names the file, the record and the field, and says what to do."""

    def __init__(self, file: str | None, record: str | None, field: str | None, message: str,
                 *, hint: str | None = None) -> None:
        file, record, field, message, hint = (_safe(v) for v in (file, record, field, message, hint))
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
    """The ledger cannot be opened, migrated or queried as asked.

    Its message is one line, whatever a stored run holds:

    >>> str(LedgerError("stored run ab12: field \\n: bad"))
    'stored run ab12: field \\\\x0a: bad'
    """

    def __init__(self, *args: object) -> None:
        super().__init__(*(_safe(a) if isinstance(a, str) else a for a in args))


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


class UsageTypeError(UsageError, TypeError):
    """An argument of the wrong kind (a prior that is not a Prior, an rng that is not a Generator)."""


class EmptyLedgerError(LedgerError):
    """The ledger holds no runs: every verb that needs runs says so in these words."""

    def __init__(self, where: str | None = None) -> None:
        prefix = f"{where}: " if where else ""
        super().__init__(f"{prefix}the ledger has no runs; add some with: fluke ingest FILE")


class InputTypeError(InputError, TypeError):
    """Bad input of the wrong type: a value a run cannot hold, an agent's unusable return."""


class ClaimFailed(FlukeError, AssertionError):
    """A claim about runs did not hold (``fluke.expect``): the message says what it rests on.

    ``claim`` is the :class:`fluke.analysis.Claim`; ``status`` is "fails" or "too small to tell".
    """

    def __init__(self, claim) -> None:
        super().__init__(claim.message())
        self.claim = claim


class InconclusiveClaim(UserWarning):
    """A claim too small to tell, let pass by a declared ``on_inconclusive: warn`` policy.

    The message is the claim's, with the runs that would settle it."""


class TooLargeError(UsageError):
    """A request would need more memory than the machine has: said before starting, with a
    narrower query to ask instead. ``need`` and ``have`` are in bytes."""

    def __init__(self, message: str, need: int, have: int) -> None:
        super().__init__(message)
        self.need, self.have = need, have
