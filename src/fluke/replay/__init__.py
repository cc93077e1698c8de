"""Replay the evidence; intervene on a valid environment.

* :func:`replay` re-drives the agent against a run's recorded tool I/O k times and reports the
  observed reproduction fidelity (same calls, same arguments, same outcome; the first divergence).
* :func:`intervene` applies a declared :class:`Intervention` at a step of recorded runs and
  re-executes downstream over n continuations through the declared simulator, reusing a
  recorded response only where request and state digests match, against a baseline arm; the
  effect on the pass rate comes with its interval, the share of continuations that needed the
  simulator and, for coupled arms, the measured variance reduction.

Both store what they ran as runs whose identity names the origin, through the runner (so on
every executor, Ray included, and resumable after a kill).

>>> from fluke.replay import parse_intervention
>>> parse_intervention('respond={"account": "env-0000"}').action
'respond'
"""

from ._effect import ContinuationEffect, continuation_effect
from ._intervene import COUPLINGS, INTERVENTION, ContinuationArm, InterventionEffect, intervene
from ._interventions import ACTIONS, Intervention, interventions_digest, parse_intervention
from ._replay import ReplayOfRun, Replays, replay
from ._serve import continuation_serve, replay_serve
from ._stored import StoredIntervention, stored_interventions
from ._sources import TOOL_LOG, LoggedRun, origin_identity, select_sources, tool_logs

__all__ = ["ACTIONS", "COUPLINGS", "INTERVENTION", "TOOL_LOG", "ContinuationArm", "ContinuationEffect", "Intervention",
           "InterventionEffect", "ReplayOfRun", "Replays", "LoggedRun", "StoredIntervention", "continuation_effect",
           "continuation_serve", "intervene", "interventions_digest", "origin_identity", "parse_intervention",
           "replay", "replay_serve", "select_sources", "stored_interventions", "tool_logs"]
