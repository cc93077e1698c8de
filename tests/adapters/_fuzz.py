"""Mutating real framework output for the reader fuzz tests (``test_fuzz.py``).

A seed (``_fuzz_seeds.py``) is a parsed real file (from ../shared/formats/samples,
../shared/data or the fixtures, cut down so one input is a few kilobytes). Hypothesis draws
a short byte string per input; :meth:`Mutator.input` reads its choices from those bytes (which node of the tree, which
edit, which hostile value, which byte-level damage), so every input is hypothesis' own and
a failure shrinks towards the first node and the first edit. Drawing one ``binary`` per
input is what keeps hypothesis' own cost per input small (about 60 µs in batches, against
about 1 ms for a dozen interactive draws).

Edits are structure-aware: a node anywhere in the tree (deep ones included) is replaced by
a hostile value (NUL, 2**63 and 2**64, a 400-digit integer, NaN, markup, a lone surrogate,
an empty container), changed to another JSON type, deleted, duplicated, renamed onto
another key of the file, swapped, grafted from elsewhere in the file, wrapped, or nested
30, 300 or 1,030 deep. The text may then be damaged: truncated, a key written twice, raw
invalid UTF-8 or a NUL byte, a lone surrogate escape, a flipped byte. Lines files (JSONL)
lose, repeat or reorder lines as any list does. An Inspect ``.eval`` is re-zipped from its
real members (each Zstandard, deflated or stored, as the input chooses) with one member
edited, dropped or renamed, then maybe damaged in its zip structure; or the real archive's
own bytes are damaged.
"""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any, Callable

import orjson


#: Raw JSON a value may be replaced by that ``json.dumps`` cannot write (a marker string is
#: put in the tree, then swapped for the raw text).
_RAW = {
    "\x01NaN": b"NaN", "\x01Inf": b"-Infinity", "\x01e999": b"1e999", "\x01big": b"9" * 400,
    "\x01deep30": b"[" * 30 + b"]" * 30, "\x01deep300": b'{"a":' * 300 + b"1" + b"}" * 300,
    "\x01deep1030": b"[" * 1030 + b"]" * 1030,
}
_RAW_BYTES = [(json.dumps(k).encode(), v) for k, v in _RAW.items()]

#: Values that broke readers before: wrong types, integers past 64 bits, NUL and control
#: characters, markup, bad dates, empty containers, deep nesting.
HOSTILE: list[Any] = [
    None, True, False, 0, -1, 1, 2, 2 ** 31, 2 ** 63 - 1, 2 ** 63, -(2 ** 63) - 1, 2 ** 64, 10 ** 30, 1.5, -0.0,
    1e308, "", "\x00", "a\x00b", "\x1b[2J", "[red]x[/red]", "Error: boom", "\udc80", "é", "\ufffd", "  ",
    "2024-01-01T00:00:00Z", "2024-13-45T99:99:99", "not a date", "attachment://00", '{"a": 1}', "[1, 2",
    "tool", "ai", "human", "assistant", "user", "system", "error", "success", "1", "0", "-1", "true", "null",
    [], {}, [None], {"": None}, [[]], {"a": {}}, *_RAW,
]
_JUNK = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\\u0000", b"\\ud800", b",", b"]", b"}", b"{", b'"',
         b"\n", b"\r\n", b"NaN", b"-", b"\\", b"\xef\xbb\xbf"]


class Choices:
    """The choices an input makes, read from the bytes hypothesis drew (0 once they run out)."""

    def __init__(self, raw: bytes) -> None:
        self.raw, self.at = raw, 0

    def below(self, n: int) -> int:
        if n <= 1:
            return 0
        width = 1 if n <= 256 else 2 if n <= 65536 else 3
        chunk = self.raw[self.at:self.at + width]
        self.at += width
        return int.from_bytes(chunk, "big") % n if chunk else 0

    @property
    def spent(self) -> bool:
        return self.at >= len(self.raw)

    def pick(self, seq: list | tuple) -> Any:
        return seq[self.below(len(seq))]

    def text(self) -> str:
        n = self.below(9)
        chunk = self.raw[self.at:self.at + n]
        self.at += n
        return chunk.decode("utf-8", "replace")


def _paths(tree: Any, limit: int = 20000) -> list[tuple]:
    out: list[tuple] = []
    stack: list[tuple[tuple, Any]] = [((), tree)]
    while stack and len(out) < limit:
        path, node = stack.pop()
        out.append(path)
        if isinstance(node, dict):
            stack.extend((path + (k,), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((path + (i,), v) for i, v in enumerate(node))
    return out


def _keys(tree: Any) -> list[str]:
    keys: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            keys.update(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return sorted(keys) or ["x"]


def _resolve(tree: Any, path: tuple) -> tuple:
    """The longest prefix of ``path`` that still names a node of ``tree``."""
    node, done = tree, []
    for key in path:
        if isinstance(node, dict) and key in node or isinstance(node, list) and isinstance(key, int) \
                and key < len(node):
            node = node[key]
            done.append(key)
        else:
            break
    return tuple(done)


def _at(tree: Any, path: tuple) -> Any:
    for key in path:
        tree = tree[key]
    return tree


def _update(tree: Any, path: tuple, edit: Callable[[Any], Any]) -> Any:
    """``tree`` with the node at ``path`` replaced by ``edit(node)``, copying only that path."""
    if not path:
        return edit(tree)
    head = path[0]
    new = dict(tree) if isinstance(tree, dict) else list(tree)
    new[head] = _update(tree[head], path[1:], edit)
    return new


def _retype(value: Any, ch: Choices) -> Any:
    """The same content as another JSON type."""
    if isinstance(value, bool):
        return ch.pick([int(value), str(value).lower(), [value], None])
    if isinstance(value, (int, float)):
        return ch.pick([str(value), float(value) if isinstance(value, int) else int(value) if value == value
                        and abs(value) < 1e300 else 0, value > 0, [value], {"value": value}])
    if isinstance(value, str):
        return ch.pick([len(value), [value], {"text": value}, value.encode("utf-8", "surrogatepass")[:1].hex(),
                        value * 2, None])
    if isinstance(value, list):
        return ch.pick([{str(i): v for i, v in enumerate(value)}, len(value), json.dumps(value)[:200], value[:1]])
    if isinstance(value, dict):
        return ch.pick([list(value.values()), list(value), json.dumps(value)[:200], len(value)])
    return ch.pick([0, "", [], {}])


_EMPTY = object()


class Mutator:
    """Mutated copies of one parsed seed; ``lines`` writes a list as JSON Lines."""

    OPS = ("replace", "replace", "retype", "retype", "delete", "delete", "duplicate", "graft", "rename",
           "swap", "wrap", "deep", "empty")

    def __init__(self, tree: Any, *, lines: bool = False) -> None:
        self.holder = [tree]   # the root has a parent too, so it can be deleted or replaced
        self.paths = _paths(self.holder)[1:]
        self.keys = _keys(tree)
        self.lines = lines

    def tree(self, ch: Choices) -> Any:
        holder = self.holder
        for n in range(1 + ch.below(3)):
            if n and ch.spent:   # the choices ran out: no more edits
                break
            path = _resolve(holder, ch.pick(self.paths))
            if not path:
                continue
            op = ch.pick(self.OPS)
            holder = _update(holder, path[:-1], lambda parent: self._edit(parent, path[-1], op, ch))
        return holder[0] if holder else _EMPTY

    def _edit(self, parent: Any, key: Any, op: str, ch: Choices) -> Any:
        parent = dict(parent) if isinstance(parent, dict) else list(parent)   # the seed stays as it is
        value = parent[key]
        if op == "replace":
            parent[key] = ch.text() if ch.below(4) == 0 else ch.pick(HOSTILE)
        elif op == "retype":
            parent[key] = _retype(value, ch)
        elif op == "delete":
            del parent[key]
        elif op == "duplicate":
            if isinstance(parent, list):
                parent.insert(key, value)
            else:
                parent[ch.pick(self.keys)] = value
        elif op == "graft":
            parent[key] = _at(self.holder, ch.pick(self.paths))
        elif op == "rename" and isinstance(parent, dict):
            new_key = ch.text() if ch.below(4) == 0 else ch.pick(self.keys)
            parent[new_key] = parent.pop(key)
        elif op == "swap" and isinstance(parent, list) and len(parent) > 1:
            other = ch.below(len(parent))
            parent[key], parent[other] = parent[other], parent[key]
        elif op == "swap" and isinstance(parent, dict):
            items = list(parent.items())[::-1]
            parent.clear()
            parent.update(items)
        elif op == "wrap":
            parent[key] = ch.pick([[value], {"data": value}, {"value": value, "type": "x"}])
        elif op == "deep":
            parent[key] = ch.pick(["\x01deep30", "\x01deep300", "\x01deep1030"])
        elif op == "empty":
            parent[key] = type(value)() if isinstance(value, (dict, list, str)) else None
        return parent

    def encode(self, tree: Any, ch: Choices) -> bytes:
        if tree is _EMPTY:   # the whole document deleted: an empty file
            return b""
        if self.lines and isinstance(tree, list):
            data = b"".join(dumps(x, ch) + b"\n" for x in tree)
        else:
            data = dumps(tree, ch)
        return damage(data, ch, self.keys)

    def input(self, raw: bytes) -> bytes:
        """The bytes of one mutated file, chosen by ``raw``."""
        ch = Choices(raw)
        return self.encode(self.tree(ch), ch)


def dumps(tree: Any, ch: Choices) -> bytes:
    """JSON text of ``tree``; Python's encoder where orjson refuses (big integers, lone
    surrogates, nesting past 255); markers swapped for their raw text."""
    try:
        data = orjson.dumps(tree)
    except TypeError:
        try:
            data = json.dumps(tree, ensure_ascii=ch.below(2) == 0).encode("utf-8", "surrogatepass")
        except RecursionError:
            data = b"[" * 2000 + b"]" * 2000
    if b"\\u0001" in data:
        for marker, raw in _RAW_BYTES:
            data = data.replace(marker, raw)
    return data


def damage(data: bytes, ch: Choices, keys: list[str]) -> bytes:
    """Maybe (one in four) damage ``data`` at a byte chosen by ``ch`` (never once its choices
    have run out, so that a shrunk input is an edit of the tree alone)."""
    if ch.spent or ch.below(4) != 1 or not data:
        return data
    op = ch.below(7)
    at = ch.below(len(data))
    if op == 0:
        return data[:at]
    if op == 1:
        return data[:at] + ch.pick(_JUNK) + data[at:]
    if op == 2:   # a key written twice: the last one wins in most parsers
        end = data.find(b"}", at)
        if end > 0:
            extra = b"," + json.dumps(ch.pick(keys)).encode() + b":" + dumps(ch.pick(HOSTILE), ch)
            return data[:end] + extra + data[end:]
        return data
    if op == 3:
        q = data.find(b'"', at)
        return data if q < 0 else data[:q + 1] + ch.pick([b"\\udc80", b"\\ud800\\u0041", b"\\u0000"]) + data[q + 1:]
    if op == 4:
        return data[:at] + bytes([data[at] ^ (1 << ch.below(8))]) + data[at + 1:]
    if op == 5:   # a run of bytes lost from the middle
        return data[:at] + data[at + 1 + ch.below(64):]
    return data[:at] + b"\x00" + data[at:]


# -- Inspect .eval archives ------------------------------------------------------------------

_ZSTD = 93


def zip_bytes(members: list[tuple[str, bytes, int]]) -> bytes:
    """A zip archive of ``(name, data, method)`` members; method 93 is Zstandard, which
    Python's zipfile (before 3.14) cannot write, so the archive is laid out here."""
    import zstandard

    local, central = bytearray(), bytearray()
    for name, data, method in members:
        packed = (zstandard.ZstdCompressor().compress(data) if method == _ZSTD
                  else zlib.compress(data)[2:-4] if method == 8 else data)
        crc = zlib.crc32(data)
        head = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, method, 0, 33, crc, len(packed), len(data),
                           len(name.encode()), 0)
        central += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 63, 20, 0, method, 0, 33, crc, len(packed),
                               len(data), len(name.encode()), 0, 0, 0, 0, 0, len(local)) + name.encode()
        local += head + name.encode() + packed
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), len(local), 0)
    return bytes(local + central + end)


class EvalMutator:
    """Mutated Inspect ``.eval`` archives: the real archive's members (two samples of it,
    so that an input stays small), re-zipped with one edited; or the real bytes damaged."""

    def __init__(self, path: Path) -> None:
        import zipfile

        with zipfile.ZipFile(path) as z:
            names = [n for n in z.namelist() if not n.startswith("samples/") or "epoch_1" in n]
            self.members = {n: json.loads(_read_member(path, z.getinfo(n))) for n in names}
        self.names = list(self.members)
        # the members the reader reads, twice as likely to be the one edited as the others
        self.targets = self.names + [n for n in self.names if n.startswith("samples/") or n == "header.json"]
        self.trees = {n: Mutator(t) for n, t in self.members.items()}
        self.real = path.read_bytes()

    def input(self, raw: bytes) -> bytes:
        ch = Choices(raw)
        if ch.below(16) == 0:   # the real archive (Zstandard members), damaged at byte level
            data = bytearray(self.real)
            for _ in range(1 + ch.below(4)):
                at = ch.below(len(data))
                data[at] ^= 1 << ch.below(8)
            return bytes(data[:len(data) - ch.below(64) if ch.below(2) else len(data)])
        target = ch.pick(self.targets)
        members = []
        for name in self.names:
            data = orjson.dumps(self.members[name])
            if name == target:
                action = ch.below(8)
                if action == 0:
                    continue                      # a member lost
                if action == 1:
                    name = name.replace("samples/", "samples/x") if ch.below(2) else name + ".bak"
                else:
                    mutator = self.trees[name]
                    data = mutator.encode(mutator.tree(ch), ch)
            members.append((name, data, ch.pick([_ZSTD, _ZSTD, 8, 0])))
        archive = zip_bytes(members)
        if ch.below(4) == 0:   # the zip structure damaged: a header field, the directory, the end
            buf = bytearray(archive)
            at = ch.pick([4 + 4, 14, 18, 22, len(buf) - 22 + 10, len(buf) - 22 + 16, ch.below(len(buf))])
            if at < len(buf):
                buf[at] = ch.pick([0, 0xFF, 93, 99, buf[at] ^ 1])
            archive = bytes(buf)
        return archive


def _read_member(path: Path, info: Any) -> bytes:
    from fluke.adapters._archive import Archive

    return Archive(path).read(info.filename)
