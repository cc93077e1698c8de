"""Inspect AI eval logs, read without ``inspect_ai``: ``.eval`` archives and ``.json`` logs.

Reading rules:

* Each sample × epoch is one run: scenario ``<task>/<sample id>``, trial ``epoch - 1``.
* Identity: model = ``eval.model``; world = ``inspect/<task>`` (plus its version when not 0);
  harness = the solver (``eval.solver`` or the plan's step names) with a digest of the plan's
  steps and parameters, so a changed prompt or tool list is a new version; grader = the
  scorer that decides the outcome, with its options; date = ``eval.created``.
* Outcome: the score of one scorer (option ``score``; default the log's headline scorer,
  else the only or first one). Its value becomes a number by Inspect's own rule
  (``C`` 1, ``P`` 0.5, ``I`` and ``N`` 0, ``yes``/``true`` 1, ``no``/``false`` 0, numbers and
  booleans as they are); a dict of values needs ``score="scorer.key"``. That number is the
  reward; the run passes when it is at least ``pass_at`` (option, default 1.0): with the
  default a partial score fails.
* Tool calls come from ``messages`` (issued where the assistant issued them, results paired
  by ``tool_call_id``, ``ChatMessageTool.error`` → ``ok=False``); ``tool`` events add their
  times and any call the final messages lost (compaction, sub-agents), placed by time.
* ``attachment://<hash>`` strings are replaced by the sample's ``attachments``.
* A sample with ``error`` keeps its runs with ``Run.error`` set and an ``error`` label.

>>> log = {"version": 2, "status": "success", "eval": {"task": "t", "model": "m",
...        "created": "2026-01-01T00:00:00+00:00", "scorers": [{"name": "match"}]},
...        "samples": [{"id": 1, "epoch": 2, "scores": {"match": {"value": "C"}}, "messages": [
...            {"role": "user", "content": "2+3?"},
...            {"role": "assistant", "content": "", "tool_calls": [
...                {"id": "c1", "function": "add", "arguments": {"a": 2, "b": 3}}]},
...            {"role": "tool", "tool_call_id": "c1", "content": "5"}]}]}
>>> [run] = read(iter([(None, log)]), file="t.json", identity={})
>>> run.scenario, run.trial, run.outcome.passed, [(c.tool, c.result, c.ok) for c in run.tool_calls]
('t/1', 1, True, [('add', '5', True)])
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Iterator

from ..errors import InputError
from ..record import AgentMessage, Run, ToolCall, UserMessage, digest
from ._archive import Archive
from ._common import as_dict, as_list, build_run, building, epoch, with_identity
from ._runparts import text_of
from ._reader import Reader


#: Inspect's ``value_to_float`` defaults: the letters its scorers write.
LETTER_VALUES = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}
_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}
_ATTACHMENT = re.compile(r"attachment://([0-9a-f]+)")
_SAMPLE_MEMBER = re.compile(r"\Asamples/.+\.json\Z")


def sniff(doc: Any) -> bool:
    """An Inspect log: an archive with ``header.json``, or a JSON log with ``eval`` and ``version``."""
    if isinstance(doc, Archive):
        return "header.json" in doc.names() or "_journal/start.json" in doc.names()
    return (isinstance(doc, dict) and isinstance(doc.get("eval"), dict) and "version" in doc
            and "task" in doc["eval"])


def read(docs: Iterable[tuple[str | None, Any]], *, file: str, identity: dict[str, Any],
         options: dict[str, Any] | None = None) -> Iterator[Run]:
    """Yield one run per sample × epoch of each log in ``docs``."""
    options = options or {}
    pass_at = _pass_at(options.get("pass_at", 1.0), file)
    for record, doc in docs:
        if isinstance(doc, Archive):
            header = doc.json("header.json") if "header.json" in doc.names() else doc.json("_journal/start.json")
            names = sorted(n for n in doc.names() if _SAMPLE_MEMBER.match(n))
            samples: Iterable[tuple[str, Any]] = ((n, doc.json(n)) for n in names)
        elif sniff(doc):
            header = doc
            raw = doc.get("samples") or []
            if not isinstance(raw, list):
                raise InputError(file, record, "samples", f"expected a list, got {type(raw).__name__}")
            samples = ((f"sample {i}", s) for i, s in enumerate(raw))
        else:
            raise InputError(file, record, None, "is not an Inspect AI log",
                             hint="expected {version, eval, samples} or a .eval archive")
        with building(file, record):   # a header value too deep to digest names the file
            log = _LogInfo(header, file, record, options.get("score"))
        for where, sample in samples:
            where = where if record is None else f"{record}: {where}"
            with building(file, where):   # a value the run model refuses names its field
                run = _run(sample, log, pass_at, identity, file, where)
            yield run


def _pass_at(value: Any, file: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InputError(file, None, "pass_at", f"option pass_at={value!r} is not a number") from None


class _LogInfo:
    """What every sample of one log shares: identity parts and the deciding scorer."""

    def __init__(self, header: Any, file: str, record: str | None, score: Any) -> None:
        if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
            raise InputError(file, record, "eval", "is missing", hint="the log may be from another tool")
        version = header.get("version")
        if isinstance(version, int) and version > 2:
            raise InputError(file, record, "version", f"log version {version} is newer than this reader (2)",
                             hint="upgrade fluke, or convert it with: inspect log convert --to json")
        ev = header["eval"]
        self.task = str(ev.get("task") or "task")
        scorers = [s for s in as_list(ev.get("scorers")) if isinstance(s, dict) and isinstance(s.get("name"), str)
                   and s["name"]]
        headline = (
            ((header.get("results") or {}).get("headline") or {}) if isinstance(header.get("results"), dict) else {}
        )
        default = headline.get("scorer") if isinstance(headline, dict) else None
        default = default if isinstance(default, str) else None
        self.score_name = str(score) if score is not None else (
            default or (scorers[0]["name"] if scorers else None))
        scorer, _, self.score_key = (self.score_name or "").partition(".")
        self.scorer = scorer or None
        chosen = next((s for s in scorers if s["name"] == self.scorer), None)
        plan = header.get("plan") if isinstance(header.get("plan"), dict) else {}
        steps = [s for s in as_list(plan.get("steps")) if isinstance(s, dict)]
        solver = ev.get("solver") or ",".join(str(s.get("solver")) for s in steps) or None
        task_version = ev.get("task_version")
        world = f"inspect/{self.task}" + (f"@{task_version}" if task_version not in (None, 0, "0") else "")
        self.identity = {
            "model": ev.get("model") if isinstance(ev.get("model"), str) else None,
            "world": world,
            "harness": {"inspect_solver": solver,
                        "plan_sha256": digest({"solver": ev.get("solver"), "solver_args": ev.get("solver_args"),
                                               "steps": [[s.get("solver"), s.get("params")] for s in steps]})},
            "grader": None if self.scorer is None else {
                "inspect_scorer": self.score_name, "options": (chosen or {}).get("options") or {}},
            "date": ev.get("created") if isinstance(ev.get("created"), str) else None,
        }


def _resolve(value: Any, attachments: dict[str, Any]) -> Any:
    """``value`` with every ``attachment://<hash>`` string replaced by its attachment."""
    if isinstance(value, str):
        if "attachment://" not in value:
            return value
        whole = _ATTACHMENT.fullmatch(value)
        if whole and whole.group(1) in attachments:
            return attachments[whole.group(1)]
        return _ATTACHMENT.sub(lambda m: str(attachments.get(m.group(1), m.group(0))), value)
    if isinstance(value, list):
        return [_resolve(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, attachments) for k, v in value.items()}
    return value


def score_value(value: Any) -> float | None:
    """An Inspect score value as a number (None when it has none).

    >>> score_value("C"), score_value("P"), score_value(0.25), score_value(True), score_value("maybe")
    (1.0, 0.5, 0.25, 1.0, None)
    """
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if text in LETTER_VALUES:
            return LETTER_VALUES[text]
        if text.lower() in _WORDS:
            return _WORDS[text.lower()]
        try:
            return float(text)
        except ValueError:
            return None
    return None


def _outcome(sample: dict, log: _LogInfo, pass_at: float, file: str, where: str) -> dict[str, Any]:
    scores = sample.get("scores")
    if not isinstance(scores, dict) or not scores:
        return {}
    scorer = log.scorer
    if scorer is None:   # the log names no scorer: a single one decides, several need the option
        if len(scores) > 1:
            raise InputError(file, where, "scores", "has several scorers and the log names none",
                             hint="choose one with the score option: " + ", ".join(map(str, scores)))
        scorer = next(iter(scores))
    if scorer not in scores:
        raise InputError(file, where, "scores", f"has no scorer {scorer!r}",
                         hint="choose one with the score option: " + ", ".join(map(str, scores)))
    score = scores[scorer]
    value = score.get("value") if isinstance(score, dict) else score
    if isinstance(value, dict):
        if not log.score_key:
            raise InputError(file, where, f"scores.{scorer}.value",
                             "holds several values: say which decides",
                             hint="use score=" + " or score=".join(f"{scorer}.{k}" for k in value))
        if log.score_key not in value:
            raise InputError(file, where, f"scores.{scorer}.value", f"has no key {log.score_key!r}",
                             hint="keys: " + ", ".join(map(str, value)))
        value = value[log.score_key]
    reward = score_value(value)
    if reward is None:
        raise InputError(file, where, f"scores.{scorer}.value", f"{value!r} is not a score fluke can read",
                         hint="expected C/I/P/N, a number or a boolean")
    passed = reward >= pass_at
    return {"reward": reward, "passed": passed, "label": "complete" if passed else "fail"}


def _run(sample: Any, log: _LogInfo, pass_at: float, supplied: dict[str, Any], file: str, where: str) -> Run:
    if not isinstance(sample, dict):
        raise InputError(file, where, None, f"expected a sample object, got {type(sample).__name__}")
    attachments = sample.get("attachments") if isinstance(sample.get("attachments"), dict) else {}
    sid, ep = sample.get("id"), sample.get("epoch", 1)
    if sid is None or isinstance(sid, (dict, list)):
        raise InputError(file, where, "id", "a sample needs an id (a string or a number)")
    if isinstance(ep, bool) or not isinstance(ep, int) or ep < 1:
        raise InputError(file, where, "epoch", f"expected a whole number from 1, got {ep!r}")
    events = _events(_resolve(sample.get("messages") or [], attachments),
                     _resolve(as_list(sample.get("events")), attachments), file, where)
    outcome = _outcome(sample, log, pass_at, file, where)
    error = sample.get("error")
    limit = sample.get("limit")
    message = None
    if isinstance(error, dict):
        message = str(error.get("message") or error)
        outcome = {**outcome, "label": "error", "passed": outcome.get("passed")}
    elif isinstance(limit, dict):
        message = f"{limit.get('type', 'a')} limit reached" + (f" ({limit['limit']})" if limit.get("limit") else "")
    cost: dict[str, float] = {}
    for usage in as_dict(sample.get("model_usage")).values():
        for key in ("input_tokens", "output_tokens", "total_tokens"):
            value = usage.get(key) if isinstance(usage, dict) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                cost[key] = cost.get(key, 0) + value
    latency = sample.get("total_time")
    fields = {
        "scenario": f"{log.task}/{sid}",
        "trial": ep - 1,
        "identity": with_identity(log.identity, supplied, file=file, record=where),
        "events": events,
        "outcome": outcome,
        "cost": cost,
        "latency": latency if isinstance(latency, (int, float)) and not isinstance(latency, bool) else None,
        "error": message,
        "source": {"adapter": "inspect", "file": file, "position": f"{sid}#{ep}"},
    }
    return build_run(fields, file=file, record=where)


def _events(messages: Any, raw_events: Any, file: str, where: str) -> list[Any]:
    if not isinstance(messages, list):
        raise InputError(file, where, "messages", f"expected a list, got {type(messages).__name__}")
    items: list[Any] = []
    by_id: dict[str, dict[str, Any]] = {}
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise InputError(file, where, f"messages.{i}", f"expected an object, got {type(m).__name__}")
        role = m.get("role")
        if role == "user":
            text = text_of(m.get("content"))
            if text:
                items.append(UserMessage(text=text))
        elif role == "assistant":
            text = text_of(m.get("content"))
            if text:
                items.append(AgentMessage(text=text))
            for j, tc in enumerate(as_list(m.get("tool_calls"))):
                if not isinstance(tc, dict):
                    raise InputError(file, where, f"messages.{i}.tool_calls.{j}", "a tool call is not an object")
                call = _call(tc.get("id"), tc.get("function"), tc.get("arguments"))
                if tc.get("parse_error"):
                    call.update(ok=False, error=str(tc["parse_error"]))
                items.append(call)
                if call["call_id"]:
                    by_id[call["call_id"]] = call
        elif role == "tool":
            call = by_id.get(m.get("tool_call_id")) if isinstance(m.get("tool_call_id"), str) else None
            if call is None:
                call = _call(m.get("tool_call_id"), m.get("function"), None)
                call["args"] = None
                items.append(call)
            _answer(call, m.get("content"), m.get("error"))
        # system messages say nothing about the path.
    _merge_tool_events(items, by_id, raw_events)
    return [ToolCall(**e) if isinstance(e, dict) else e for e in items]


def _call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    return {"tool": str(name or "<unnamed>"), "args": {} if arguments is None else arguments,
            "call_id": call_id if isinstance(call_id, str) and call_id else None, "ok": None}


def _answer(call: dict[str, Any], content: Any, error: Any) -> None:
    result = content if not isinstance(content, list) else text_of(content) or content
    if isinstance(error, dict) or (error and isinstance(error, str)):
        text = str(error.get("message") or error.get("type")) if isinstance(error, dict) else error
        call.update(ok=False, error=text, result=result if result not in ("", None) else None)
    elif call.get("ok") is not False:
        call.update(ok=True, result=result)


def _merge_tool_events(items: list[Any], by_id: dict[str, dict[str, Any]], raw_events: Any) -> None:
    """Times from ``tool`` events onto their calls; calls only the events hold, placed by time."""
    if not isinstance(raw_events, list):
        return
    tools = [e for e in raw_events if isinstance(e, dict) and e.get("event") == "tool"]
    lost = []
    for e in tools:   # first every known call's times, so that the lost ones can be placed
        call = by_id.get(e.get("id")) if isinstance(e.get("id"), str) else None
        if call is None:
            lost.append(e)
            continue
        call.update(t_start=epoch(e.get("timestamp")), t_end=epoch(e.get("completed")))
        if call.get("ok") is None and ("result" in e or e.get("error")):
            _answer(call, e.get("result"), e.get("error"))
    for e in lost:
        call = _call(e.get("id"), e.get("function"), e.get("arguments"))
        call.update(t_start=epoch(e.get("timestamp")), t_end=epoch(e.get("completed")),
                    agent=e.get("agent") if isinstance(e.get("agent"), str) else None)
        if "result" in e or e.get("error"):
            _answer(call, e.get("result"), e.get("error"))
        at = len(items)
        if call["t_start"] is not None:
            at = next((i for i, x in enumerate(items) if isinstance(x, dict) and x.get("t_start") is not None
                       and x["t_start"] > call["t_start"]), len(items))
        items.insert(at, call)
        if call["call_id"]:
            by_id[call["call_id"]] = call


READER = Reader(
    "inspect", "Inspect AI eval logs (.eval archives and .json)",
    sniff=sniff, read=read, takes="documents", archive=True, options=("score", "pass_at"),
)
