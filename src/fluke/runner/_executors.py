"""Where agent calls run: in this process (one at a time, or in threads), in worker
processes, or on Ray. ``fluke grade`` grades chunks of runs through the same executors.

Every executor takes jobs (a list, or a generator it draws from as slots free) and yields ``(job, attempt)`` pairs
*as they finish*,
so the caller can write each completed run to the ledger at once. An attempt never raises:
the agent's exception is caught where the agent ran and comes back as data.

>>> jobs = [Job(0, "s", 0, "hi", 1)]
>>> [a.value for _, a in run_local(jobs, lambda x: x.upper())]
['HI']
"""

from __future__ import annotations

import inspect
import os
import signal
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from ..errors import require, UsageError

EXECUTORS = ("local", "threads", "processes", "ray")


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
        from ..tools import Logged, kept_log

        log = kept_log(exc)   # the tool calls a logged agent made before it raised
        return Attempt(value=None if log is None else Logged(None, log), error=f"{type(exc).__name__}: {exc}",
                       traceback=traceback.format_exc(), seconds=time.perf_counter() - began)
    return Attempt(value=value, seconds=time.perf_counter() - began)


def run_local(jobs: Iterable[Job], agent: Callable[..., Any]) -> Iterator[tuple[Job, Attempt]]:
    """One call at a time, in order, in this process (the default)."""
    accepted = _accepted(agent)
    for job in jobs:
        yield job, call_agent(agent, job, accepted)


def _windowed(jobs: Iterable[Job], submit: Callable[[Job], Any], wait: Callable[[list], tuple[list, Any]],
              result: Callable[[Any], Attempt], window: int) -> Iterator[tuple[Job, Attempt]]:
    """Submit jobs as they come, at most ``window`` in flight; yield each as it finishes.

    Jobs are pulled from ``jobs`` only when a slot frees, so a generator of jobs (a ledger
    read in chunks) is never held whole.
    """
    pending: dict[Any, Job] = {}
    it = iter(jobs)
    exhausted = False
    while True:
        while not exhausted and len(pending) < window:
            job = next(it, None)
            if job is None:
                exhausted = True
                break
            pending[submit(job)] = job
        if not pending:
            return
        done, _ = wait(list(pending))
        for handle in done:
            yield pending.pop(handle), result(handle)


def run_threads(jobs: Iterable[Job], agent: Callable[..., Any], *, workers: int) -> Iterator[tuple[Job, Attempt]]:
    """Up to ``workers`` calls at once in threads: for agents that wait on network calls."""
    accepted = _accepted(agent)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        yield from _windowed(jobs, lambda job: pool.submit(call_agent, agent, job, accepted),
                             lambda fs: wait(fs, return_when=FIRST_COMPLETED), Future.result, 2 * workers)


def _process_result(future: Future) -> Attempt:
    try:
        return future.result()
    except Exception as exc:  # the worker process died, or the result could not be pickled
        return Attempt(error=f"worker process failed: {type(exc).__name__}: {exc}")


def _worker_init() -> None:
    """In a worker process: Ctrl-C is the parent's to handle (it stops the pool), so a
    worker does not die mid-task with a traceback of its own; and a worker whose parent was
    killed (``kill -9``), which would wait on the parent's queue for ever, exits."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="fluke-parent-watch", daemon=True).start()


def run_processes(jobs: Iterable[Job], agent: Callable[..., Any], *,
                  workers: int | None) -> Iterator[tuple[Job, Attempt]]:
    """Up to ``workers`` calls at once in worker processes (default: one per core): for
    agents that compute in Python. The agent and each job's input must be picklable."""
    workers = workers or os.cpu_count() or 1
    accepted = _accepted(agent)
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_init)
    try:
        yield from _windowed(jobs, lambda job: pool.submit(call_agent, agent, job, accepted),
                             lambda fs: wait(fs, return_when=FIRST_COMPLETED), _process_result, 2 * workers)
    finally:   # also on Ctrl-C or a caller that stops early: queued jobs are dropped, not run
        pool.shutdown(wait=True, cancel_futures=True)


def run_ray(jobs: Iterable[Job], agent: Callable[..., Any], *, workers: int | None,
            address: str | None = None) -> Iterator[tuple[Job, Attempt]]:
    """Each call a Ray task (``pip install 'fluke[ray]'``); results collected as they finish.

    Joins the cluster at ``address`` (``ray start --head`` prints it) when given; else uses
    the running Ray when ``ray.init`` was called, else starts a local one. At most twice the
    cluster's CPUs (or ``workers``) calls are in flight. The agent must be picklable (a
    module-level function or object).
    """
    ray = require("ray", package="ray", extra="ray", purpose="running agents on a Ray cluster")
    if not ray.is_initialized():
        if address:
            ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
        else:
            ray.init(ignore_reinit_error=True, **({"num_cpus": workers} if workers else {}))
    remote = ray.remote(call_agent)
    accepted = _accepted(agent)
    agent_ref = ray.put(agent)
    window = 2 * (workers or max(1, int(ray.cluster_resources().get("CPU", 1))))

    def result(ref: Any) -> Attempt:
        try:
            return ray.get(ref)
        except Exception as exc:  # the task itself died (worker crash, unpicklable result)
            return Attempt(error=f"ray task failed: {type(exc).__name__}: {exc}")

    yield from _windowed(jobs, lambda job: remote.remote(agent_ref, job, accepted),
                         lambda refs: ray.wait(refs, num_returns=1), result, window)


Executor = Callable[[Iterable[Job], Callable[..., Any]], Iterator[tuple[Job, Attempt]]]


def executor_for(name: str, *, workers: int | None, address: str | None = None) -> Executor:
    """The executor called ``name`` (one of :data:`EXECUTORS`); ``address`` is Ray's only.

    >>> executor_for("local", workers=None) is run_local
    True
    """
    if workers is not None and workers < 1:
        raise UsageError(f"workers={workers} must be at least 1", argument="workers")
    if address and name != "ray":
        raise UsageError(f"address={address!r} is for the ray executor, not {name}", argument="address")
    if name == "local":
        return run_local
    if name == "threads":
        return lambda jobs, agent: run_threads(jobs, agent, workers=workers or 4)
    if name == "processes":
        return lambda jobs, agent: run_processes(jobs, agent, workers=workers)
    if name == "ray":
        return lambda jobs, agent: run_ray(jobs, agent, workers=workers, address=address)
    raise UsageError(f"executor={name!r} is not one of {', '.join(EXECUTORS)}", argument="executor")
