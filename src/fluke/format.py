"""How fluke writes numbers and untrusted strings for people: one formatter for each kind.

Every surface (the terminal, Markdown, the HTML report, the library's own statements) formats
p-values, probabilities and shares through these, so the same number reads the same everywhere.

>>> fmt_p(4.76e-07), fmt_p(0.0312), fmt_p(float("nan"))
('<0.001', '0.031', '—')
>>> visible("ok \\x1b[2J done\\x07")
'ok \\\\x1b[2J done\\\\x07'
>>> sorted(["a/10", "a/2", "b"], key=natural_key)
['a/2', 'a/10', 'b']
"""

from __future__ import annotations

import math
import re

__all__ = ["describe_unknowns", "fmt_count_share", "fmt_num", "fmt_p", "fmt_pct", "fmt_points", "fmt_prob", "fmt_share",
           "natural_key", "safe", "visible"]


def _undefined(x) -> bool:
    return x is None or (isinstance(x, float) and not math.isfinite(x))


def fmt_p(p: float | None) -> str:
    """A p- or q-value with an honest floor: never ``0.000``, never scientific notation.

    >>> fmt_p(0.0004), fmt_p(0.9999), fmt_p(None)
    ('<0.001', '1.000', '—')
    """
    if _undefined(p):
        return "—"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def fmt_prob(p: float | None, digits: int = 3) -> str:
    """A probability that never prints as a certainty it is not: floors and ceilings at the last digit.

    >>> fmt_prob(0.00001), fmt_prob(0.4686), fmt_prob(0.99996), fmt_prob(0.004, 2), fmt_prob(1.0)
    ('<0.001', '0.469', '>0.999', '<0.01', '1.000')
    """
    if _undefined(p):
        return "—"
    step = 10.0 ** -digits
    if p == 0.0 or p == 1.0:  # exact (no runs can move it): print it as it is
        return f"{p:.{digits}f}"
    if p < step:
        return f"<{step:.{digits}f}"
    if p > 1 - step:
        return f">{1 - step:.{digits}f}"
    return f"{p:.{digits}f}"


def fmt_is(formatted: str) -> str:
    """A formatted number after its name, with its relation: ``= 0.344``, ``< 0.001``, ``> 0.999``.

    >>> "P(θ > 0.9) " + fmt_is(fmt_prob(0.00001)), "p " + fmt_is(fmt_p(0.031))
    ('P(θ > 0.9) < 0.001', 'p = 0.031')
    """
    if formatted[:1] in "<>" and len(formatted) > 1:
        return f"{formatted[0]} {formatted[1:]}"
    return f"= {formatted}"


def fmt_pct(share: float | None, digits: int = 0) -> str:
    """A share as a percentage ('—' when undefined).

    >>> fmt_pct(0.4712), fmt_pct(0.4712, 1), fmt_pct(None)
    ('47%', '47.1%', '—')
    """
    if _undefined(share):
        return "—"
    return f"{100 * share:.{digits}f}%"


def fmt_share(k: int, n: int, digits: int = 1) -> str:
    """A percentage with its counts beside it; '—' when there is no denominator.

    >>> fmt_share(1, 3), fmt_share(0, 0), fmt_share(2, 3, 0)
    ('33.3% (1/3)', '— (0/0)', '67% (2/3)')
    """
    return f"{fmt_pct(k / n if n else None, digits)} ({k}/{n})"


def fmt_count_share(k: int, n: int) -> str:
    """:func:`fmt_share` with whole percentages (the report's tables).

    >>> fmt_count_share(1, 3)
    '33% (1/3)'
    """
    return fmt_share(k, n, 0)


def fmt_num(x: float | None, digits: int = 3) -> str:
    """A number to fixed digits, '—' when undefined.

    >>> fmt_num(0.12345), fmt_num(float("inf"))
    ('0.123', '—')
    """
    return "—" if _undefined(x) else f"{x:.{digits}f}"


def fmt_points(x: float | None, digits: int = 1, *, sign: bool = True) -> str:
    """A difference of two shares in percentage points.

    >>> fmt_points(-0.0512), fmt_points(0.03, sign=False), fmt_points(None)
    ('-5.1 points', '3.0 points', '—')
    """
    if _undefined(x):
        return "—"
    return f"{100 * x:{'+' if sign else ''}.{digits}f} points"


def natural_key(text: str) -> list:
    """Sort key that orders embedded numbers by value ('a/2' before 'a/10').

    >>> sorted(["a1", "1a", "a/10", "a/9"], key=natural_key)
    ['1a', 'a1', 'a/9', 'a/10']
    """
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text)]


# C0 controls but tab and newline, DEL, and the C1 range (0x9b is a one-byte CSI on some terminals).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str, *, newlines: bool = True) -> str:
    """``text`` with every control character (ESC, BEL, CR, C1, bidi overrides) shown as an escape.

    A string that came from a run can then never move the cursor, clear the screen, set the
    clipboard (OSC 52) or plant a link (OSC 8). With ``newlines=False`` newlines and tabs are
    escaped too (a table cell, an error line).

    >>> visible("a\\rb"), visible("x\\ny", newlines=False)
    ('a\\\\x0db', 'x\\\\x0ay')
    """
    if not isinstance(text, str):
        text = str(text)
    out = _CONTROL.sub(_escape, text)
    if not newlines:
        out = out.replace("\n", "\\x0a").replace("\t", "\\x09")
    return out


def safe(text: str, *, newlines: bool = True) -> str:
    """What every human-readable output does to a string: redact secrets, then make controls visible.

    >>> safe("key AKIAIOSFODNN7EXAMPLE \\x1b]52;c;ZXZpbA==\\x07")
    'key [REDACTED:aws-key-id] \\\\x1b]52;c;ZXZpbA==\\\\x07'
    """
    from ._redact import redact_text

    return visible(redact_text(text if isinstance(text, str) else str(text)), newlines=newlines)

def describe_unknowns(unknowns: int, policy: str) -> str:
    """The phrase for ``unknowns`` under ``policy``.

    >>> describe_unknowns(0, "fail")
    'no unknown outcomes'
    """
    if unknowns == 0:
        return "no unknown outcomes"
    noun = "outcome" if unknowns == 1 else "outcomes"
    what = "counted as failures" if policy == "fail" else "left out"
    if unknowns == 1 and policy == "fail":
        what = "counted as a failure"
    return f"{unknowns} unknown {noun} {what}"
