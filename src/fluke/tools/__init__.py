"""Tools through fluke: every call recorded with its request, the tool's version, the response
or exception, the time it took and the declared state's digests before and after.

Declare the tools once (:class:`Tools`: real functions, a simulator with
``apply(request, state) -> (response, state)``, or both); an agent run by fluke that takes a
``tools`` keyword gets a :class:`ToolSession` and calls ``tools.call(name, **args)``. The runner
stores each run's log beside it in the ledger, which ``fluke replay`` and ``fluke intervene``
(:mod:`fluke.replay`) read back: a recorded response is reused only where the request and the
state digests match.

>>> box = Tools({"double": lambda x: 2 * x})
>>> s = box.session()
>>> s.call("double", x=4), s.records[0].request == request_digest("double", {"x": 4})
(8, True)
"""

from ._agent import (TOOL_LOG, Logged, ToolAgent, accepts_tools, call_with_session, json_input, keep_log, kept_log,
                     takes_any_keyword)
from ._record import SERVED, ToolRecord, request_digest, state_digest
from ._session import Divergence, Failure, Request, Served, ToolFailure, ToolSession, Tools, simulated

__all__ = ["SERVED", "TOOL_LOG", "Divergence", "Failure", "Logged", "Request", "Served", "ToolAgent", "ToolFailure",
           "ToolRecord", "ToolSession", "Tools", "accepts_tools", "call_with_session", "json_input", "keep_log",
           "kept_log", "request_digest", "simulated", "state_digest", "takes_any_keyword"]
