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
* A submission of several runs (``<submission>/<run-id>/results.json``, each run folder
  named by Terminal-Bench's ``YYYY-MM-DD__HH-MM-SS`` run id or holding a
  ``run_metadata.json``) numbers its trials across the runs: the runs are taken in the
  order of their folder names (the run ids: the time each started), and the trials of
  the i-th run (from 0) are ``i * n + k - 1``, ``n`` the attempts per task of a run (the
  ``n`` of ``k-of-n``). So the five one-attempt runs of one agent are trials 0 to 4, the
  same whichever of the files is read, alone or with the others.
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
  A submission folder of several runs not in that layout gives its name as the harness, so
  all its runs are one version, told apart from other submissions.
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
from ._reader import Reader

_TRIAL = re.compile(r"\A(?P<task>.+)\.(?P<k>\d+)-of-(?P<n>\d+)(?:\..*)?\Z")
_SUBMISSION = re.compile(r"\A(?P<date>\d{8})_(?P<agent>[^_]+)_(?P<model>.+)\Z")
_QUIET = {None, "", "unset", "none"}
_RUN_ID = re.compile(r"\A\d{4}-\d{2}-\d{2}__\d{2}-\d{2}-\d{2}\Z")


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
        return {"meta": {}, "guess": {}, "run": 0}
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
    run = _run_folder(path)
    runs = _submission_runs(run) if run is not None else []
    if not guessed and len(runs) > 1:
        guessed = {"harness": run.parent.name}
    place = runs.index(run) if run in runs else 0
    return {"meta": given, "guess": guessed, "run": place}


def _is_run_folder(folder: Path) -> bool:
    return bool(_RUN_ID.match(folder.name)) or (folder / "run_metadata.json").is_file()


def _run_folder(path: Path) -> Path | None:
    """The Terminal-Bench run folder of ``path``: its folder for a run's ``results.json``, two
    folders up for a trial's (``<run>/<task>/<trial>/results.json``); None for any other file."""
    if path.name != "results.json":
        return None
    for folder in list(path.parents)[:3]:
        if _is_run_folder(folder):
            return folder
    return None


def _submission_runs(run: Path) -> list[Path]:
    """The run folders beside ``run`` (its submission's runs), in the order of their names."""
    try:
        return sorted(f for f in run.parent.iterdir() if f.is_dir() and _is_run_folder(f))
    except OSError:
        return [run]


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
    # Harbor's trial names (<task>__<random>) carry no number: a task's trials are numbered in
    # the order they started (then by name)
    found.sort(key=lambda item: (str(item[1].get("started_at") or ""), item[0]))
    if not found:
        raise InputError(file, None, "trial_results", "the job result lists no trials and no trial folder "
                         "beside it holds a result.json", hint="ingest the trial result.json files")
    return found


def read(doc: Any, *, file: str, identity: dict[str, Any], notes: list[str] | None = None) -> Iterator[Run]:
    """Yield one run per trial; for a Harbor job, ``notes`` gets the job's own counts beside those read."""
    if not isinstance(doc, dict):
        raise InputError(file, None, None, f"expected a results object, got {type(doc).__name__}")
    job = _job_counts(doc)
    read_counts = {"completed": 0, "errored": 0, "cancelled": 0, "valid": 0}
    folders = _folder_identity(file)
    base = RunBase.from_options(identity, file=file)
    seen: dict[str, int] = {}
    trials = _trials(doc, file)
    per_run = _attempts(trials)
    offset = folders["run"] * per_run
    for where, trial in trials:
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
        number = offset + (int(parsed.group("k")) - 1 if parsed else position)
        fields = _harbor(trial, file, where) if harbor else _tb(trial, file, where)
        if harbor:
            kinds = fields.pop("exceptions")
            read_counts["completed"] += 1
            read_counts["errored"] += bool(kinds)
            read_counts["cancelled"] += "CancelledError" in kinds
            read_counts["valid"] += fields["outcome"]["passed"] is not None
        found = fields.pop("identity")
        ident = Identity(**{k: v for k, v in {**folders["meta"], **found}.items() if v is not None})
        ident = ident.filled(base.identity.model_dump(exclude_none=True)).filled(folders["guess"])
        fields.update(scenario=task, trial=number, unit=base.unit, identity=ident.model_dump(mode="json"),
                      source={"adapter": "terminal-bench", "file": file,
                              "position": name if isinstance(name, str) else where})
        yield build_run(fields, file=file, record=where)
    if job is not None and notes is not None:
        notes.append(_job_note(job, read_counts))


#: A Harbor job's counts (``stats``) and what each is, read, called in the note.
_JOB_COUNTS = (("n_completed_trials", "completed", "trials"), ("n_errored_trials", "errored", "with an exception"),
               ("n_cancelled_trials", "cancelled", "cancelled"))


def _job_counts(doc: dict[str, Any]) -> dict[str, Any] | None:
    """A Harbor job result's own counts (older jobs wrote ``n_trials``/``n_errors``), or None."""
    stats = doc.get("stats")
    if not isinstance(stats, dict) or "n_total_trials" not in doc:
        return None

    def count(key: str, legacy: str | None = None) -> int | None:
        value = stats.get(key, stats.get(legacy) if legacy else None)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    evals = stats.get("evals") if isinstance(stats.get("evals"), dict) else {}
    rewarded = [e.get("n_trials") for e in evals.values() if isinstance(e, dict)]
    return {"id": doc.get("id"), "n_total_trials": doc.get("n_total_trials"),
            "n_completed_trials": count("n_completed_trials", "n_trials"),
            "n_errored_trials": count("n_errored_trials", "n_errors"),
            "n_cancelled_trials": count("n_cancelled_trials"), "n_retries": count("n_retries"),
            "n_pending_trials": count("n_pending_trials"), "n_running_trials": count("n_running_trials"),
            "rewarded": sum(rewarded) if rewarded and all(isinstance(n, int) for n in rewarded) else None}


def _job_note(job: dict[str, Any], seen: dict[str, int]) -> str:
    """One line: the job's counts, what was read, and whether they agree."""
    own = [f"{key} {job[key]}" for key in ("n_total_trials", "n_completed_trials", "n_errored_trials",
                                           "n_cancelled_trials", "n_retries", "n_pending_trials", "n_running_trials")
           if isinstance(job.get(key), int)]
    pairs = [(job[key], seen[mine], words) for key, mine, words in _JOB_COUNTS if isinstance(job.get(key), int)]
    if isinstance(job.get("rewarded"), int):
        pairs.append((job["rewarded"], seen["valid"], "with a valid reward"))
    differ = [f"{words}: job {theirs}, read {mine}" for theirs, mine, words in pairs if theirs != mine]
    read = (f"read {seen['completed']} trials, {seen['errored']} with an exception ({seen['cancelled']} cancelled), "
            f"{seen['valid']} with a valid reward, {seen['completed'] - seen['valid']} unknown")
    retried = (f"; {job['n_retries']} retried attempts were replaced by their retry (Harbor keeps the last)"
               if job.get("n_retries") else "")
    verdict = "the counts agree" if not differ else "the counts DIFFER (" + "; ".join(differ) + ")"
    return f"Harbor job {job.get('id')}: the job says {', '.join(own)}; {read}: {verdict}{retried}"


def _attempts(trials: list[tuple[str, Any]]) -> int:
    """Attempts per task in one run: the largest ``n`` of the ``k-of-n`` trial names, else
    the most trials any task has in the file (at least 1)."""
    named, counted = 0, {}
    for _, trial in trials:
        if not isinstance(trial, dict):
            continue
        name = trial.get("trial_name")
        parsed = _TRIAL.match(name) if isinstance(name, str) else None
        if parsed:
            named = max(named, int(parsed.group("n")), int(parsed.group("k")))
        task = trial.get("task_id", trial.get("task_name"))
        if isinstance(task, (str, int)):
            counted[str(task)] = counted.get(str(task), 0) + 1
    return max(named, max(counted.values(), default=0), 1)


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
    recorded = [trial.get("exception_info")] + [step.get("exception_info") for step in trial.get("step_results") or []
                                                if isinstance(step, dict)]
    recorded = [e for e in recorded if isinstance(e, dict)]
    error = None
    if recorded:
        exc = recorded[0]
        error = ": ".join(str(exc[k]) for k in ("exception_type", "exception_message") if exc.get(k)) or "exception"
    kinds = {str(e.get("exception_type")) for e in recorded}
    valid = trial.get("reward_valid")
    if not isinstance(valid, bool):   # older results: valid unless an exception's policy says otherwise
        valid = reward is not None and all(
            not isinstance(e.get("policy"), dict) or e["policy"].get("has_valid_reward", True) is not False
            for e in recorded)
    if not valid:
        reward = None
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
            "error": error, "cost": cost, "latency": latency, "exceptions": kinds}


READER = Reader(
    "terminal-bench", "Terminal-Bench and Harbor results",
    sniff=sniff, read=read, notes=True,
)
