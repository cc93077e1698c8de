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

__all__ = ["bounded", "fluke_command", "fmt_count_share", "fmt_df", "fmt_interval", "fmt_is", "fmt_num", "fmt_p",
           "fmt_pct", "fmt_points", "fmt_prob", "fmt_range", "fmt_share", "fmt_share_interval", "md_escape",
           "natural_key", "parse_problem", "plural", "safe", "visible"]


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


def fmt_prob(p: float | None, digits: int = 3, *, exact: bool = False) -> str:
    """A probability that never prints as a certainty it is not: floors and ceilings at the last digit.

    A probability computed from finite data that comes out as exactly 0 or 1 (a posterior tail
    that underflows, a share of simulated draws that all agree) is printed as the bound it is,
    ``<0.001`` or ``>0.999``, like any other probability beyond the last digit. Only a caller
    that knows the value is exact (no runs could move it) passes ``exact=True`` and gets ``0``
    or ``1``.

    >>> fmt_prob(0.00001), fmt_prob(0.4686), fmt_prob(0.99996), fmt_prob(0.004, 2), fmt_prob(1.0)
    ('<0.001', '0.469', '>0.999', '<0.01', '>0.999')
    >>> fmt_prob(0.0), fmt_prob(1.0, exact=True), fmt_prob(0.0, 2, exact=True), fmt_prob(0.25, exact=True)
    ('<0.001', '1', '0', '0.250')
    """
    if _undefined(p):
        return "—"
    step = 10.0 ** -digits
    if exact and p in (0.0, 1.0):  # the caller knows no data could move it
        return f"{p:.0f}"
    if p < step:
        return f"<{step:.{digits}f}"
    if p > 1 - step:
        return f">{1 - step:.{digits}f}"
    return f"{p:.{digits}f}"


def fmt_is(name: str, value: float | None, *, kind: str = "prob", digits: int = 3, exact: bool = False) -> str:
    """``name`` stated with its value as a sentence reads it: ``p = 0.031``, ``p < 0.001``, never ``p = <0.001``.

    ``kind`` is ``"p"`` for a p- or q-value (:func:`fmt_p`) and ``"prob"`` for a probability
    (:func:`fmt_prob`, floored and ceiled at the last digit).

    >>> fmt_is("p", 0.0312, kind="p"), fmt_is("p", 4e-7, kind="p"), fmt_is("P(θ > 0.9)", 0.99996)
    ('p = 0.031', 'p < 0.001', 'P(θ > 0.9) > 0.999')
    >>> fmt_is("q", None, kind="p")
    'q = —'
    """
    text = fmt_p(value) if kind == "p" else fmt_prob(value, digits, exact=exact)
    if text[:1] in "<>":
        return f"{name} {text[0]} {text[1:]}"
    return f"{name} = {text}"


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``n`` and ``noun``, the noun in the plural unless ``n`` is one (never ``time(s)``).

    >>> plural(1, "time"), plural(3, "time"), plural(2, "body", "bodies"), plural(1_200, "run")
    ('1 time', '3 times', '2 bodies', '1,200 runs')
    """
    return f"{n:,} {noun if n == 1 else (many or noun + 's')}"


def fmt_range(low: int, high: int) -> str:
    """A range of whole numbers, one number when both ends agree (``24``, not ``24–24``).

    >>> fmt_range(4, 4), fmt_range(2, 5)
    ('4', '2–5')
    """
    return f"{low}" if low == high else f"{low}–{high}"


def fmt_interval(low: float | None, high: float | None, *, percent: bool = False, digits: int | None = None,
                 signed: bool = False) -> str:
    """An interval in the unit of the estimate it goes with: proportions to 3 digits, or percentages.

    A share printed as a percentage gets its interval as a percentage too; '—' when an end is
    undefined. ``signed`` writes each end with its sign (a difference, e.g. in points).

    >>> fmt_interval(0.4751, 0.6853), fmt_interval(0.4751, 0.6853, percent=True), fmt_interval(None, 1.0)
    ('[0.475, 0.685]', '[47.5%, 68.5%]', '—')
    >>> fmt_interval(-12.43, -5.51, digits=1, signed=True), fmt_interval(-0.02, 0.03, percent=True, signed=True)
    ('[-12.4, -5.5]', '[-2.0%, +3.0%]')
    """
    if _undefined(low) or _undefined(high):
        return "—"
    sign = "+" if signed else ""
    if percent:
        d = 1 if digits is None else digits
        return f"[{100 * low:{sign}.{d}f}%, {100 * high:{sign}.{d}f}%]"
    d = 3 if digits is None else digits
    return f"[{low:{sign}.{d}f}, {high:{sign}.{d}f}]"


def fmt_share_interval(k: int, n: int, low: float | None, high: float | None, digits: int = 1) -> str:
    """A share with its counts and its interval, both in percent; an interval of no width says why.

    An interval that collapses to one point (every run agrees, so a clustered standard error is
    zero) is not a certainty: it is printed as ``no spread``, not as ``[100.0%, 100.0%]``.

    >>> fmt_share_interval(116, 200, 0.4751, 0.6853)
    '58.0% (116/200) [47.5%, 68.5%]'
    >>> fmt_share_interval(11, 11, 1.0, 1.0)
    '100.0% (11/11) [no spread to measure]'
    """
    share = fmt_share(k, n, digits)
    if _undefined(low) or _undefined(high):
        return share
    if round(100 * (high - low), digits) == 0:
        return f"{share} [no spread to measure]"
    return f"{share} {fmt_interval(low, high, percent=True, digits=digits)}"


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


def fmt_df(df: float | None) -> str:
    """Degrees of freedom: three significant digits below 1,000 (Bell–McCaffrey's are fractional), whole
    and grouped from there, '—' when undefined.

    >>> fmt_df(4.3712), fmt_df(19999.0), fmt_df(float("nan"))
    ('4.37', '19,999', '—')
    """
    if _undefined(df):
        return "—"
    return f"{df:,.0f}" if abs(df) >= 1000 else f"{df:.3g}"


def fmt_points(x: float | None, digits: int = 1, *, sign: bool = True) -> str:
    """A difference of two shares in percentage points.

    >>> fmt_points(-0.0512), fmt_points(0.03, sign=False), fmt_points(None)
    ('-5.1 points', '3.0 points', '—')
    """
    if _undefined(x):
        return "—"
    return f"{100 * x:{'+' if sign else ''}.{digits}f} points"


def fmt_points_interval(low: float | None, high: float | None, digits: int = 1) -> str:
    """An interval of a difference of shares, in signed percentage points ('—' when undefined).

    >>> fmt_points_interval(-0.012, 0.0834), fmt_points_interval(float("nan"), 0.1)
    ('[-1.2, +8.3] points', '—')
    """
    if _undefined(low) or _undefined(high):
        return "—"
    return f"[{100 * low:+.{digits}f}, {100 * high:+.{digits}f}] points"


#: runs of digits, kept as parts by :func:`natural_key` (compiled once: a leaderboard sorts 10,000 names)
_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> list:
    """Sort key that orders embedded numbers by value ('a/2' before 'a/10').

    >>> sorted(["a1", "1a", "a/10", "a/9"], key=natural_key)
    ['1a', 'a1', 'a/9', 'a/10']
    """
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in _DIGITS.split(text)]


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


def parse_problem(exc: BaseException) -> str:
    """A parser's error as one readable line: where (line and column, from 1) and what.

    YAML's errors span several lines with a caret drawing; an error line shows ``\\x0a`` for
    each newline, so they are put in words instead.

    >>> import yaml
    >>> try:
    ...     yaml.safe_load("a: [1,\\n  b: {\\n")
    ... except yaml.YAMLError as exc:
    ...     print(parse_problem(exc))
    line 3, column 1: expected the node content, but found '<stream end>' (while parsing a flow node)
    >>> parse_problem(ValueError("Expecting value: line 1 column 1 (char 0)"))
    'Expecting value: line 1 column 1 (char 0)'
    """
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if mark is not None and problem:
        context = getattr(exc, "context", None)
        return f"line {mark.line + 1}, column {mark.column + 1}: {problem}" + (f" ({context})" if context else "")
    lines = [part.strip() for part in str(exc).splitlines() if part.strip()]
    return "; ".join(lines) or type(exc).__name__


#: The ledger a bare ``fluke VERB`` opens when neither ``--ledger`` nor ``FLUKE_LEDGER`` names one.
DEFAULT_LEDGER = "fluke.db"


def fluke_command(ledger, *args: str) -> str:
    """The ``fluke …`` line a hint prints, runnable where it is printed.

    ``ledger`` is the ledger the printing command used (a ledger object, its URL, or None).
    The line names it with ``--ledger`` unless a bare ``fluke`` would open it anyway (it is
    the default ``fluke.db``, or what ``FLUKE_LEDGER`` says); a password in a URL is hidden.
    Arguments are quoted for a POSIX shell; words in capitals (``FILE``, ``SPEC``) are
    placeholders and left as they are.

    >>> import os; os.environ.pop("FLUKE_LEDGER", None) and None
    >>> fluke_command("runs/sim.db", "compare", "a5601ef450f4", "001338f1ca6b")
    'fluke --ledger runs/sim.db compare a5601ef450f4 001338f1ca6b'
    >>> fluke_command("fluke.db", "believe", "--version", "model=gpt-4o"), fluke_command(None, "ingest", "FILE")
    ('fluke believe --version model=gpt-4o', 'fluke ingest FILE')
    >>> fluke_command("my runs.db", "summary", "--scenario", "airline/*")
    "fluke --ledger 'my runs.db' summary --scenario 'airline/*'"
    """
    import os
    import shlex

    from ._redact import redact_url

    url = getattr(ledger, "url", ledger)
    words = ["fluke"]
    if url and str(url) != os.environ.get("FLUKE_LEDGER", DEFAULT_LEDGER):
        words += ["--ledger", shlex.quote(redact_url(str(url)))]
    words += [a if a.isupper() else shlex.quote(a) for a in args]
    return " ".join(words)


# -- Markdown ----------------------------------------------------------------------------------
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~])")
#: ``@user`` and ``#123`` (``org/repo#123``, ``GH-123``) that GitHub would turn into a mention or
#: a reference: a zero-width space after the ``@``/``#`` keeps them text and notifies nobody.
_REFERENCE = re.compile(r"(@|\\#|(?<=GH)-)(?=[A-Za-z0-9])", re.IGNORECASE)
#: A word (no spaces: a scenario id, a version label) longer than this is cut in Markdown.
NAME_SHOWN = 120
#: A span longer than this is cut in Markdown (a long sentence of names).
SPAN_SHOWN = 2_000
_LONG_WORD = re.compile(r"\S{%d,}" % (NAME_SHOWN + 1))


def bounded(text: str) -> str:
    """``text`` with every word over :data:`NAME_SHOWN` characters, and the whole over
    :data:`SPAN_SHOWN`, cut with a marker saying how much was left out.

    >>> cut = bounded("scenario " + "x" * 500 + " failed")
    >>> len(cut.split()[1]), cut.split(" ", 2)[2]
    (101, '(+400 characters) failed')
    """
    text = _LONG_WORD.sub(lambda m: f"{m.group()[:NAME_SHOWN - 20]}… (+{len(m.group()) - NAME_SHOWN + 20} "
                                    "characters)", text)
    if len(text) > SPAN_SHOWN:
        text = f"{text[:SPAN_SHOWN - 40]}… (+{len(text) - SPAN_SHOWN + 40} characters)"
    return text


def md_escape(text: str) -> str:
    """A string made inert in GitHub Markdown: no emphasis, links, HTML, table breaks, mentions
    or issue references; long names cut (:func:`bounded`).

    >>> md_escape("a_b <img src=x> [x](y)")
    'a\\\\_b \\\\<img src=x\\\\> \\\\[x\\\\](y)'
    >>> md_escape("ask @octocat about #12")
    'ask @&#8203;octocat about \\\\#&#8203;12'
    """
    return _REFERENCE.sub(r"\1&#8203;", _MD_SPECIAL.sub(r"\\\1", bounded(safe(text, newlines=False))))
