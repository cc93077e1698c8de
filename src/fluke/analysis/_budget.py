"""The limit is said, not hit: refuse a request that would need more memory than there is.

A verb that must hold something per run (the report's explorer holds whole runs, grading a
grade per run, a comparison a reduction per run) estimates what it needs from the ledger's
counts (no run is read) times a per-run size, and compares it with the memory available to
this process: the smallest of ``MemAvailable`` in ``/proc/meminfo``, the cgroup's limit, and
``FLUKE_MEMORY_BUDGET`` (bytes, or with a K/M/G suffix) when set. Past it, the verb raises
:class:`fluke.errors.TooLargeError` naming the estimate, what is available, and a narrower
query, before it starts.

>>> import os
>>> os.environ["FLUKE_MEMORY_BUDGET"] = "10M"
>>> check_budget(1_000, "report", 4_000)   # 4 MB of 10: fine
4000000
>>> check_budget(1_000_000, "report", 40_000, hint="report on one version (--version)")
Traceback (most recent call last):
fluke.errors.TooLargeError: report on 1,000,000 runs would need about 37.3 GB of memory and 10.0 MB is available;
report on one version (--version)
>>> del os.environ["FLUKE_MEMORY_BUDGET"]
"""

from __future__ import annotations

import os

from ..errors import TooLargeError, UsageError

_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _parse(text: str) -> int:
    t = text.strip().upper().removesuffix("B")
    unit = t[-1:] if t[-1:] in _SUFFIX and t[-1:] else ""
    try:
        return int(float(t[: len(t) - len(unit)]) * _SUFFIX[unit])
    except ValueError:
        raise UsageError(f"FLUKE_MEMORY_BUDGET={text!r}: write bytes, or a number with K, M or G") from None


def available_memory() -> int | None:
    """Bytes this process may still use (None when nothing says): the smallest of the free memory,
    the cgroup limit less its usage, and ``FLUKE_MEMORY_BUDGET``.

    >>> m = available_memory(); m is None or m > 0
    True
    """
    found: list[int] = []
    budget = os.environ.get("FLUKE_MEMORY_BUDGET")
    if budget:
        found.append(_parse(budget))
    try:
        with open("/proc/meminfo") as fh:
            for row in fh:
                if row.startswith("MemAvailable:"):
                    found.append(int(row.split()[1]) * 1024)
                    break
    except OSError:
        pass
    try:
        with open("/sys/fs/cgroup/memory.max") as fh:
            limit = fh.read().strip()
        if limit != "max":
            with open("/sys/fs/cgroup/memory.current") as fh:
                found.append(int(limit) - int(fh.read().strip()))
    except (OSError, ValueError):
        pass
    return min(found) if found else None


def _size(n: float) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} bytes"


def check_budget(runs: int, what: str, per_run: int, *, hint: str = "narrow the query", extra: int = 0) -> int:
    """The estimated need (``runs × per_run + extra`` bytes: ``extra`` for what a verb holds besides
    its per-run reduction, such as the report's explorer); raises :class:`TooLargeError` past what is available.

    >>> os.environ["FLUKE_MEMORY_BUDGET"] = "1G"
    >>> check_budget(1_000_000, "report", 400, extra=1_000 * 47_600)
    447600000
    >>> del os.environ["FLUKE_MEMORY_BUDGET"]
    """
    need = int(runs) * int(per_run) + int(extra)
    have = available_memory()
    if have is not None and need > have:
        raise TooLargeError(f"{what} on {runs:,} runs would need about {_size(need)} of memory and "
                            f"{_size(have)} is available; {hint}", need, have)
    return need
