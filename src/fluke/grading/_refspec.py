"""Checking a spec's reference keys before any run: tools, argument paths, matchers, callables.

>>> from fluke.grading import load_spec
>>> load_spec({"reference": [{"tool": "cancel", "args": {"reservation_id": "X1"}}],
...            "match": {"cancel": {"reservaton_id": "case_insensitive"}}})
Traceback (most recent call last):
...
fluke.errors.SpecError: spec: field match.cancel.reservaton_id: no expected cancel call has argument 'reservaton_id'
(did you mean 'reservation_id'?)
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any, Callable

from ._matchers import check_matcher

#: The reference modes that compare state-changing calls only (the spec's ``writes``).
STATE_MODES = ("state", "state_ordered")


def _suggest(word: str, choices: Any) -> str:
    from ._spec import suggest

    return suggest(word, choices)


def _import(name: str, base: Path | None) -> Callable:
    """``package.module:function``, or ``function`` in the module beside the spec file."""
    if ":" in name:
        module_name, _, attr = name.partition(":")
        module = importlib.import_module(module_name)
    else:
        if base is None:
            raise LookupError("a bare function name needs a spec file with a Python module beside it "
                              "(airline.py for airline.yaml); or write package.module:function, or "
                              "pass the function itself in a dict spec")
        path = base.with_suffix(".py")
        if not path.exists():
            raise LookupError(f"the spec's module {path} does not exist")
        loaded = importlib.util.spec_from_file_location(f"fluke_spec_{path.stem}", path)
        module = importlib.util.module_from_spec(loaded)
        sys.modules[loaded.name] = module   # so its dataclasses and pickles can find it
        loaded.loader.exec_module(module)   # the spec's own code, trusted like the spec
        attr = name
    fn = module
    for part in attr.split("."):
        fn = getattr(fn, part)
    if not callable(fn):
        raise LookupError(f"{name} is not callable")
    return fn


def resolve_callables(source: dict, base: Path | None) -> tuple[dict, dict[str, Callable], list[str]]:
    """Replace functions in ``source["match"]`` by their names and resolve every
    ``{callable: name}``: the source to validate, the functions by name, and the problems."""
    table = source.get("match")
    if not isinstance(table, dict):
        return source, {}, []
    found: dict[str, Callable] = {}
    problems: list[str] = []
    clean: dict = {}
    for tool, rules in table.items():
        if not isinstance(rules, dict):
            clean[tool] = rules
            continue
        clean[tool] = {}
        for path, rule in rules.items():
            if callable(rule):
                name = f"{getattr(rule, '__module__', '?')}:{getattr(rule, '__qualname__', repr(rule))}"
                found[name] = rule
                rule = {"callable": name}
            elif isinstance(rule, dict) and isinstance(rule.get("callable"), str) and rule["callable"] not in found:
                try:
                    found[rule["callable"]] = _import(rule["callable"], base)
                except Exception as exc:  # an import runs user code: any failure is the spec's
                    problems.append(f"field match.{tool}.{path}.callable: cannot load {rule['callable']!r} "
                                    f"({type(exc).__name__}: {exc})")
            clean[tool][path] = rule
    return {**source, "match": clean}, found, problems


def reference_problems(m: Any, max_group: int) -> list[str]:
    """Every problem with the reference keys of a validated spec model."""
    problems: list[str] = []
    vocab = m.tools
    given = m.reference is not None
    if not given:
        for key, default in (("reference_mode", "superset"), ("reference_failed_ok", False),
                             ("reference_ignore", []), ("match", {}), ("writes", []),
                             ("reference_failed_writes", "ignore")):
            if getattr(m, key) != default:
                problems.append(f"field {key}: given without a reference; add reference: gold or a list of calls")
        return problems
    state = m.reference_mode in STATE_MODES
    writes = set(m.writes)
    problems += _writes_problems(m, state, vocab)
    known: dict[str, set[str]] = {}     # tool -> argument names the reference gives it
    if m.reference != "gold":
        if not m.reference:
            problems.append("field reference: is empty; list the expected calls, or write reference: gold")
        for i, item in enumerate(m.reference):
            calls = item if isinstance(item, list) else [item]
            if isinstance(item, list) and not item:
                problems.append(f"field reference.{i}: an expected turn with no calls")
            if len(calls) > max_group:
                problems.append(f"field reference.{i}: {len(calls)} calls in one expected turn; at most "
                                f"{max_group} (split it, or use reference_mode: unordered)")
            for j, call in enumerate(calls):
                where = f"reference.{i}" + (f".{j}" if isinstance(item, list) else "")
                if call.tool in m.reference_ignore:
                    problems.append(f"field {where}.tool: {call.tool!r} is in reference_ignore, so no "
                                    "call could satisfy it")
                if state and writes and call.tool not in writes:
                    problems.append(f"field {where}.tool: {call.tool!r} is not in writes, and reference_mode "
                                    f"{m.reference_mode} compares writes only (add it to writes, or drop the call)")
                if vocab and call.tool not in vocab:
                    problems.append(f"field {where}.tool: tool {call.tool!r} is not in tools"
                                    f"{_suggest(call.tool, vocab)}")
                known.setdefault(call.tool, set()).update(call.args)
    for i, name in enumerate(m.reference_ignore):
        if vocab and name not in vocab:
            problems.append(f"field reference_ignore.{i}: tool {name!r} is not in tools{_suggest(name, vocab)}")
    for tool, rules in m.match.items():
        if vocab and tool not in vocab:
            problems.append(f"field match.{tool}: tool {tool!r} is not in tools{_suggest(tool, vocab)}")
            continue
        if known and tool not in known:
            problems.append(f"field match.{tool}: no expected call is to {tool!r}{_suggest(tool, known)}")
            continue
        for path, rule in rules.items():
            head = path.split(".", 1)[0]
            if tool in known and path != "*" and head not in known[tool] and rule != "ignore":
                problems.append(f"field match.{tool}.{path}: no expected {tool} call has argument "
                                f"{head!r}{_suggest(head, known[tool])}")
            wrong = check_matcher(rule)
            if wrong:
                problems.append(f"field match.{tool}.{path}: {wrong}")
    return problems


def _writes_problems(m: Any, state: bool, vocab: list[str] | None) -> list[str]:
    """The problems with ``writes`` and ``reference_failed_writes`` of a spec with a reference."""
    problems: list[str] = []
    if state and not m.writes:
        problems.append(f"field reference_mode: {m.reference_mode} compares the calls that change state; "
                        "list those tools in writes (writes: [book_reservation, cancel_reservation, ...])")
    if not state:
        if m.writes:
            problems.append(f"field writes: only reference_mode state or state_ordered reads it "
                            f"(reference_mode is {m.reference_mode})")
        if m.reference_failed_writes != "ignore":
            problems.append("field reference_failed_writes: only reference_mode state or state_ordered reads it "
                            f"(reference_mode is {m.reference_mode})")
    seen: set[str] = set()
    for i, name in enumerate(m.writes):
        if vocab and name not in vocab:
            problems.append(f"field writes.{i}: tool {name!r} is not in tools{_suggest(name, vocab)}")
        if name in m.reference_ignore:
            problems.append(f"field writes.{i}: {name!r} is also in reference_ignore, so it would never be "
                            "compared; keep it in one of the two")
        if name in seen:
            problems.append(f"field writes.{i}: {name!r} is listed twice")
        seen.add(name)
    return problems
