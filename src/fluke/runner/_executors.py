"""Where agent calls run: in this process (one at a time, or in threads), or on Ray.

Every executor takes a list of jobs and yields ``(job, attempt)`` pairs *as they finish*,
so the caller can write each completed run to the ledger at once. An attempt never raises:
the agent's exception is caught where the agent ran and comes back as data.

>>> jobs = [Job(0, "s", 0, "hi", 1)]
>>> [a.value for _, a in run_local(jobs, lambda x: x.upper())]
['HI']
"""

from __future__ import annotations

import inspect
import time
import traceback
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np

from ..errors import InputError, require

EXECUTORS = ("local", "threads", "ray")


@dataclass(frozen=True)
class Job:
    """One agent call: case number, scenario, trial, input, and the seed of its rng."""

    case: int
    scenario: str
    trial: int
    input: Any
    seed: int


@dataclass(frozen=True)
class Attempt:
    """What came back from one agent call: a value, or the exception it raised."""

    value: Any = None
    error: str | None = None
    traceback: str | None = None
    seconds: float | None = None


def _accepted(agent: Callable[..., Any]) -> set[str]:
    """Which of ``trial`` and ``rng`` the agent takes as keywords."""
    try:
        params = inspect.signature(agent).parameters
    except (TypeError, ValueError):  # builtins, some C callables
        return set()
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return {"trial", "rng"}
    return {name for name in ("trial", "rng") if name in params}


def call_agent(agent: Callable[..., Any], job: Job, accepted: set[str] | None = None) -> Attempt:
    """Call the agent for one job; catch any exception and return it as data."""
    accepted = _accepted(agent) if accepted is None else accepted
    kwargs: dict[str, Any] = {}
    if "trial" in accepted:
        kwargs["trial"] = job.trial
    if "rng" in accepted:
        kwargs["rng"] = np.random.default_rng(job.seed)
    began = time.perf_counter()
    try:
        value = agent(job.input, **kwargs)
    except Exception as exc:  # a suite must survive one bad run; recorded, not raised
        return Attempt(error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(),
                       seconds=time.perf_counter() - began)
    return Attempt(value=value, seconds=time.perf_counter() - began)


def run_local(jobs: list[Job], agent: Callable[..., Any]) -> Iterator[tuple[Job, Attempt]]:
    """One call at a time, in order, in this process (the default)."""
    accepted = _accepted(agent)
    for job in jobs:
        yield job, call_agent(agent, job, accepted)


def run_threads(jobs: list[Job], agent: Callable[..., Any], *, workers: int) -> Iterator[tuple[Job, Attempt]]:
    """Up to ``workers`` calls at once in threads: for agents that wait on network calls."""
    accepted = _accepted(agent)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(call_agent, agent, job, accepted): job for job in jobs}
        for future in as_completed(futures):
            yield futures[future], future.result()


def run_ray(jobs: list[Job], agent: Callable[..., Any], *, workers: int | None) -> Iterator[tuple[Job, Attempt]]:
    """Each call a Ray task (``pip install 'fluke[ray]'``); results collected as they finish.

    Uses the running Ray cluster when ``ray.init`` was called, else starts a local one.
    The agent must be picklable (a module-level function or object).
    """
    ray = require("ray", package="ray", extra="ray", purpose="running agents on a Ray cluster")
    if not ray.is_initialized():
        ray.init(ignore_reinit_error=True, **({"num_cpus": workers} if workers else {}))
    remote = ray.remote(call_agent)
    accepted = _accepted(agent)
    agent_ref = ray.put(agent)
    pending = {remote.remote(agent_ref, job, accepted): job for job in jobs}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            job = pending.pop(ref)
            try:
                attempt = ray.get(ref)
            except Exception as exc:  # the task itself died (worker crash, unpicklable result)
                attempt = Attempt(error=f"ray task failed: {type(exc).__name__}: {exc}")
            yield job, attempt


def executor_for(name: str, *, workers: int | None) -> Callable[[list[Job], Callable[..., Any]], Iterator[tuple[Job, Attempt]]]:
    """The executor called ``name`` (one of :data:`EXECUTORS`)."""
    if name == "local":
        return run_local
    if name == "threads":
        if workers is not None and workers < 1:
            raise InputError(None, None, "workers", f"workers={workers} must be at least 1")
        return lambda jobs, agent: run_threads(jobs, agent, workers=workers or 4)
    if name == "ray":
        return lambda jobs, agent: run_ray(jobs, agent, workers=workers)
    raise InputError(None, None, "executor", f"executor={name!r} is not one of {', '.join(EXECUTORS)}")
