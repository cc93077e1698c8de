"""The agent the runner calls for a replay or a continuation: it restores the recorded start,
answers the agent's tools as :mod:`fluke.replay._serve` says, and returns what happened.

* A **replay** re-drives the agent with the recorded input and the recorded rng seed against the
  recorded tool I/O only; the first request the recording does not hold stops it there.
* A **continuation** starts from the recorded initial state and input (with the interventions
  applied), draws its own rng and its simulator's tape from the runner's seed for this trial
  (shared by both arms when they are coupled) and the origin run's seed, and answers through
  :func:`fluke.replay._serve.continuation_serve`.

A :class:`fluke.tools.Divergence` the agent let through ends the run where it happened; one it
swallowed is kept by the session, so the run is marked stopped all the same.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..record import digest
from ..tools import Divergence, Logged, ToolRecord, ToolSession, Tools, call_with_session, keep_log
from ..tools._agent import seed_of
from ._interventions import Intervention, edited_input
from ._serve import continuation_serve, replay_serve

__all__ = ["Continuation"]


class Continuation:
    """``mode`` is ``replay`` or ``continue``; the job's input holds the recorded ``log``, the
    ``origin`` run's hash and, for a continuation, the ``step``, ``interventions`` and ``stale``."""

    def __init__(self, agent: Callable[..., Any], tools: Tools | None, *, mode: str) -> None:
        self.agent, self.tools, self.mode = agent, tools or Tools(), mode

    def __call__(self, job: dict[str, Any], *, trial: int, rng: np.random.Generator) -> Logged:
        log = job["log"]
        records = [ToolRecord.from_dict(c) for c in log["calls"]]
        if self.mode == "replay":
            seed = log["seed"]
            session = ToolSession(replay_serve(records), log["state"])
            given = log["input"]
        else:
            # the recorded run's own seed, not its hash (which holds its wall-clock latency)
            seed = int(digest([seed_of(rng), log["seed"]])[:15], 16)
            interventions = [Intervention(**i) for i in job["interventions"]]
            session = ToolSession(continuation_serve(records, step=job["step"], interventions=interventions,
                                                     sandbox=self.tools.sandbox(seed),
                                                     version_of=self.tools.version_of, stale=job["stale"]),
                                  log["state"])
            given = edited_input(log["input"], interventions)
        try:
            value = call_with_session(self.agent, given, session, trial=trial, rng=np.random.default_rng(seed))
        except Divergence:
            from ..runner import Trajectory

            value = Trajectory(session.events())
        except Exception as exc:   # the continuation is recorded as errored, with the calls it made
            keep_log(exc, {"input": given, "seed": seed, "origin": job["origin"], **session.log()})
            raise
        return Logged(value, {"input": given, "seed": seed, "origin": job["origin"], **session.log()})
