"""Where a replayed or continued call is answered from, and when a recorded response may be reused.

A recorded response is reused only when the recording's call at the same step made the same
request (tool and arguments) from the same declared state (their digests match). Otherwise the
declared simulator answers; without one the call is refused — the session stops at that step
with the difference — because an old branch's response fed to a new request would be a
counterfactual the environment may never produce. ``stale=True`` forces reuse of the recorded
response of the same tool (its latest call at or before the step) anyway: only to measure the
bias that would cause.

>>> from fluke.tools import Request, ToolRecord, state_digest
>>> rec = [ToolRecord(0, "lookup", {"case": "c"}, error="TimeoutError", state_before=state_digest({"n": 0}),
...                   state_after=state_digest({"n": 1}), after={"n": 1})]
>>> replay_serve(rec)(0, Request("lookup", {"case": "c"}), {"n": 0}).error
'TimeoutError'
>>> try:
...     replay_serve(rec)(0, Request("lookup", {"case": "d"}), {"n": 0})
... except Divergence as exc:
...     print(exc)
step 0: request differs from the recording: lookup({"case": "d"}), recorded lookup({"case": "c"})
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from ..tools import Divergence, Request, Served, ToolRecord, request_digest, simulated, state_digest
from ._interventions import Intervention, edited_state, replacement

__all__ = ["continuation_serve", "replay_serve"]


def _shown(tool: str, args: Any) -> str:
    return f"{tool}({json.dumps(args, sort_keys=True)})"


def _request(tool: str, args: Any) -> dict[str, Any]:
    return {"tool": tool, "args": args}


def _reused(rec: ToolRecord, served: str = "recorded") -> Served:
    return Served(rec.response, rec.error, after=rec.after, served=served, version=rec.version)


def replay_serve(records: Sequence[ToolRecord]) -> Any:
    """Answer call i with the recording's call i, refusing any request it did not record."""

    def serve(step: int, request: Request, state: Any) -> Served:
        got = _request(request.tool, request.args)
        if step >= len(records):
            raise Divergence(step, f"the recording has {len(records)} calls; the agent asked for "
                             f"{_shown(request.tool, request.args)} after them", got=got)
        rec = records[step]
        if request_digest(request.tool, request.args) != rec.request:
            raise Divergence(step, f"request differs from the recording: {_shown(request.tool, request.args)}, "
                             f"recorded {_shown(rec.tool, rec.args)}", expected=_request(rec.tool, rec.args), got=got)
        return _reused(rec)

    return serve


def continuation_serve(records: Sequence[ToolRecord], *, step: int, interventions: Sequence[Intervention],
                       sandbox: Any, version_of: Any, stale: bool = False) -> Any:
    """Answer a continuation: the intervention at ``step``, a recorded response where request
    and state digests match, else the simulator, else refuse (:class:`fluke.tools.Divergence`)."""
    replace = replacement(interventions)

    def serve(i: int, request: Request, state: Any) -> Served:
        if i == step:
            state = edited_state(state, interventions)
        rec = records[i] if i < len(records) else None
        version = version_of(request.tool, sandbox)
        if i == step and replace is not None:
            after = (simulated(sandbox, request, state, version).after if sandbox is not None
                     else rec.after if rec is not None else state)
            if replace.action == "raise":
                return Served(error=replace.value, after=after, served="intervention", version=version)
            return Served(replace.value, after=after, served="intervention", version=version)
        same_request = rec is not None and request_digest(request.tool, request.args) == rec.request
        if same_request and rec.state_before == state_digest(state):
            return _reused(rec)
        old = [r for r in records[:i + 1] if r.tool == request.tool] if stale else []
        if old:
            # the biased shortcut, opt-in: the latest recorded response of this tool, whatever was asked
            # and whatever the state; the state moves as the simulator says it would
            after = simulated(sandbox, request, state, version).after if sandbox is not None else old[-1].after
            return Served(old[-1].response, old[-1].error, after=after, served="stale", version=old[-1].version)
        if sandbox is not None:
            return simulated(sandbox, request, state, version)
        if rec is None:
            why = f"the recording has {len(records)} calls"
        elif not same_request:
            why = f"request differs from the recording (recorded {_shown(rec.tool, rec.args)})"
        else:
            why = (f"the state differs from the recording's (digest {str(state_digest(state))[:12]}, "
                   f"recorded {str(rec.state_before)[:12]})")
        raise Divergence(i, f"{_shown(request.tool, request.args)}: {why}, and no simulator is declared to answer "
                         "it; a recorded response is reused only where request and state match",
                         expected=None if rec is None else _request(rec.tool, rec.args),
                         got=_request(request.tool, request.args))

    return serve
