"""What the database drivers raise, as one line that names the ledger and says what to do.

>>> import sqlite3
>>> str(sqlite_fault("runs.db", sqlite3.OperationalError("database or disk is full")))
'runs.db: the disk is full (database or disk is full); nothing of this write was kept. Free some space and run it again'
"""

from __future__ import annotations

from ..errors import LedgerError


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def sqlite_fault(name: str, exc: Exception) -> LedgerError | None:
    """The :class:`LedgerError` for a :mod:`sqlite3` error, or None for any other exception."""
    import sqlite3

    if not isinstance(exc, sqlite3.Error):
        return None
    text = _first_line(exc)
    low = text.lower()
    if "disk is full" in low or "disk i/o error" in low:
        what = "the disk is full" if "full" in low else "the disk failed a write"
        return LedgerError(f"{name}: {what} ({text}); nothing of this write was kept. "
                           "Free some space and run it again")
    if "readonly" in low or "read-only" in low:
        return LedgerError(f"{name}: cannot be written ({text}); copy it somewhere writable "
                           "or choose another --ledger")
    if "locked" in low or "busy" in low:
        return LedgerError(f"{name}: another process is writing to it ({text}); "
                           "run this again when that has finished")
    if "malformed" in low or "not a database" in low or "corrupt" in low:
        return LedgerError(f"{name}: is damaged ({text}); restore it from a backup "
                           "(or try: sqlite3 FILE .recover)")
    if "unable to open" in low:
        return LedgerError(f"{name}: cannot be opened ({text}); check the path and its permissions")
    return LedgerError(f"{name}: the ledger failed ({text})")


def postgres_fault(name: str, exc: Exception) -> LedgerError | None:
    """The :class:`LedgerError` for a psycopg error, or None for any other exception.

    >>> import psycopg
    >>> lost = psycopg.OperationalError("server closed the connection")
    >>> str(postgres_fault("postgresql://me:[REDACTED]@db/evals", lost))[:74]
    'postgresql://me:[REDACTED]@db/evals: the connection to PostgreSQL was lost'
    >>> postgres_fault("db", ValueError("x")) is None
    True
    """
    try:
        import psycopg
    except ImportError:   # pragma: no cover - only PostgreSQL ledgers call this
        return None
    if not isinstance(exc, psycopg.Error):
        return None
    text = _first_line(exc)
    if isinstance(exc, psycopg.errors.DiskFull):
        return LedgerError(f"{name}: the PostgreSQL server's disk is full ({text}); nothing of this write "
                           "was kept. Free some space and run it again")
    if isinstance(exc, psycopg.errors.DeadlockDetected):
        return LedgerError(f"{name}: PostgreSQL broke a deadlock between concurrent ingests ({text}); "
                           "nothing of this ingest was kept. Run it again")
    if isinstance(exc, psycopg.OperationalError):   # the server went away, or shut the session
        return LedgerError(f"{name}: the connection to PostgreSQL was lost ({text}); nothing of this write "
                           "was kept. Check the server and run it again")
    return LedgerError(f"{name}: PostgreSQL refused a statement ({text})")
