"""Trajectory specs: what a run's path must and must not do, validated before anything runs.

A spec comes from a Python dict or a YAML, JSON or TOML file. Every problem is reported at
once, each naming its field, and a misspelled key or tool gets a "did you mean". Nothing is
coerced: a string where a list belongs is an error (never split into characters), ``"3"``
is not a number, and a tool outside ``tools`` is an error.

>>> spec = load_spec({"tools": ["lookup", "refund"], "required": ["lookup"],
...                   "before": [["lookup", "refund"]], "severity": {"before": "soft"}})
>>> spec.severity_of("before"), spec.severity_of("forbidden")
('soft', 'hard')
>>> load_spec({"tools": ["lookup"], "forbiden": ["lookup"]})
Traceback (most recent call last):
...
fluke.errors.SpecError: spec: field forbiden: unknown key (did you mean 'forbidden'?)
"""

from __future__ import annotations

import difflib
import re
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import SpecError
from ..format import parse_problem
from ..record import digest
from ._reference import ReferencePlan
from ._refspec import reference_problems, resolve_callables

Severity = Literal["hard", "soft", "warn"]

#: Every check, with its default severity. The spec's ``severity`` table overrides any of them.
CHECKS: dict[str, str] = {
    "unknown_tool": "hard",   # a call to a tool outside the spec's vocabulary
    "required": "hard",       # a required tool never called successfully
    "forbidden": "hard",      # a forbidden tool called at all (even if the call failed)
    "before": "hard",         # b called before any successful a, for a pair [a, b]
    "max_steps": "soft",      # more agent tool calls than the budget
    "repeat": "soft",         # an identical call after the same call already succeeded
    "failing_loop": "soft",   # the same call failing N times in a row
    "args": "hard",           # an argument outside its allowed values or pattern
    "ungrounded": "warn",     # an identifier no user message or tool result supplied
    "taint": "hard",          # an identifier only untrusted tools supplied, in a privileged call
    "secret": "warn",         # a credential-shaped string in a call, a result or an agent message
    "run_error": "hard",      # the harness caught an exception: the run did not finish
    "reference": "hard",      # an expected call (the reference's, or the run's gold) not made
    "reference_extra": "hard",  # a call outside the reference, where the mode allows none
    "reference_order": "hard",  # an expected call made out of the reference's order
}
SEVERITIES = ("hard", "soft", "warn")


class ArgRule(BaseModel):
    """A rule on one argument of one tool: a list of allowed values, or a regular expression."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    allowed: list[str | int | float | bool | None] | None = None
    pattern: str | None = None


class RefCall(BaseModel):
    """One expected call in a spec's ``reference`` list."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    requestor: Literal["agent", "user"] = "agent"


class _SpecModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: str | None = None
    description: str | None = None
    tools: list[str] | None = None
    required: list[str] = Field(default_factory=list)
    forbidden: list[str] = Field(default_factory=list)
    before: list[list[str]] = Field(default_factory=list)
    failed_calls_count: bool = False
    max_steps: int | None = Field(default=None, ge=1)
    no_repeat: bool = False
    failing_loop: int | None = Field(default=3, ge=2)
    untrusted: list[str] = Field(default_factory=list)
    privileged: list[str] = Field(default_factory=list)
    ground: bool = True
    ground_ignore: list[str] = Field(default_factory=list)
    secrets: bool = True
    args: dict[str, dict[str, ArgRule]] = Field(default_factory=dict)
    severity: dict[str, str] = Field(default_factory=dict)
    reference: Literal["gold"] | list[RefCall | list[RefCall]] | None = None
    reference_mode: Literal["superset", "subset", "unordered", "in_order", "strict", "state",
                            "state_ordered"] = "superset"
    reference_failed_ok: bool = False
    reference_ignore: list[str] = Field(default_factory=list)
    match: dict[str, dict[str, Any]] = Field(default_factory=dict)
    writes: list[str] = Field(default_factory=list)
    reference_failed_writes: Literal["ignore", "count"] = "ignore"


#: Keys added after specs were first stored: left out of the body (and so the digest) while
#: at their defaults, so a spec without them keeps the digest its stored grades are under.
_LATER = {"reference": None, "reference_mode": "superset", "reference_failed_ok": False,
          "reference_ignore": [], "match": {}, "writes": [], "reference_failed_writes": "ignore"}
#: Deepest nesting a spec may have (a deeper one is refused, not a RecursionError).
MAX_DEPTH = 64
#: Most calls in one expected turn (the ordered pairing is exponential in it).
MAX_GROUP = 8

KEYS = tuple(_SpecModel.model_fields)

_TYPE_WORDS = {
    "list_type": "a list", "string_type": "a string", "int_type": "an integer",
    "bool_type": "true or false", "dict_type": "a mapping", "model_type": "a mapping",
    "float_type": "a number",
}


class Spec:
    """A validated spec. Build one with :func:`load_spec`.

    ``digest`` is the SHA-256 of the canonical JSON of :attr:`body` (every field, defaults
    included), so the same rules written in YAML or in a dict have the same digest, and a
    stored grade can always be traced to, and re-created from, the spec that produced it.
    """

    __slots__ = ("_model", "__dict__")

    def __init__(self, model: _SpecModel, callables: dict[str, Any] | None = None) -> None:
        self._model = model
        self._callables = callables or {}

    def __getattr__(self, name: str) -> Any:
        if name in KEYS:
            return getattr(self._model, name)
        raise AttributeError(name)

    def __repr__(self) -> str:
        return f"Spec(digest={self.digest[:12]!r}, name={self._model.name!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Spec) and other.digest == self.digest

    def __hash__(self) -> int:
        return hash(self.digest)

    @cached_property
    def body(self) -> dict[str, Any]:
        """The spec as a plain JSON-able dict (what the ledger stores)."""
        body = self._model.model_dump(mode="json")
        for key, default in _LATER.items():
            if body[key] == default:
                del body[key]
        return body

    @cached_property
    def digest(self) -> str:
        """SHA-256 of the canonical JSON of :attr:`body`."""
        return digest(self.body)

    def severity_of(self, check: str) -> str:
        """The severity of ``check`` under this spec (its override, else the default)."""
        return self._model.severity.get(check, CHECKS[check])

    @property
    def taint_on(self) -> bool:
        """Taint runs only when the spec names both untrusted and privileged tools."""
        return bool(self._model.untrusted) and bool(self._model.privileged)

    @cached_property
    def compiled(self) -> "_Compiled":
        return _Compiled(self)


class _Compiled:
    """Everything grading needs, precomputed once per spec (sets, severities, regexes)."""

    def __init__(self, spec: Spec) -> None:
        m = spec._model
        self.vocab = frozenset(m.tools) if m.tools else None
        self.required = tuple(dict.fromkeys(m.required))
        self.forbidden = frozenset(m.forbidden)
        self.before = tuple((a, b) for a, b in m.before)
        self.before_by_b: dict[str, tuple[str, ...]] = {}
        for a, b in self.before:
            self.before_by_b[b] = self.before_by_b.get(b, ()) + (a,)
        self.sev = {check: spec.severity_of(check) for check in CHECKS}
        self.untrusted = frozenset("tool:" + t for t in m.untrusted)
        self.privileged = frozenset(m.privileged)
        self.taint = spec.taint_on
        self.provenance = m.ground or self.taint
        self.ground_ignore = tuple(m.ground_ignore)
        self._exempt: dict[tuple[str, str], bool] = {}
        self.args = {tool: tuple((path.split("."), rule,
                                  re.compile(rule.pattern) if rule.pattern is not None else None)
                                 for path, rule in rules.items())
                     for tool, rules in m.args.items()}
        self.reference = ReferencePlan(m, spec._callables) if m.reference is not None else None


    def exempt(self, tool: str, path: str) -> bool:
        """Is ``tool.path`` exempt from the ungrounded check (``ground_ignore``)?"""
        key = (tool, path)
        hit = self._exempt.get(key)
        if hit is None:
            from fnmatch import fnmatchcase

            name = f"{tool}.{path}"
            hit = any(fnmatchcase(name, pat) for pat in self.ground_ignore)
            if len(self._exempt) < 100_000:
                self._exempt[key] = hit
        return hit


def suggest(word: str, choices: Any) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices``, or ''."""
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _where(loc: tuple) -> str:
    return ".".join(str(p) for p in loc) or "(top level)"


def _describe(err: dict) -> str:
    kind, loc, value = err["type"], err["loc"], err.get("input")
    if kind == "extra_forbidden":
        parent = loc[:-1]
        if not parent:
            choices = KEYS
        elif len(parent) == 3 and parent[0] == "args":
            choices = ArgRule.model_fields
        else:
            choices = ()
        return f"field {_where(loc)}: unknown key{suggest(loc[-1], choices)}"
    if kind in _TYPE_WORDS:
        wanted = _TYPE_WORDS[kind]
        got = type(value).__name__
        extra = ""
        if kind == "list_type" and isinstance(value, str):
            extra = f"; write [{value!r}] for a list of one (a string is never split into characters)"
        return f"field {_where(loc)}: expected {wanted}, got {got} {value!r}{extra}"
    return f"field {_where(loc)}: {err['msg']} (got {value!r})"


class _TooDeep(Exception):
    pass


def _detuple(value: Any, depth: int = 0) -> Any:
    """Tuples in a Python dict spec are lists (``before=[("a", "b")]`` reads naturally).
    Nesting past :data:`MAX_DEPTH` raises ``_TooDeep`` (no spec needs it; recursion would fail)."""
    if depth > MAX_DEPTH:
        raise _TooDeep
    if isinstance(value, (tuple, list)):
        return [_detuple(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {k: _detuple(v, depth + 1) for k, v in value.items()}
    return value


def _semantic(m: _SpecModel) -> list[str]:
    problems: list[str] = []
    vocab = m.tools
    if vocab is not None:
        if not vocab:
            problems.append("field tools: is empty; list the tools the agent may call, or leave it out")
        dupes = sorted({t for t in vocab if vocab.count(t) > 1})
        if dupes:
            problems.append(f"field tools: names {dupes} more than once")

    def tool(field: str, name: str) -> None:
        if vocab and name not in vocab:
            problems.append(f"field {field}: tool {name!r} is not in tools{suggest(name, vocab)}")

    for key in ("required", "forbidden", "untrusted", "privileged"):
        for i, name in enumerate(getattr(m, key)):
            tool(f"{key}.{i}", name)
    for i, pair in enumerate(m.before):
        if len(pair) != 2:
            problems.append(f"field before.{i}: expected a pair [a, b] (a must come before b), got {pair!r}")
            continue
        tool(f"before.{i}.0", pair[0])
        tool(f"before.{i}.1", pair[1])
        if pair[0] == pair[1]:
            problems.append(f"field before.{i}: a tool cannot come before itself ({pair[0]!r})")
    both = sorted(set(m.required) & set(m.forbidden))
    if both:
        problems.append(f"fields required and forbidden: both name {both}; no run could pass")
    for name, rules in m.args.items():
        tool(f"args.{name}", name)
        for path, rule in rules.items():
            where = f"args.{name}.{path}"
            if (rule.allowed is None) == (rule.pattern is None):
                problems.append(f"field {where}: give exactly one of 'allowed' or 'pattern'")
            if rule.pattern is not None:
                try:
                    re.compile(rule.pattern)
                except re.error as exc:
                    problems.append(f"field {where}.pattern: not a valid regular expression ({exc})")
    for i, pattern in enumerate(m.ground_ignore):
        tool_part = pattern.split(".", 1)[0]
        if "." not in pattern:
            problems.append(f"field ground_ignore.{i}: {pattern!r} is not tool.argument "
                            "(wildcards allowed, e.g. search_*.date or think.*)")
        elif vocab and not any(ch in tool_part for ch in "*?[") and tool_part not in vocab:
            problems.append(f"field ground_ignore.{i}: tool {tool_part!r} is not in tools"
                            f"{suggest(tool_part, vocab)}")
    for check, severity in m.severity.items():
        if check not in CHECKS:
            problems.append(f"field severity.{check}: unknown check{suggest(check, CHECKS)}; "
                            f"checks are {', '.join(CHECKS)}")
        if severity not in SEVERITIES:
            problems.append(f"field severity.{check}: {severity!r} is not a severity"
                            f"{suggest(severity, SEVERITIES)}; use hard, soft or warn")
    return problems + reference_problems(m, MAX_GROUP)


def _read_file(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(f"{path}: cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError as exc:
        raise SpecError(f"{path}: is not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset "
                        f"{exc.start}); save the spec as UTF-8") from None
    except ValueError:  # a NUL in the name: no such file can exist
        raise SpecError(f"{str(path)!r}: is not a file name (it holds a NUL character)") from None
    suffix = path.suffix.lower()
    try:
        if suffix in (".yaml", ".yml"):
            import yaml

            return yaml.safe_load(text)
        if suffix == ".toml":
            import tomllib

            return tomllib.loads(text)
        if suffix == ".json":
            import json

            return json.loads(text)
    except Exception as exc:  # each parser has its own error type; all mean "not parseable"
        raise SpecError(f"{path}: not valid {suffix[1:].upper()} ({parse_problem(exc)})") from None
    raise SpecError(f"{path}: unknown spec format {suffix or '(no suffix)'!r}; use .yaml, .yml, .json or .toml")


def load_spec(source: "dict[str, Any] | str | Path | Spec") -> Spec:
    """Validate a spec from a dict or a YAML/JSON/TOML file; raise SpecError listing every problem.

    >>> load_spec({"tools": ["a"], "required": "a"})
    Traceback (most recent call last):
    ...
    fluke.errors.SpecError: spec: field required: expected a list, got str 'a'; write ['a'] for a list of one (a
    string is never split into characters)
    >>> load_spec({"tools": ["lookup"], "forbidden": ["lokup"]})
    Traceback (most recent call last):
    ...
    fluke.errors.SpecError: spec: field forbidden.0: tool 'lokup' is not in tools (did you mean 'lookup'?)
    """
    if isinstance(source, Spec):
        return source
    label, base = "spec", None
    if isinstance(source, (str, Path)):
        label, base = str(source), Path(source)
        source = _read_file(base)
    if not isinstance(source, dict):
        raise SpecError(f"{label}: a spec is a mapping of keys (tools, required, ...), "
                        f"got {type(source).__name__}")
    try:
        plain = _detuple(source)
    except _TooDeep:
        raise SpecError(f"{label}: nested more than {MAX_DEPTH} levels deep; no spec needs that "
                        "(is it the right file?)") from None
    plain, callables, problems = resolve_callables(plain, base)
    try:
        model = _SpecModel.model_validate(plain)
    except ValidationError as exc:
        problems += [_describe(e) for e in exc.errors()]
    else:
        problems += _semantic(model)
    if problems:
        if len(problems) == 1:
            raise SpecError(f"{label}: {problems[0]}")
        raise SpecError(f"{label}: {len(problems)} problems:\n  - " + "\n  - ".join(problems))
    return Spec(model, callables)
