"""Putting runs into the ledger: ``ingest`` (files a harness wrote) and ``run`` (a suite fluke runs).

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, "runs.jsonl")
>>> with open(path, "w") as f:
...     _ = f.write('{"format_version": 1, "scenario": "s", "identity": {"model": "m"}, '
...                 '"outcome": {"passed": true}}\\n')
>>> result = ingest(open_ledger(os.path.join(folder, "i.db")), [path])
>>> result.files[0]["added"], result.render().splitlines()[0].endswith("1 runs added, 0 already in the ledger")
(1, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..errors import UsageError
from ..format import fmt_share
from ._document import Column, Span, Table, line, note
from ._result import Result


def parse_identity(pairs: Sequence[str]) -> dict[str, Any]:
    """``("model=gpt-4o", ...)`` as a dict, refusing fields an identity does not have.

    >>> parse_identity(("model=gpt-4o", "date=2024-06-01"))
    {'model': 'gpt-4o', 'date': '2024-06-01'}
    """
    from ..record import IDENTITY_FIELDS

    fields = IDENTITY_FIELDS + ("date",)
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key.strip() not in fields:
            raise UsageError(f"--identity {pair!r} is not field=value with field one of "
                             + ", ".join(fields), argument="--identity")
        out[key.strip()] = value.strip()
    return out


@dataclass(frozen=True)
class IngestReport(Result):
    """What each file added to the ledger."""

    kind = "ingest"
    ledger: str
    files: tuple[dict, ...]
    missing_model: bool

    def payload(self) -> dict[str, Any]:
        return {"ledger": self.ledger, "files": list(self.files)}

    def blocks(self) -> list:
        out = []
        for r in self.files:
            out.append(line(f"{r['file']}: {r['added']} runs added, {r['skipped']} already in the ledger"))
            dup = r.get("duplicates")
            if dup and dup["in_file"]:
                examples = "; ".join(f"{e['scenario']} trial {e['trial']} ({e['where']} repeats {e['first']})"
                                     for e in dup["examples"])
                out.append(line(Span("  dropped: ", "warn"), f"{dup['in_file']} repeat a run earlier in this file "
                                "(the same content, so the same hash): ", examples))
            same = r.get("same_trial")
            if same:
                examples = "; ".join(f"{e['scenario']} trial {e['trial']}"
                                     + (f" [{e['condition']}]" if e["condition"] else "")
                                     + f" ({e['where']}; kept: {e['kept']})" for e in same["examples"])
                out.append(line(Span("  skipped: ", "warn"), f"{same['runs']} another run of a trial the ledger keeps "
                                "(the same version, scenario, condition and trial, other content: latency, timing, "
                                "cost or outcome; the first is kept): ", examples))
            if dup and dup["before"]:
                out.append(line(f"  {dup['before']} were stored before this ingest (the same content: this file "
                                "or one holding the same runs was ingested already)"))
        out += [line("  ", n) for r in self.files for n in r.get("notes", ())]
        out += [line(Span("warning: ", "warn"), w) for r in self.files
                for w in (*r.get("warnings", ()), *([r["stored_again"]] if r.get("stored_again") else []))]
        if self.missing_model:
            out.append(line(Span("note: ", "warn"), "some versions have no model in their identity; pass "
                            "--identity model=NAME when you ingest them"))
        return out


def ingest(ledger, files: Sequence[str], *, input_format: str | None = None, identity: dict | None = None,
           options: dict | None = None, progress: Callable[[str], Any] | None = None,
           workers: int | str = 0) -> IngestReport:
    """Read each file (format detected unless given) into the ledger, one transaction per file.

    ``options`` go to the reader (e.g. Inspect AI's ``score`` and ``pass_at``); a reader that takes
    no such option says so. ``progress(path)``, when given, returns a callback ``f(n)`` told how
    many runs are in so far. ``workers``: processes forked to read a large fluke JSONL file
    beside the one storing it (0, the default here, forks none; ``"auto"``, the command line's
    default, two where there are two cores or more and one is idle by the load average, as
    measured in docs/ledger.md); the summary says when processes were forked.
    """
    from ..adapters import read_file

    supplied = dict(identity or {})
    rows = []
    for path in files:
        notes: list[str] = []
        runs = read_file(path, format=input_format, identity=supplied, options=options or None, prepared=True,
                         notes=notes, workers=workers)
        tick = progress(path) if progress is not None else None
        before = {v.version for v in ledger.versions()}
        keys = _Keys()
        runs = keys.watch(runs)
        result = ledger.ingest(runs, progress=tick) if tick is not None else ledger.ingest(runs)
        row = {"file": path, "added": result.added, "skipped": result.skipped}
        same = getattr(result, "same_trial", 0)
        if result.skipped:
            row["duplicates"] = keys.duplicates(path, result.skipped - same, input_format, supplied, options)
        if same:
            row["same_trial"] = {"runs": same, "examples": [
                {"scenario": e.scenario, "condition": e.condition, "trial": e.trial, "where": _source_text(e.source),
                 "kept": _source_text(e.kept)} for e in result.same_trial_examples]}
        warnings = list(getattr(result, "warnings", ()) or ())
        again = _stored_before(ledger, path, {v.version for v in ledger.versions()} - before) if result.added else None
        if again:
            row["stored_again"] = again
        if warnings:
            row["warnings"] = warnings
        if notes:
            row["notes"] = notes
        rows.append(row)
    missing = "model" not in supplied and any(v.identity.model is None for v in ledger.versions())
    from ..format import safe

    return IngestReport(safe(ledger.url), tuple(rows), missing)


#: Document kind recording which versions a file's runs were stored under (by a fingerprint of its bytes).
FILE_KIND = "ingested_file"


def file_fingerprint(path: str, *, edge: int = 2 ** 20) -> str:
    """SHA-256 of a file's size, first and last MiB: the same file under any name, read in bounded time.

    >>> import os, tempfile
    >>> a = os.path.join(tempfile.mkdtemp(), "a.json"); _ = open(a, "w").write("[1, 2]")
    >>> len(file_fingerprint(a))
    64
    """
    import hashlib
    import os

    h = hashlib.sha256()
    size = os.path.getsize(path)
    h.update(str(size).encode())
    with open(path, "rb") as fh:
        h.update(fh.read(edge))
        if size > 2 * edge:
            fh.seek(size - edge)
            h.update(fh.read(edge))
    return h.hexdigest()


def _stored_before(ledger, path: str, new_versions: set[str]) -> str | None:
    """A warning when this file's runs were stored before under versions other than the new ones.

    Runs are content-addressed with their identity, so the same file ingested with another
    ``--identity`` stores every run again under a second version; this says so. The versions
    each file went to are kept as an ``ingested_file`` document.
    """
    try:
        mark = file_fingerprint(path)
    except OSError:
        return None
    earlier = sorted({v for d in ledger.documents(FILE_KIND) if d.body.get("fingerprint") == mark
                      for v in d.body.get("versions", ()) if v not in new_versions})
    if new_versions:
        ledger.put_document(FILE_KIND, {"fingerprint": mark, "file": path, "versions": sorted(new_versions)})
    if not earlier or not new_versions:
        return None
    from ._select import version_label

    old = ", ".join(version_label(ledger, v) for v in earlier[:3])
    new = ", ".join(version_label(ledger, v) for v in sorted(new_versions)[:3])
    return (f"{path}: the same file was ingested before as {old}; its runs are now stored again, as {new}. "
            "Every verb counts them under both versions: if that is not meant, keep one ledger per identity "
            "(fluke export --version ... writes the runs of one version to re-ingest elsewhere)")
@dataclass(frozen=True)
class FormatsReport(Result):
    """The formats fluke reads: fluke's own and the plugins', with the package each comes from."""

    kind = "formats"
    formats: tuple[dict, ...]

    def payload(self) -> dict[str, Any]:
        return {"formats": list(self.formats)}

    def blocks(self) -> list:
        cols = [Column("format", key=True), Column("from"), Column("takes"), Column("options"), Column("reads")]
        rows = [[f["name"], f["source"], f["takes"] + (" or a zip archive" if f["archive"] else ""),
                 ", ".join(f["options"]) or "-",
                 f["description"] if f["error"] is None else f"cannot load: {f['error']}"] for f in self.formats]
        return [Table(f"{len(rows)} formats, detected in this order (force one with --format)", cols, rows,
                      more="formats"),
                note("Other packages add readers through the 'fluke.readers' entry-point group (docs/adapters.md).")]


def formats() -> FormatsReport:
    """The registered formats in detection order, each with its source package.

    >>> report = formats()
    >>> report.formats[0]["name"], report.formats[0]["source"], report.formats[0]["takes"]
    ('fluke', 'fluke', 'lines')
    """
    from ..adapters import FORMATS

    out = []
    for fmt in FORMATS.values():
        try:
            reader, error = fmt.load(), None
        except Exception as exc:   # a plugin that does not import: listed with the reason
            reader, error = None, f"{type(exc).__name__}: {exc}"
        out.append({"name": fmt.name, "source": fmt.source, "target": fmt.target,
                    "takes": reader.takes if reader else "?", "archive": bool(reader and reader.archive),
                    "options": list(reader.options) if reader else [],
                    "description": reader.description if reader else "", "error": error})
    return FormatsReport(tuple(out))


class _Keys:
    """The content key of every run one ingest reads (8 bytes a run), to say afterwards why
    runs were dropped: repeated in the file, or stored before."""

    def __init__(self) -> None:
        from array import array

        self.keys = array("q")

    def watch(self, runs):
        import hashlib

        from ..record import Prepared

        keys = self.keys
        for item in runs:
            if type(item) is Prepared:
                if item.digest is None:   # taken here, so the ledger does not take it again
                    item.digest = hashlib.sha256(item.body).digest()
                yield item
                keys.append(int.from_bytes(item.digest[:8], "big", signed=True))
            else:
                yield item   # the ledger takes the run's hash as it stores it
                found = item.__dict__.get("hash") or item.hash
                keys.append(int.from_bytes(bytes.fromhex(found[:16]), "big", signed=True))

    def duplicates(self, path: str, skipped: int, input_format, identity, options, show: int = 3) -> dict[str, Any]:
        """``{"in_file", "before", "examples"}``: how many skipped runs repeat an earlier run of
        this file, how many were stored before, and a few repeats (re-read from the file)."""
        import numpy as np

        keys = np.frombuffer(self.keys, dtype=np.int64)
        order = np.argsort(keys, kind="stable")
        ranked = keys[order]
        repeat = np.zeros(len(keys), dtype=bool)
        repeat[order[1:][ranked[1:] == ranked[:-1]]] = True
        in_file = int(repeat.sum())
        wanted = {int(i): None for i in np.flatnonzero(repeat)[:show]}
        firsts = {}
        for i in wanted:
            same = order[np.searchsorted(ranked, keys[i])]
            firsts[i] = int(same)
        examples = []
        if wanted:
            from ..adapters import read_file

            last = max(wanted)
            needed = set(wanted) | set(firsts.values())
            seen: dict[int, Any] = {}
            for index, item in enumerate(read_file(path, format=input_format, identity=identity,
                                                   options=options or None, prepared=True)):
                if index in needed:
                    seen[index] = item
                if index >= last:
                    break
            for i, first in firsts.items():
                examples.append({"scenario": seen[i].scenario, "trial": seen[i].trial,
                                 "where": _where(seen[i], i), "first": _where(seen[first], first)})
        return {"in_file": in_file, "before": max(skipped - in_file, 0), "examples": examples}


def _source_text(source: str | None) -> str:
    """A stored source (JSON) as ``file position N`` (or what of it there is)."""
    import orjson

    try:
        value = orjson.loads(source) if source else {}
    except orjson.JSONDecodeError:
        value = {}
    value = value if isinstance(value, dict) else {}
    parts = [str(value["file"]) if value.get("file") else "", f"position {value['position']}"
             if value.get("position") is not None else ""]
    return " ".join(p for p in parts if p) or "no source"


def _where(item, index: int) -> str:
    """Where a run read from a file was: its source position, else its place in the reading order."""
    source = item.source
    if isinstance(source, str):
        import orjson

        source = orjson.loads(source)
    elif source is not None:
        source = source.model_dump()
    position = (source or {}).get("position")
    return f"position {position}" if position is not None else f"run {index + 1} read"


def _cases(result: Any) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for r in result.results:
        row = rows.setdefault(r.run.scenario, {"scenario": r.run.scenario, "runs": 0, "passed": 0,
                                                "judged": 0, "errors": 0, "hard": 0, "resumed": 0})
        row["runs"] += 1
        passed = r.run.outcome.passed
        row["judged"] += passed is not None
        row["passed"] += passed is True
        row["errors"] += r.run.error is not None
        row["hard"] += r.hard
        row["resumed"] += r.resumed
    return list(rows.values())


@dataclass(frozen=True)
class SuiteRunResult(Result):
    """A suite run k times per case: per-case counts, the gate, the luck rate, where the runs went."""

    kind = "run"
    suite: str
    identity: dict
    ledger: str | None
    result: Any
    cases: tuple[dict, ...]
    gate: Any
    luck: Any

    @property
    def passed(self) -> bool:
        return bool(self.gate.passed)

    def payload(self) -> dict[str, Any]:
        r = self.result
        return {"suite": self.suite, "version": r.version, "identity": self.identity, "k": r.k,
                "spec_digest": r.spec_digest, "ledger": self.ledger, "added": r.added, "resumed": r.resumed,
                "cases": list(self.cases),
                "runs": [{"scenario": x.run.scenario, "trial": x.run.trial, "hash": x.run.hash,
                          "passed": x.run.outcome.passed, "error": x.run.error, "hard": x.hard, "resumed": x.resumed,
                          "violations": [{"check": v.check, "severity": v.severity, "index": v.index,
                                          "message": v.message} for v in x.violations]} for x in r.results],
                "gate": self.gate.to_dict(), "luck": self.luck.to_dict() if self.luck is not None else None}

    def blocks(self) -> list:
        r, luck = self.result, self.luck
        out: list = []
        if self.gate.passed:
            out.append(line(Span("gate passed", "good")))
        else:
            out.append(line(Span("gate FAILED", "bad"), f" ({len(self.gate.reasons)} reason(s)):"))
            out += [line(f"  - {reason}") for reason in self.gate.reasons[:20]]
        cols = [Column("scenario", key=True), Column("output passed", "right"), Column("raised", "right"),
                Column("hard", "right"), Column("resumed", "right")] + ([Column("luck rate", "right")] if luck else [])
        rows = []
        for c in sorted(self.cases, key=lambda c: (c["passed"] / c["judged"] if c["judged"] else 0, -c["hard"])):
            row = [c["scenario"], fmt_share(c["passed"], c["judged"]), str(c["errors"]), str(c["hard"]),
                   str(c["resumed"])]
            if luck:
                row.append(str(luck.cases[c["scenario"]]))
            rows.append(row)
        out.append(Table(f"{len(self.cases)} cases × k={r.k}", cols, rows, more="cases"))
        passed, judged = r.passes()
        out.append(line(f"output passed {fmt_share(passed, judged)} of runs with a verdict; {r.errors} raised "
                        "(recorded as hard violations)"))
        out.append(line("not recorded (--no-ledger)" if self.ledger is None else
                        f"ledger {self.ledger}: {r.added} added, {r.resumed} already there"))
        graded = f", graded by spec {r.spec_digest[:12]}" if r.spec_digest else ", not graded (no spec)"
        out.append(note(f"conditional on version {r.version[:12]}{graded}"))
        raised = [x.run for x in r.results if x.run.error is not None]
        out += [line(f"  raised: {run.scenario} trial {run.trial}: {run.error[:200]}") for run in raised[:10]]
        if len(raised) > 10:
            out.append(note(f"  … and {len(raised) - 10} more (see --json)"))
        if luck is not None:
            out.append(line(f"luck rate, pooled: {luck.pooled} ({luck.conditional_on})"))
        return out


def run_suite(ledger, suite_file: str, *, k: int | None = None, spec: str | None = None, seed: int | None = None,
              identity: dict | None = None, executor: str = "local", workers: int | None = None,
              progress: Callable | None = None) -> SuiteRunResult:
    """Run SUITE.py's agent k times on each case, grade, and record each run as it finishes."""
    from ..runner import evaluate, load_suite

    suite = load_suite(suite_file)
    ident = {**suite.identity, **(identity or {})}
    k = k if k is not None else (suite.k or 5)
    result = evaluate(suite.cases, suite.agent, k=k, spec=spec if spec is not None else suite.spec, ledger=ledger,
                      identity=ident, seed=seed if seed is not None else (suite.seed or 0), executor=executor,
                      workers=workers, progress=progress, tools=suite.tools)
    luck = None
    if result.spec_digest is not None:
        from ..grading import luck_rate

        luck = luck_rate(result.grades())
    from ..format import safe

    return SuiteRunResult(suite_file, ident, None if ledger is None else safe(ledger.url), result,
                          tuple(_cases(result)), result.gate(), luck)
