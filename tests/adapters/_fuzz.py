"""Mutating real framework output for the reader fuzz tests (``test_fuzz.py``).

A seed is a parsed real file (from ../shared/formats/samples or ../shared/data, cut down so
one input is a few kilobytes). Hypothesis draws every choice: which node of the tree to
change, how (replace it with a hostile value, delete it, wrap it, nest it 300 deep, ...),
and optionally a byte-level change of the serialised text (truncation, invalid UTF-8, a
lone surrogate escape, a NUL). So a failure shrinks to a small edit of a real file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from ..conftest import DATA, FORMATS

SAMPLES = FORMATS / "samples"
TAU_AIRLINE = DATA / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json"
TAU2 = DATA / "tau2-bench" / "src" / "experiments" / "model_training" / "results"

#: Values that broke readers before: wrong types, integers past 64 bits, NUL and control
#: characters, markup, empty containers, deep nesting.
_SCALARS = st.one_of(
    st.none(), st.booleans(),
    st.sampled_from([0, -1, 1, 2 ** 31, 2 ** 63 - 1, 2 ** 63, -(2 ** 63) - 1, 2 ** 64, 10 ** 30]),
    st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "a\x00b", "\x00", "\x1b[2J", "[red]x[/red]", "Error: boom", "tool", "ai",
                     "human", "assistant", "user", "function_call", "success", "error", "1", "0",
                     "2024-01-01T00:00:00Z", "not a date", "é" * 3, "\ufffd", "{\"a\": 1}"]),
    st.text(max_size=12),
)
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(
        ["type", "role", "content", "id", "name", "args", "data", "json", "messages", "tool_calls",
         "task_id", "reward", "trial", "info", "x"]), inner, max_size=3)), max_leaves=6)

_OPS = ("replace", "replace", "replace", "delete", "insert", "wrap_list", "wrap_dict", "deep",
        "to_list", "duplicate", "rename")
_TEXT_OPS = ("truncate", "insert_bytes", "surrogate", "flip")
_JUNK = [b"\xff", b"\xc3", b"\x00", b"\\ud800", b"\\u0000", b",", b"]", b"}", b"{", b"\"", b"\n", b"NaN",
         b"1e999", b"-", b"\\"]


def _deep(depth: int) -> Any:
    value: Any = None
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


def _pick(draw, tree: Any) -> tuple[Any, Any] | None:
    """A (container, key) pair inside ``tree``, chosen by descending at random."""
    parent, key = None, None
    node = tree
    for _ in range(12):
        if not isinstance(node, (dict, list)) or not node:
            break
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        k = keys[draw(st.integers(0, len(keys) - 1))]
        parent, key, node = node, k, node[k]
        if draw(st.integers(0, 3)) == 0:
            break
    return None if parent is None else (parent, key)


def mutate_tree(draw, tree: Any) -> Any:
    """Apply one to three drawn edits to (a deep copy of) ``tree``."""
    tree = json.loads(json.dumps(tree))
    for _ in range(draw(st.integers(1, 3))):
        where = _pick(draw, tree)
        op = draw(st.sampled_from(_OPS))
        if where is None:
            tree = draw(_VALUES) if op == "replace" else [tree]
            continue
        parent, key = where
        value = parent[key]
        if op == "replace":
            parent[key] = draw(_VALUES)
        elif op == "delete":
            del parent[key]
        elif op == "insert":
            if isinstance(parent, list):
                parent.insert(key, draw(_VALUES))
            else:
                parent[draw(st.sampled_from(["type", "id", "role", "extra", "content"]))] = draw(_VALUES)
        elif op == "wrap_list":
            parent[key] = [value]
        elif op == "wrap_dict":
            parent[key] = {"data": value}
        elif op == "deep":
            parent[key] = _deep(draw(st.sampled_from([30, 300, 1100])))
        elif op == "to_list":
            parent[key] = list(value.values()) if isinstance(value, dict) else value
        elif op == "duplicate":
            if isinstance(parent, list):
                parent.insert(key, json.loads(json.dumps(value)))
        elif op == "rename" and isinstance(parent, dict):
            parent[draw(st.text(max_size=4))] = parent.pop(key)
    return tree


def encode(draw, tree: Any, *, lines: bool) -> bytes:
    """The mutated tree as a file's bytes (JSON, or JSON Lines), maybe damaged at byte level."""
    if lines and isinstance(tree, list):
        data = b"".join(json.dumps(x).encode() + b"\n" for x in tree)
    else:
        data = json.dumps(tree).encode()
    if draw(st.integers(0, 4)) == 0:
        op = draw(st.sampled_from(_TEXT_OPS))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "truncate":
            data = data[:at]
        elif op == "insert_bytes":
            data = data[:at] + draw(st.sampled_from(_JUNK)) + data[at:]
        elif op == "surrogate":
            q = data.find(b'"', at)
            if q >= 0:
                data = data[:q + 1] + b"\\udc80" + data[q + 1:]
        elif op == "flip" and data:
            data = data[:at] + bytes([data[at] ^ 0x40]) + data[at + 1:]
    return data


def _load(path: Path) -> Any:
    return json.loads(path.read_text())


def _trim_traj(record: dict, keep: int) -> dict:
    return dict(record, traj=record["traj"][:keep])


def seeds(reader: str) -> list[Any]:
    """The parsed real inputs a reader's fuzz test mutates (small cuts of real files)."""
    if reader == "tau-bench":
        doc = _load(TAU_AIRLINE)
        return [[_trim_traj(doc[0], 12), _trim_traj(doc[1], 8)], [_trim_traj(doc[5], 16)]]
    if reader == "tau2-bench":
        out = []
        for name in ("gpt-4.1_airline_default_gpt-4.1_1trials.json", "gpt-4.1_telecom_default_gpt-4.1_1trials.json"):
            doc = _load(TAU2 / name)
            sims = [dict(s, messages=s["messages"][:10]) for s in doc["simulations"][:2]]
            info = dict(doc["info"])
            env = dict(info.get("environment_info") or {})
            env["policy"] = (env.get("policy") or "")[:300]
            env["tool_defs"] = (env.get("tool_defs") or [])[:2] if isinstance(env.get("tool_defs"), list) \
                else env.get("tool_defs")
            info["environment_info"] = env
            out.append({"timestamp": doc["timestamp"], "info": info, "tasks": [], "simulations": sims})
        return out
    if reader == "langgraph":
        return [_load(p) for p in sorted((SAMPLES / "langgraph").glob("*.json")) if ".openai." not in p.name]
    if reader == "openai":
        return ([_load(p) for p in sorted((SAMPLES / "langgraph").glob("*.openai.json"))]
                + [_load(p) for p in sorted((SAMPLES / "openai_agents").glob("*.to_input_list.json"))])
    if reader == "n8n":
        names = ["execution_2_success.json", "execution_1_error.json", "cli_execute_rawOutput_IRun.json",
                 "execution_3_success.db_flatted.txt"]
        return [_load(SAMPLES / "n8n" / n) for n in names]
    if reader == "fluke":
        from fluke.adapters import read_file

        runs = list(read_file(TAU2 / "gpt-4.1_telecom_default_gpt-4.1_1trials.json"))[:3]
        return [[json.loads(r.model_copy(update={"events": r.events[:8]}).model_dump_json()) for r in runs]]
    raise KeyError(reader)
