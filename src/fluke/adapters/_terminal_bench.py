"""Terminal-Bench and Harbor results, read without either harness.

Accepted files:

* Terminal-Bench's run ``results.json`` (``{"id", "results": [trial, ...], "accuracy", ...}``)
  and one trial's ``results.json`` (``{"task_id", "trial_name", "is_resolved",
  "failure_mode", ...}``);
* Harbor's trial ``result.json`` (``{"task_name", "trial_name", "agent_info",
  "verifier_result", "exception_info", ...}``) and a job ``result.json`` that lists its
  ``trial_results`` (a job file without them reads the ``*/result.json`` of its trial folders).

Reading rules:

* One run per trial: scenario = ``task_id`` (Harbor: ``task_name``); trial = ``k - 1`` from a
  trial name ``<task>.<k>-of-<n>.<run>``, else the trial's position among that task's
  trials in the file (Harbor's ``<task>__<random>`` names carry no number).
* Outcome: ``is_resolved`` true → passed, false → failed, null → unknown (``passed=None``).
  A ``failure_mode`` other than ``unset``/``none`` is kept as :attr:`Run.error`. Harbor: the
  verifier's ``reward`` (or its only reward) is the reward and passes at 1.0; no verifier
  result → unknown; ``exception_info`` → :attr:`Run.error` (type: message).
* Identity: from the file where it says (Harbor ``agent_info.name``/``version`` → harness,
  ``agent_info.model_info.name`` → model), else ``run_metadata.json`` beside the run
  results (``agent_name``, ``model_name``, ``dataset_name``@``dataset_version`` → world),
  else what you pass, else the leaderboard folder layout
  ``<dataset>@<version>/<YYYYMMDD>_<agent>_<model>/...``: a guess, so it only fills what
  nothing else gives (an agent name holding ``_`` is split wrongly: pass ``--identity``).
* Tokens (``total_input_tokens``/``total_output_tokens``; Harbor ``n_input_tokens``,
  ``n_output_tokens``, ``cost_usd``) go to :attr:`Run.cost`; latency is the agent's time
  (else the trial's). There is no trajectory: runs have no events (the ``.cast`` recordings
  and agent logs are not read), and ``parser_results`` (per-test outcomes) are not kept.

>>> doc = {"results": [{"task_id": "hello", "trial_name": "hello.1-of-2.run", "is_resolved": True},
...                    {"task_id": "hello", "trial_name": "hello.2-of-2.run", "is_resolved": None,
...                     "failure_mode": "agent_timeout"}]}
>>> [(r.scenario, r.trial, r.outcome.passed, r.error) for r in read(doc, file="", identity={})]
[('hello', 0, True, None), ('hello', 1, None, 'agent_timeout')]
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import orjson

from ..errors import InputError
from ..record import Identity, Run
from ._common import build_run, epoch
from ._runparts import RunBase

_TRIAL = re.compile(r"\A(?P<task>.+)\.(?P<k>\d+)-of-(?P<n>\d+)(?:\..*)?\Z")
_SUBMISSION = re.compile(r"\A(?P<date>\d{8})_(?P<agent>[^_]+)_(?P<model>.+)\Z")
_QUIET = {None, "", "unset", "none"}


def _is_tb_trial(d: Any) -> bool:
    return isinstance(d, dict) and "is_resolved" in d and ("task_id" in d or "trial_name" in d)


def _is_harbor_trial(d: Any) -> bool:
    return isinstance(d, dict) and "task_name" in d and "trial_name" in d and (
        "verifier_result" in d or "agent_info" in d or "exception_info" in d)


def sniff(doc: Any) -> bool:
    """Terminal-Bench run or trial results, or Harbor trial or job results."""
    if _is_tb_trial(doc) or _is_harbor_trial(doc):
        return True
    if isinstance(doc, dict):
        results = doc.get("results") if isinstance(doc.get("results"), list) else doc.get("trial_results")
        if isinstance(results, list):
            return bool(results) and (_is_tb_trial(results[0]) or _is_harbor_trial(results[0]))
        return "n_total_trials" in doc and isinstance(doc.get("stats"), dict)
    return False


def _json_file(path: Path) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


def _folder_identity(file: str) -> dict[str, Any]:
    """What the file's folders say: ``run_metadata.json`` and the leaderboard layout."""
    if not file:   # a document read in memory has no folders
        return {"meta": {}, "guess": {}}
    path = Path(file).resolve()
    meta: dict[str, Any] = {}
    for folder in list(path.parents)[:3]:   # the run folder, or a trial's run two levels up
        found = _json_file(folder / "run_metadata.json")
        if isinstance(found, dict):
            meta = found
            break
    given: dict[str, Any] = {}
    if isinstance(meta.get("model_name"), str):
        given["model"] = meta["model_name"]
    if isinstance(meta.get("agent_name"), str):
        given["harness"] = meta["agent_name"]
    if isinstance(meta.get("dataset_name"), str):
        version = meta.get("dataset_version")
        given["world"] = meta["dataset_name"] + (f"@{version}" if version else "")
    guessed: dict[str, Any] = {}
    for folder in path.parents:
        m = _SUBMISSION.match(folder.name)
        if m:
            guessed = {"harness": m.group("agent"), "model": m.group("model")}
            if "@" in folder.parent.name:
                guessed["world"] = folder.parent.name
            break
    return {"meta": given, "guess": guessed}


def _trials(doc: Any, file: str) -> list[tuple[str, dict[str, Any]]]:
    if _is_tb_trial(doc) or _is_harbor_trial(doc):
        return [("trial 0", doc)]
    results = doc.get("results") if isinstance(doc.get("results"), list) else doc.get("trial_results")
    if isinstance(results, list):
        return [(f"results.{i}" if "results" in doc else f"trial_results.{i}", r) for i, r in enumerate(results)]
    found = []   # a Harbor job result without its trials: read the trial folders beside it
    for child in sorted(Path(file).resolve().parent.glob("*/result.json")) if file else []:
        trial = _json_file(child)
        if _is_harbor_trial(trial):
            found.append((str(child.parent.name), trial))
    if not found:
        raise InputError(file, None, "trial_results", "the job result lists no trials and no trial folder "
                         "beside it holds a result.json", hint="ingest the trial result.json files")
    return found


def read(doc: Any, *, file: str, identity: dict[str, Any]) -> Iterator[Run]:
    """Yield one run per trial."""
    if not isinstance(doc, dict):
        raise InputError(file, None, None, f"expected a results object, got {type(doc).__name__}")
    folders = _folder_identity(file)
    base = RunBase.from_options(identity, file=file)
    seen: dict[str, int] = {}
    for where, trial in _trials(doc, file):
        if not isinstance(trial, dict):
            raise InputError(file, where, None, f"expected a trial object, got {type(trial).__name__}")
        harbor = _is_harbor_trial(trial)
        task = trial.get("task_name") if harbor else trial.get("task_id")
        name = trial.get("trial_name")
        parsed = _TRIAL.match(name) if isinstance(name, str) else None
        if not isinstance(task, (str, int)) or task == "":
            if parsed is None:
                raise InputError(file, where, "task_name" if harbor else "task_id", "is missing",
                                 hint="each trial needs its task")
            task = parsed.group("task")
        task = str(task)
        position = seen.get(task, 0)
        seen[task] = position + 1
        number = int(parsed.group("k")) - 1 if parsed else position
        fields = _harbor(trial, file, where) if harbor else _tb(trial, file, where)
        found = fields.pop("identity")
        ident = Identity(**{k: v for k, v in {**folders["meta"], **found}.items() if v is not None})
        ident = ident.filled(base.identity.model_dump(exclude_none=True)).filled(folders["guess"])
        fields.update(scenario=task, trial=number, unit=base.unit, identity=ident.model_dump(mode="json"),
                      source={"adapter": "terminal-bench", "file": file,
                              "position": name if isinstance(name, str) else where})
        yield build_run(fields, file=file, record=where)


def _seconds(a: Any, b: Any) -> float | None:
    t0, t1 = epoch(a), epoch(b)
    return t1 - t0 if t0 is not None and t1 is not None else None


def _number(d: dict[str, Any], key: str) -> float | None:
    v = d.get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _tb(trial: dict[str, Any], file: str, where: str) -> dict[str, Any]:
    resolved = trial.get("is_resolved")
    if resolved is not None and not isinstance(resolved, bool):
        raise InputError(file, where, "is_resolved", f"expected true, false or null, got {resolved!r}")
    mode = trial.get("failure_mode")
    cost = {k: v for k, v in (("input_tokens", _number(trial, "total_input_tokens")),
                              ("output_tokens", _number(trial, "total_output_tokens"))) if v is not None}
    latency = _seconds(trial.get("agent_started_at"), trial.get("agent_ended_at"))
    if latency is None:
        latency = _seconds(trial.get("trial_started_at"), trial.get("trial_ended_at"))
    return {"identity": {},
            "outcome": {"passed": resolved, "reward": None if resolved is None else float(resolved),
                        "label": None if resolved is None else ("complete" if resolved else "fail")},
            "error": None if (mode is None or (isinstance(mode, str) and mode in _QUIET)) else str(mode),
            "cost": cost, "latency": latency}


def _harbor(trial: dict[str, Any], file: str, where: str) -> dict[str, Any]:
    agent = trial.get("agent_info") if isinstance(trial.get("agent_info"), dict) else {}
    model = agent.get("model_info") if isinstance(agent.get("model_info"), dict) else {}
    harness: Any = agent.get("name") if isinstance(agent.get("name"), str) else None
    if harness and agent.get("version"):
        harness = {"agent": harness, "version": str(agent["version"])}
    model_name = model.get("name") if isinstance(model.get("name"), str) else None
    if model_name and isinstance(model.get("provider"), str) and model["provider"] and "/" not in model_name:
        model_name = f"{model['provider']}/{model_name}"
    verifier = trial.get("verifier_result")
    reward = None
    if isinstance(verifier, dict):
        rewards = verifier.get("rewards") if isinstance(verifier.get("rewards"), dict) else {}
        value = rewards.get("reward", next(iter(rewards.values())) if len(rewards) == 1 else None)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise InputError(file, where, "verifier_result.rewards.reward", f"expected a number, got {value!r}")
        reward = None if value is None else float(value)
    exc = trial.get("exception_info")
    error = None
    if isinstance(exc, dict):
        error = ": ".join(str(exc[k]) for k in ("exception_type", "exception_message") if exc.get(k)) or "exception"
    result = trial.get("agent_result") if isinstance(trial.get("agent_result"), dict) else {}
    cost = {k: v for k, v in (("input_tokens", _number(result, "n_input_tokens")),
                              ("output_tokens", _number(result, "n_output_tokens")),
                              ("usd", _number(result, "cost_usd"))) if v is not None}
    passed = None if reward is None else reward >= 1.0
    execution = trial.get("agent_execution") if isinstance(trial.get("agent_execution"), dict) else {}
    latency = _seconds(execution.get("started_at"), execution.get("finished_at"))
    if latency is None:
        latency = _seconds(trial.get("started_at"), trial.get("finished_at"))
    return {"identity": {"harness": harness or None, "model": model_name or None},
            "outcome": {"passed": passed, "reward": reward,
                        "label": None if passed is None else ("complete" if passed else "fail")},
            "error": error, "cost": cost, "latency": latency}
