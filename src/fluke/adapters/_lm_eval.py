"""lm-evaluation-harness per-sample logs (``lm_eval ... --log_samples --output_path OUT``).

The harness writes, under ``OUT/<model_name_sanitized>/``, one ``samples_<task>_<date>.jsonl``
per task (one line per document and filter: ``doc_id``, ``doc``, ``target``, ``arguments``,
``resps``, ``filtered_resps``, ``filter``, ``metrics`` (the metric names), ``doc_hash``,
``prompt_hash``, ``target_hash`` and each metric's value) and one ``results_<date>.json``
with the run's configuration (``model_name``, ``config.model_args``, ``lm_eval_version``,
``n-shot``), the same ``<date>`` for one run.

Reading rules:

* One run per document: scenario ``<task>/<doc_id>`` (the task from the file name, else
  ``identity["scenario"]``, else the file's stem); trial: the file's place among the sample
  files of the same task in its folder, in the order of their dates (so the runs of one
  task on different days are trials 0, 1, ...; a file read alone keeps its number).
* Outcome: the metric named by the ``score`` option, else the first of the line's
  ``metrics``; true/false, or a number that passes at ``pass_at`` (default 1.0: ``acc``,
  ``exact_match``, ``pass@1`` are 0 or 1). A metric that is missing or not a number is an
  unknown outcome (``passed=None``). The reward is the metric's value.
* Filters: a task with several filters (``strict-match`` and ``flexible-extract``) writes a
  line per document and filter, the same response judged twice: the ``filter`` option picks
  one (default: the first in the file); the lines of the others are not read, and the ingest
  summary says how many were left.
* Identity: ``model`` from ``results_<date>.json`` beside the file (``model_name``, else the
  ``pretrained=`` of ``config.model_args``), else ``--identity``, else the folder name (the
  harness names it after the model); ``harness`` ``{"lm_eval": <version>}``; ``world``
  ``lm-eval/<task>`` (+ ``@<n>-shot``); ``grader`` the metric and filter.
* Events: the prompt (``arguments.gen_args_0.arg_0``) as a user message and the filtered
  response as an agent message, where they are text.

>>> lines = [(1, {"doc_id": 0, "doc": {}, "target": "4", "arguments": {"gen_args_0": {"arg_0": "2+2="}},
...               "resps": [["4"]], "filtered_resps": ["4"], "filter": "none", "metrics": ["exact_match"],
...               "doc_hash": "a", "prompt_hash": "b", "target_hash": "c", "exact_match": 1.0})]
>>> [(r.scenario, r.outcome.passed, r.events[-1].text) for r in read(lines, file="", identity={"scenario": "arith"})]
[('arith/0', True, '4')]
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable, Iterator

import orjson

from ..errors import InputError
from ..record import Run
from ._common import build_run, with_identity
from ._reader import Reader

_SAMPLES = re.compile(r"\Asamples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d.-]+)\.jsonl\Z")
#: Keys of a logged sample that are not metrics.
_BOOKKEEPING = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics", "doc_hash",
                "prompt_hash", "target_hash"}


def sniff(first: Any) -> bool:
    """A JSON object with ``doc_id``, ``target`` and ``filtered_resps`` (one logged sample)."""
    return isinstance(first, dict) and "doc_id" in first and "target" in first and "filtered_resps" in first


def _siblings(path: Path) -> tuple[str | None, int, str | None]:
    """(task, this file's place among its task's sample files by date, its date) from the name."""
    m = _SAMPLES.match(path.name)
    if not m:
        return None, 0, None
    task = m.group("task")
    try:
        dates = sorted(n.group("date") for f in path.parent.iterdir()
                       if (n := _SAMPLES.match(f.name)) and n.group("task") == task)
    except OSError:
        dates = [m.group("date")]
    return task, dates.index(m.group("date")) if m.group("date") in dates else 0, m.group("date")


def _results(path: Path, date: str | None) -> dict[str, Any]:
    """The run's ``results_<date>.json`` beside the samples, or {}."""
    if date is None:
        return {}
    try:
        found = orjson.loads((path.parent / f"results_{date}.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return found if isinstance(found, dict) else {}


def _model(results: dict[str, Any]) -> str | None:
    name = results.get("model_name")
    if isinstance(name, str) and name:
        return name
    config = results.get("config") if isinstance(results.get("config"), dict) else {}
    args = config.get("model_args")
    if isinstance(args, str):
        m = re.search(r"(?:^|,)\s*(?:pretrained|model)=([^,]+)", args)
        if m:
            return m.group(1).strip()
    return None


def _metric(line: dict[str, Any], chosen: str | None) -> str | None:
    if chosen is not None:
        return chosen
    names = line.get("metrics")
    if isinstance(names, list) and names and isinstance(names[0], str):
        return names[0]
    return next((k for k, v in line.items() if k not in _BOOKKEEPING and isinstance(v, (int, float))), None)


def _text(value: Any) -> str | None:
    while isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else None


def read(lines: Iterable[tuple[int, Any]], *, file: str, identity: dict[str, Any],
         options: dict[str, Any] | None = None, notes: list[str] | None = None) -> Iterator[Run]:
    """Yield one run per document of the chosen filter."""
    options = options or {}
    pass_at = options.get("pass_at", 1.0)
    if isinstance(pass_at, bool) or not isinstance(pass_at, (int, float)):
        raise InputError(file, None, "pass_at", f"expected a number, got {pass_at!r}")
    path = Path(file) if file else None
    task, place, date = _siblings(path) if path else (None, 0, None)
    results = _results(path, date) if path else {}
    supplied = dict(identity)
    prefix = task or supplied.pop("scenario", None) or (path.stem if path else "lm-eval")
    supplied.pop("scenario", None)
    trial = int(supplied.pop("trial", place) or 0)
    supplied.pop("unit", None)
    version = results.get("lm_eval_version")
    shots = (results.get("n-shot") or {}).get(task) if isinstance(results.get("n-shot"), dict) else None
    found = {"model": _model(results), "harness": {"lm_eval": str(version) if version else "unknown"},
             "world": f"lm-eval/{prefix}" + (f"@{shots}-shot" if isinstance(shots, int) else "")}
    folder = path.parent.name if path and results == {} and task else None
    chosen_filter = options.get("filter")
    left: dict[str, int] = {}
    for number, line in lines:
        record = f"line {number}"
        if not isinstance(line, dict):
            raise InputError(file, record, None, f"expected a logged sample object, got {type(line).__name__}")
        kind = line.get("filter", "none")
        kind = kind if isinstance(kind, str) else "none"
        if chosen_filter is None:
            chosen_filter = kind
        if kind != chosen_filter:
            left[kind] = left.get(kind, 0) + 1
            continue
        doc_id = line.get("doc_id")
        if isinstance(doc_id, bool) or not isinstance(doc_id, (int, str)):
            raise InputError(file, record, "doc_id", f"expected an integer or a string, got {doc_id!r}")
        metric = _metric(line, options.get("score"))
        value = line.get(metric) if metric is not None else None
        if isinstance(value, bool):
            reward: float | None = float(value)
        elif isinstance(value, (int, float)) and value == value:   # not NaN
            reward = float(value)
        else:
            reward = None
        passed = None if reward is None else reward >= pass_at
        ident = dict(found, grader={"lm_eval_metric": metric, "filter": kind})
        if ident["model"] is None and not supplied.get("model") and folder:
            ident["model"] = folder
        events = []
        arguments = line.get("arguments")
        prompt = _text(arguments.get("gen_args_0", {}).get("arg_0")) if isinstance(arguments, dict) and \
            isinstance(arguments.get("gen_args_0"), dict) else _text(arguments)
        if prompt:
            events.append({"kind": "user", "text": prompt})
        answer = _text(line.get("filtered_resps"))
        if answer is not None:
            events.append({"kind": "agent", "text": answer})
        fields = {"scenario": f"{prefix}/{doc_id}", "trial": trial,
                  "identity": with_identity(ident, supplied, file=file, record=record), "events": events,
                  "outcome": {"passed": passed, "reward": reward,
                              "label": None if passed is None else ("complete" if passed else "fail")},
                  "source": {"adapter": "lm-eval", "file": file, "position": number}}
        yield build_run(fields, file=file, record=record)
    if left and notes is not None:
        notes.append(f"lm-eval: read the lines of filter {chosen_filter!r}; left "
                     + ", ".join(f"{n} of filter {k!r}" for k, n in sorted(left.items()))
                     + " (choose one with the reader option filter)")


READER = Reader(
    "lm-eval", "lm-evaluation-harness --log_samples JSONL (samples_<task>_<date>.jsonl)",
    sniff=sniff, read=read, takes="lines", options=("score", "pass_at", "filter"), notes=True,
)
