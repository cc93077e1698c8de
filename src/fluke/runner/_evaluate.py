"""Run an agent k times per case: resilient about the batch, strict about the verdict.

* A bad spec is refused (``SpecError``) before the first agent call.
* An exception in the agent, in the output check or in grading is caught, recorded on the
  run (``Run.error``), counted as a hard violation, and the batch goes on.
* Each completed run is written to the ledger as soon as it finishes (one ``ingest`` per
  run, then its grade), so a crash loses none of the finished runs; a second call with the
  same identity skips every (scenario, condition, trial) the ledger already holds for
  that version, so a resumed suite duplicates none and pays for no run twice; and a trial
  that another writer recorded while this one ran it is kept once, the first recorded
  (:meth:`fluke.ledger.Ledger.record_once`; counted in ``EvaluationResult.duplicates``).
* With ``tools`` (:class:`fluke.tools.Tools`), an agent taking a ``tools`` keyword calls them
  through a recording session; each run's tool log is stored beside it (a ``tool_log``
  document naming the run's hash, written before the run, so a kill between the two leaves
  an unread document and no run without its log) for ``fluke replay`` and ``fluke intervene``.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Mapping

from pydantic import TypeAdapter, ValidationError

from ..errors import InputError, InputTypeError, UsageError
from ..record import IDENTITY_FIELDS, Event, Identity, Outcome, Run, Source
from ..tools import TOOL_LOG, Logged, ToolAgent, accepts_tools, takes_any_keyword
from ._executors import Attempt, Job, executor_for
from ._types import Case, EvaluationResult, RunResult, Trajectory, as_case

_EVENTS = TypeAdapter(list[Event])


def _seed(base: int, scenario: str, trial: int) -> int:
    """A per-run seed that depends on (base, scenario, trial) only, never on run order."""
    raw = hashlib.sha256(f"{base}|{scenario}|{trial}".encode()).digest()[:8]
    return int.from_bytes(raw, "big") & (2**63 - 1)


def _grading() -> Any:
    from .. import grading  # imported lazily: it loads scipy

    return grading


def _unpack(value: Any) -> tuple[list[Any], Any, dict[str, float], bool | None, float | None, Run | None]:
    """events, output, cost, passed, reward, and the Run itself when the agent returned one."""
    if isinstance(value, Run):
        finals = [e.text for e in value.events if e.kind == "agent"]
        return (list(value.events), finals[-1] if finals else None, dict(value.cost),
                value.outcome.passed, value.outcome.reward, value)
    if isinstance(value, Trajectory):
        return (_EVENTS.validate_python(list(value.events)), value.output, dict(value.cost),
                value.passed, value.reward, None)
    if isinstance(value, tuple) and len(value) == 2:
        return _EVENTS.validate_python(list(value[0])), value[1], {}, None, None, None
    raise InputTypeError(None, None, None,
                         f"returned a {type(value).__name__}; expected a Trajectory, a Run or (events, output)")


def _unlogged(attempt: Attempt) -> tuple[Attempt, dict[str, Any] | None]:
    """The attempt with the agent's own value, and the tool log that came with it (or None)."""
    if isinstance(attempt.value, Logged):
        return Attempt(attempt.value.value, attempt.error, attempt.traceback, attempt.seconds), attempt.value.log
    return attempt, None


def _stopped(run: Run, log: dict[str, Any] | None) -> Run:
    """A run whose tool session stopped at a divergence carries it as its error."""
    diverged = (log or {}).get("diverged")
    if not diverged:
        return run
    return _with_error(run, f"stopped at tool call {diverged['step']}: {diverged['reason']}")


def _build(case: Case, job: Job, attempt: Attempt, identity: Identity) -> Run:
    base: dict[str, Any] = dict(
        scenario=case.scenario, trial=job.trial, unit=case.unit, condition=dict(case.condition),
        tags=list(case.tags), identity=identity, seed=job.seed, latency=attempt.seconds,
        source=Source(adapter="runner", position=f"{case.scenario}#{job.trial}"))
    if attempt.error is not None:
        return Run(**base, error=f"agent raised {attempt.error}", outcome=Outcome(label="error"))
    try:
        events, output, cost, passed, reward, given = _unpack(attempt.value)
    except (TypeError, ValidationError) as exc:
        return Run(**base, error=f"agent {str(exc).splitlines()[0]}", outcome=Outcome(label="error"))
    error = None
    if given is not None:
        base["identity"] = identity.filled(given.identity.model_dump(exclude_none=True))
        error = given.error
    if case.check is not None:
        try:
            verdict = case.check(output)
            passed = bool(verdict)
            reward = float(verdict) if isinstance(verdict, (int, float)) else float(passed)
        except Exception as exc:  # recorded on the run; the batch goes on
            error, passed, reward = f"output check raised {type(exc).__name__}: {exc}", None, None
    label = "error" if error else {True: "complete", False: "fail", None: None}[passed]
    return Run(**base, events=events, cost=cost, error=error,
               outcome=Outcome(passed=passed, reward=reward, label=label))


def _with_error(run: Run, message: str) -> Run:
    body = run.model_dump()
    body["error"] = message if run.error is None else f"{run.error}; {message}"
    body["outcome"] = {**body["outcome"], "label": "error"}
    return Run.model_validate(body)


def _failure(grading: Any, run: Run) -> Any:
    """The grade of a run that raised: one hard violation naming the error."""
    violation = grading.Violation("run_error", "hard", None, run.error)
    return grading.make_grade(run.hash, run.scenario, [violation], run.outcome.passed,
                              version=run.version, trial=run.trial)


def _grade(grading: Any, spec: Any, run: Run) -> tuple[Run, Any]:
    """The run (with ``error`` set if grading raised) and its grade (None: no spec, no error).

    With a spec, a run that raised is graded like any other (its path may still break
    rules); ``grade_run`` adds the ``run_error`` violation for it."""
    if spec is None:
        return run, (_failure(grading, run) if run.error is not None else None)
    try:
        grade = grading.grade_run(run, spec)
    except Exception as exc:  # a grader bug must not cost the batch
        run = _with_error(run, f"grading raised {type(exc).__name__}: {exc}")
        return run, _failure(grading, run)
    return run, grade


def _result(run: Run, grade: Any, **extra: Any) -> RunResult:
    violations = tuple(grade.violations) if grade is not None else ()
    return RunResult(run=run, grade=grade, violations=violations,
                     hard=bool(grade is not None and grade.hard), **extra)


def _open(ledger: Any) -> Any:
    if ledger is None or hasattr(ledger, "ingest"):
        return ledger
    from ..ledger import open_ledger

    return open_ledger(str(ledger))


def evaluate(cases: Iterable[Any], agent: Callable[..., Any], *, k: int, spec: Any = None,
             ledger: Any = None, identity: Identity | Mapping[str, Any] | None = None,
             seed: int = 0, executor: str = "local", workers: int | None = None,
             progress: Callable[[int, int, RunResult], None] | None = None, tools: Any = None) -> EvaluationResult:
    """Run ``agent`` ``k`` times on every case; grade, record and return every run.

    ``spec`` (a dict or a YAML/JSON/TOML path) is validated before any agent call.
    ``ledger`` (a Ledger or a path/URL) receives each run as it finishes; runs already
    there for this ``identity``'s version are not run again. ``seed`` makes each run's
    ``rng`` depend only on (seed, scenario, trial). ``executor`` is ``local`` (default,
    one call at a time), ``threads`` (``workers`` at once), ``processes`` (``workers``
    worker processes; the agent must be picklable) or ``ray``. ``tools`` (a
    :class:`fluke.tools.Tools`) is handed to an agent that takes a ``tools`` keyword as a
    recording session; each run's tool log is stored beside it.

    >>> from fluke.record import ToolCall, AgentMessage
    >>> def agent(text, *, trial):
    ...     if trial == 1:
    ...         raise TimeoutError("model API timed out")
    ...     return Trajectory([ToolCall(tool="lookup", args={"q": text}, ok=True)], output=text.upper())
    >>> result = evaluate([{"scenario": "hello", "input": "hi", "check": lambda o: o == "HI"}],
    ...                   agent, k=3, identity={"model": "toy"})
    >>> [(r.trial, r.outcome.passed, r.error) for r in result.runs]
    [(0, True, None), (1, None, 'agent raised TimeoutError: model API timed out'), (2, True, None)]
    >>> result.hard, result.passes()
    (1, (2, 2))
    """
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise UsageError(f"k={k!r} must be an integer of at least 1", argument="k")
    if not callable(agent):
        raise UsageError(f"agent is a {type(agent).__name__}, not callable",
                         argument="agent", hint="agent(input, *, trial, rng) -> Trajectory")
    if tools is not None:
        if not (accepts_tools(agent) or takes_any_keyword(agent)):
            raise UsageError("tools are declared but the agent takes no `tools` keyword",
                             argument="tools", hint="agent(input, *, trial, rng, tools) -> Trajectory")
        agent = ToolAgent(agent, tools)
    elif accepts_tools(agent):
        raise UsageError("the agent takes a `tools` keyword but no tools are declared",
                         argument="tools", hint="define `tools = fluke.tools.Tools(...)` in the suite, or pass tools=")
    suite = [as_case(c, position=i) for i, c in enumerate(cases)]
    keys = [(c.scenario, Run(scenario=c.scenario, condition=dict(c.condition)).condition_key()) for c in suite]
    if len(set(keys)) != len(keys):
        dup = next(key for key in keys if keys.count(key) > 1)
        raise InputError(None, f"case {dup[0]!r}", "scenario", "appears twice with the same condition",
                         hint="give each case a distinct scenario id")
    grading = _grading()
    spec_obj = spec_digest = None
    if spec is not None:  # refuse a bad spec before spending anything on the agent
        spec_obj = grading.load_spec(spec)
        spec_digest = spec_obj.digest
    if isinstance(identity, Identity):
        ident = identity
    else:
        fields = dict(identity or {})
        unknown = sorted(set(fields) - {*IDENTITY_FIELDS, "date"})
        if unknown:
            raise InputError(None, "identity", unknown[0], "is not an identity field",
                             hint="use: " + ", ".join((*IDENTITY_FIELDS, "date")))
        ident = Identity(**fields)
    if ident.date is None:
        ident = ident.filled({"date": datetime.now(timezone.utc).date().isoformat()})
    run_jobs = executor_for(executor, workers=workers)
    store = _open(ledger)
    try:
        return _evaluate(suite, keys, agent, k=k, grading=grading, spec_obj=spec_obj,
                         spec_digest=spec_digest, store=store, ident=ident, seed=seed,
                         run_jobs=run_jobs, progress=progress)
    finally:
        if store is not None and store is not ledger:  # opened here from a path or URL
            store.close()


def _evaluate(suite: list[Case], keys: list[tuple[str, str]], agent: Callable[..., Any], *, k: int,
              grading: Any, spec_obj: Any, spec_digest: str | None, store: Any, ident: Identity,
              seed: int, run_jobs: Any, progress: Any) -> EvaluationResult:

    done: dict[tuple[str, str, int], Run] = {}
    if store is not None:
        wanted = set(keys)
        for run in store.runs(version=ident.version):
            key = (run.scenario, run.condition_key())
            if key in wanted and run.trial < k:
                done.setdefault((*key, run.trial), run)
    jobs = [Job(i, c.scenario, t, c.input, _seed(seed, c.scenario, t))
            for i, c in enumerate(suite) for t in range(k) if (*keys[i], t) not in done]

    total = len(suite) * k
    results: dict[tuple[int, int], RunResult] = {}
    stored = store.grades(spec_digest) if store is not None and spec_digest is not None else {}
    for i in range(len(suite)):
        for t in range(k):
            run = done.get((*keys[i], t))
            if run is None:
                continue
            run, grade = _grade(grading, spec_obj, run)
            if spec_digest is not None and run.hash not in stored:  # resumed under a new spec
                store.put_grades(spec_digest, [(run.hash, grade.to_dict())])
            results[(i, t)] = _result(run, grade, resumed=True)
            if progress:
                progress(len(results), total, results[(i, t)])

    added = twice = 0
    for job, attempt in run_jobs(jobs, agent):
        attempt, log = _unlogged(attempt)
        run = _stopped(_build(suite[job.case], job, attempt, ident), log)
        run, grade = _grade(grading, spec_obj, run)
        first = None
        if store is not None:  # write now: a crash later must not lose this run
            if log is not None:   # the log first: a run is never stored without it
                store.put_document(TOOL_LOG, {"run": run.hash, **log})
            # one run per version x scenario x condition x trial: another writer (an xdist
            # worker, a second CI job) may have recorded this trial since the ledger was read
            first = store.record_once(run)
            if first is None:
                added += 1
            else:
                twice += 1
                run, grade = _grade(grading, spec_obj, first)
            if spec_digest is not None:
                store.put_grades(spec_digest, [(run.hash, grade.to_dict())])
        result = _result(run, grade, traceback=attempt.traceback if first is None else None,
                         resumed=first is not None, tool_log=log if first is None else None)
        results[(job.case, job.trial)] = result
        if progress:
            progress(len(results), total, result)

    ordered = tuple(results[key] for key in sorted(results))
    return EvaluationResult(results=ordered, k=k, version=ident.version, spec_digest=spec_digest,
                            added=added, resumed=len(done), duplicates=twice)
