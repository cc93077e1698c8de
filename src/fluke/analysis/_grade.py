"""``grade``: the path of every run against a spec; per-run verdicts, the luck rate, the gate.

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run, ToolCall
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "g.db"))
>>> _ = ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=True),
...                        events=[ToolCall(tool="refund" if t else "lookup", ok=True)]) for t in range(3)])
>>> result = grade(ledger, {"tools": ["lookup", "refund"], "forbidden": ["refund"]})
>>> result.passed, result.luck[result.versions[0]].pooled.lucky
(False, 2)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import UsageError
from ..format import fmt_interval, fmt_share
from ._document import TABLE_ROWS, Column, Span, Table, blank, line, note
from ._result import Result
from ._select import require_runs, select_versions
from ._unknowns import UnknownPolicy, check_unknown, unknown_fields, unknown_note
from ._vocabulary import Vocabulary, sample_ledger


def parse_luck_prior(text: str | Sequence[float]) -> tuple[float, float]:
    """``"a,b"`` (or a pair) as two positive numbers: the Beta prior of the luck rate's interval.

    >>> parse_luck_prior("0.5,0.5")
    (0.5, 0.5)
    """
    try:
        a, b = (float(x) for x in (text.split(",") if isinstance(text, str) else text))
    except ValueError:
        raise UsageError(f"prior={text!r} is not two numbers a,b (e.g. 0.5,0.5)") from None
    if not (a > 0 and b > 0):
        raise UsageError(f"prior={text!r}: both numbers must be positive")
    return a, b


def _verdict(g: Any) -> Cell:
    if g.output_ok is True:
        return Span("LUCKY", "bad") if not g.path_ok else Span("pass", "good")
    return Span("fail", "bad") if g.output_ok is False else "unknown"


Cell = Any


def _violations(g: Any, limit: int = 6) -> str:
    counts: dict[tuple[str, Any], int] = {}
    for v in g.violations:
        counts[(v.check, v.index)] = counts.get((v.check, v.index), 0) + 1
    parts = [f"{c}@{'—' if i is None else i}" + (f"×{n}" if n > 1 else "") for (c, i), n in counts.items()]
    more = len(parts) - limit
    return ", ".join(parts[:limit]) + (f", +{more} more" if more > 0 else "") if parts else "—"


@dataclass(frozen=True)
class GradeResult(Result):
    """The gate, the luck rate per version (per case and pooled), the reference summary and
    the worst graded runs of each version (``rows`` of them, every one when ``rows`` was None),
    over ``runs`` graded runs: what it prints, which does not grow with the runs."""

    kind = "grade"
    spec: Any
    spec_path: str | None
    source: str
    runs: int
    worst: dict             # version -> its worst grades, worst first
    labels: dict
    luck: dict              # version -> LuckReport
    gate: Any               # GateResult
    stored: int | None
    show_violations: bool = False
    unknowns: dict | None = None    # version -> runs whose outcome is unknown
    unknown_policy: str = "fail"
    reused: int = 0         # grades read back from an earlier (maybe interrupted) grade
    version_runs: dict | None = None    # version -> runs graded
    references: dict | None = None      # version -> how its runs met the spec's reference
    agreements: dict | None = None      # version -> Agreement with the recorded outcome, when asked
    vocabulary: Any = None              # the tools the runs called beside the spec's (a Vocabulary)

    @property
    def spec_name(self) -> str:
        """What the spec is called where a claim names it: its path, else its name, else its digest."""
        return self.spec_path or self.spec.name or self.spec.digest[:12]

    @property
    def vocabulary_warning(self) -> str | None:
        """The warning that most tools the runs called are unknown to the spec (None when they fit)."""
        return None if self.vocabulary is None else self.vocabulary.warning(self.spec_name)

    @property
    def passed(self) -> bool:
        """Whether the gate holds (the CLI exits 1 when it does not)."""
        return bool(self.gate.passed)

    @property
    def versions(self) -> list[str]:
        return sorted(self.luck, key=lambda v: self.labels[v])

    def payload(self) -> dict[str, Any]:
        return {"spec": {"digest": self.spec.digest, "name": self.spec.name, "path": self.spec_path},
                "source": self.source, "stored": self.stored, "reused": self.reused, "runs_total": self.runs,
                "worst_runs": [g.to_dict() for v in self.versions for g in self.worst.get(v, ())],
                "luck": {v: {"label": self.labels[v], "runs_graded": (self.version_runs or {}).get(v, 0),
                             "reference": (self.references or {}).get(v), **rep.to_dict()}
                         for v, rep in self.luck.items()},
                "gate": self.gate.to_dict(),
                **unknown_fields(sum((self.unknowns or {}).values()), self.unknown_policy),
                "unknowns_by_version": dict(self.unknowns or {}),
                "vocabulary": None if self.vocabulary is None else {
                    **self.vocabulary.payload(), "warning": self.vocabulary_warning},
                **({"agreement_with_outcome": {v: a.to_dict() for v, a in self.agreements.items()}}
                   if self.agreements is not None else {})}

    def blocks(self) -> list:
        out: list = []
        if self.vocabulary_warning:
            out.append(line(Span(f"warning: {self.vocabulary_warning}", "warn")))
        if self.gate.passed:
            out.append(line(Span("gate: PASS", "good"), " (no hard violation; no soft check failed by a majority "
                            "of a case's runs)"))
        else:
            failing = [c for c in self.gate.cases if c.failed]
            out.append(line(Span("gate: FAIL", "bad"), f" in {len(failing)} of {len(self.gate.cases)} cases"))
            out.extend(line(f"  {reason}") for reason in self.gate.reasons[:20])
            if len(self.gate.reasons) > 20:
                out.append(note(f"  … {len(self.gate.reasons) - 20} more reasons (all in --json)"))
        out.append(note(f"spec {self.spec_path or self.spec.name or 'given'} (sha256 {self.spec.digest[:12]}) over "
                        f"{self.runs} runs from {self.source}"))
        if not self.runs:
            return out + [line("no runs to grade")]
        failed_cases = {(c.version, c.scenario) for c in self.gate.cases if c.failed}
        for version in self.versions:
            report, label = self.luck[version], self.labels[version]
            out += [blank(), line(f"version {version[:12]} ({label}): pooled luck rate: {report.pooled}", style="bold")]
            cases = sorted(report.cases.items(), key=lambda kv: (-(kv[1].lucky / kv[1].green if kv[1].green else 0),
                                                                  (version, kv[0]) not in failed_cases))
            rows = []
            for name, lr in cases:
                interval = "—" if lr.interval is None else fmt_interval(*lr.interval, percent=True)
                rows.append([name, str(lr.runs), fmt_share(lr.green, lr.runs), str(lr.lucky),
                             fmt_share(lr.lucky, lr.green), interval,
                             Span("FAIL", "bad") if (version, name) in failed_cases else "pass"])
            out.append(Table(f"luck rate per case, version {version[:12]}",
                             [Column("scenario", key=True), Column("runs", "right"), Column("output ok", "right"),
                              Column("lucky", "right"), Column("luck rate", "right"),
                              Column("credible interval", "right"), Column("gate")], rows, more="cases"))
            ref = (self.references or {}).get(version)
            if ref:
                calls = "write" if ref["mode"].startswith("state") else "call"
                out.append(line(f"reference ({ref['mode']}): {fmt_share(ref['complete'], ref['runs'])} of runs made "
                                f"every expected {calls}; mean precision {ref['precision']:.3f}, recall "
                                f"{ref['recall']:.3f}, score {ref['score']:.3f} "
                                "(score = 2 matched / (expected + made): missing and extra calls both cost)"))
            agreed = (self.agreements or {}).get(version)
            if agreed is not None:
                out += _agreement_blocks(agreed, version)
            mine = self.worst.get(version, ())
            total = (self.version_runs or {}).get(version, len(mine))
            out.append(Table(f"runs of version {version[:12]} (lucky and broken paths first)",
                             [Column("scenario", key=True), Column("trial", "right"), Column("output"),
                              Column("path"), Column("verdict"), Column("violations (check@event)")],
                             [[g.scenario, str(g.trial), {True: "ok", False: "fail", None: "—"}[g.output_ok],
                               "ok" if g.path_ok else ("hard" if g.hard else "soft" if g.soft_checks else "warn"),
                               _verdict(g), _violations(g)] for g in mine], more="runs", total=total))
            if self.show_violations:
                if total > len(mine):
                    out.append(note(f"  the violations of the {len(mine)} runs above (of {total}; --all for every "
                                    "run, --jsonl for every grade)"))
                for g in mine:
                    for v in g.violations:
                        where = "—" if v.index is None else v.index
                        out.append(line(f"  {g.scenario} #{g.trial} [{v.severity}] {v.check} at event {where}: "
                                        f"{v.message}"))
            out.append(note(f"conditional on: version {version[:12]} ({label}); spec {self.spec.digest[:12]}; "
                            f"{report.conditional_on}"))
            n_unknown = (self.unknowns or {}).get(version, 0)
            out.append(unknown_note(n_unknown, self.unknown_policy))
            if n_unknown:
                out.append(note("a run whose outcome is unknown is never 'output ok', so it is never lucky and the "
                                "luck rate (lucky / output-ok runs) is the same under either policy; the policy "
                                "decides only whether it is among the runs counted (its path is graded and gated "
                                "either way)"))
        if self.stored is not None:
            out.append(note(f"grades stored under spec {self.spec.digest[:12]} ({self.stored} new"
                            + (f", {self.reused} read back from an earlier grade)" if self.reused else ")")))
        return out


def _agreement_blocks(a: Any, version: str) -> list:
    """The agreement of the reference with the recorded outcome: the share, the 2×2 table,
    the disagreeing runs and what it rests on."""
    out = [line(f"agreement of the reference ({a.mode}) with the recorded outcome: {a}", style="bold")]
    t = a.table
    out.append(Table(f"reference verdict against recorded outcome, version {version[:12]}",
                     [Column("reference", key=True), Column("outcome pass", "right"), Column("outcome fail", "right")],
                     [["met", str(t[True, True]), str(t[True, False])],
                      ["not met", str(t[False, True]), str(t[False, False])]]))
    if a.disagreeing:
        total = a.runs - a.agree
        out.append(Table(f"runs where the reference and the outcome disagree, version {version[:12]}",
                         [Column("scenario", key=True), Column("trial", "right"), Column("reference"),
                          Column("outcome"), Column("why the reference failed it")],
                         [[d.scenario, str(d.trial), "met" if d.reference_ok else "not met",
                           "pass" if d.output_ok else "fail", d.why or "—"] for d in a.disagreeing],
                         more="runs", total=total))
        if total > len(a.disagreeing):
            out.append(note(f"  {len(a.disagreeing)} of the {total} disagreeing runs were kept (the first graded)"))
    left = [f"{a.no_verdict} runs without a reference verdict (no gold)"] if a.no_verdict else []
    left += [f"{a.unknown} runs whose outcome is unknown"] if a.unknown else []
    out.append(note(f"agreement rests on: reference mode {a.mode}; outcome = the run's recorded outcome.passed; "
                    f"sampling unit: the run (trials of a task counted as independent); "
                    f"{100 * a.level:.0f}% equal-tailed credible interval under a Beta({a.prior[0]:g}, "
                    f"{a.prior[1]:g}) prior" + (f"; left out: {', '.join(left)}" if left else "")))
    return out


#: What grading keeps of one run (its grade and violations) when every row is kept (``rows=None``).
GRADE_BYTES = 4_000


def grade(ledger, spec, *, files: Sequence[str] = (), input_format: str | None = None,
          identity: dict | None = None, version: str | None = None, scenario: str | None = None,
          prior: str | Sequence[float] = (0.5, 0.5), level: float = 0.95, store: bool = True,
          show_violations: bool = False, unknown: str = "fail", executor: str | None = None,
          jobs: int | None = None, address: str | None = None, progress: Any = None, reuse: bool = False,
          rows: int | None = TABLE_ROWS, sink: Any = None, agreement_with: str | None = None) -> GradeResult:
    """Grade runs from ``files`` (or from the ledger) against ``spec`` (a path, a dict or a Spec).

    ``ledger`` may be a callable that opens it, so a bad spec is refused before any ledger is touched.
    Grading the ledger stores each grade under the spec's digest unless ``store=False``; ``reuse``
    reads back the grades stored under it without storing anything (the report's read-only use).
    ``unknown``: a run whose outcome is unknown is a run whose output is not ok (``"fail"``) or is
    left out of the luck rate's runs (``"exclude"``); it is graded and gated either way.
    The result keeps the ``rows`` worst grades of each version (every grade when None: memory
    then grows with the runs, and a request past the machine is refused first); ``sink``, when
    given, is called with every grade's JSON (a list of bytes at a time) as it is made, in order:
    how ``--json`` and ``--jsonl`` stream every grade without holding them.
    ``agreement_with="outcome"`` adds, per version, the agreement of the reference's verdict
    with the runs' recorded outcome (:func:`fluke.grading.reference_agreement`): the spec must
    have a reference.
    """
    unknown = check_unknown(unknown)
    from ..grading import ChunkGrader, grade_run, load_spec
    from ._select import check_level

    spec_path = spec if isinstance(spec, str) else None
    spec = spec if hasattr(spec, "digest") else load_spec(spec)  # refused before any run is read
    if agreement_with not in (None, "outcome"):
        raise UsageError(f"agreement_with={agreement_with!r}: the one thing a reference is set against is "
                         "'outcome' (the runs' recorded outcome)")
    if agreement_with and spec.reference is None:
        raise UsageError("--agreement-with outcome measures how the spec's reference agrees with the outcome, "
                         "and this spec has no reference (add reference: gold or a list of calls)")
    if callable(ledger):  # a ledger opened only once the spec is known to be good
        ledger = ledger()
    prior_ab = parse_luck_prior(prior)
    check_level(level, "level")
    if files:
        from ..adapters import read_file

        if version or scenario:
            raise UsageError("--version/--scenario filter the ledger only; with FILES, grade the files you want")
        from itertools import islice

        from ._grade_stream import Merge

        runs = (r for path in files for r in read_file(path, format=input_format, identity=identity or {}))
        grader, merged, labels = ChunkGrader(spec.body, keep=rows, lines=sink is not None), Merge(rows, sink), {}
        fit = Vocabulary.of_spec(spec)
        while part := list(islice(runs, 500)):   # graded 500 at a time as they stream, then dropped
            for run in part:
                if run.version not in labels:
                    labels[run.version] = run.identity.label()
                if not fit.full:
                    fit.add_run(run)
            merged.add(grader.collect(((grade_run(r, spec), None) for r in part), number=merged.tally.runs))
        tally, worst = merged.tally, merged.rows()
        stored, reused, source = None, 0, ", ".join(files)
    else:
        chosen = select_versions(ledger, version)
        if chosen is None:
            require_runs(ledger)
        total = ledger.count(scenario=scenario, version=chosen)
        if rows is None:   # every grade is held only when every row is asked for
            from ._budget import check_budget

            check_budget(total, "grade --all", GRADE_BYTES,
                         hint="grade one version or scenario at a time (--version, --scenario), or stream "
                              "every grade with --jsonl instead of --all")
        if store:
            ledger.put_document("spec", spec.body)
        from ._grade_stream import grade_ledger

        graded = grade_ledger(ledger, spec, version=chosen, scenario=scenario, store=store, reuse=reuse,
                              executor=executor,
                              jobs=jobs, address=address, total=total, progress=progress, keep=rows, sink=sink)
        tally, worst, stored, reused = graded.tally, graded.worst, graded.stored, graded.reused
        fit = sample_ledger(ledger, spec, version=chosen, scenario=scenario)
        seen = set(tally.versions())
        labels = {info.version: info.label() for info in ledger.versions() if info.version in seen}
        source = f"ledger {ledger.url}"
    versions = tally.versions()
    excluded = UnknownPolicy.of(unknown).excludes
    luck = {v: tally.luck(v, prior=prior_ab, level=level, exclude_unknown=excluded) for v in versions}
    return GradeResult(spec, spec_path, source, tally.runs, worst, labels, luck, tally.gate(), stored,
                       show_violations, {v: tally.unknowns(v) for v in versions}, unknown, reused,
                       {v: tally.version_runs(v) for v in versions}, {v: tally.reference(v) for v in versions},
                       {v: tally.agreement(v, prior=prior_ab, level=level) for v in versions}
                       if agreement_with else None, vocabulary=fit)

