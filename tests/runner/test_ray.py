"""The Ray executor (optional: pip install 'fluke[ray]'); skipped when Ray is absent."""

from __future__ import annotations

import pytest

from fluke.record import ToolCall
from fluke.runner import Case, Trajectory, evaluate

ray = pytest.importorskip("ray")


@pytest.mark.slow
def test_ray_runs_match_local_runs_and_errors_are_recorded():
    def agent(text, *, trial, rng):   # nested: cloudpickle ships it by value to the workers
        if trial == 2:
            raise ValueError(f"bad trial {trial}")
        return Trajectory([ToolCall(tool="t", args={"x": int(rng.integers(1000))}, ok=True)], output=text)

    cases = [Case("a", input="a", check=lambda o: o == "a"), Case("b", input="b", check=lambda o: o == "x")]
    ident = {"model": "m", "date": "2026-11-30"}
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        on_ray = evaluate(cases, agent, k=3, identity=ident, executor="ray")
    finally:
        ray.shutdown()
    local = evaluate(cases, agent, k=3, identity=ident)
    view = lambda res: [(r.scenario, r.trial, r.outcome.passed, r.error,  # noqa: E731
                         r.tool_calls[0].args if r.tool_calls else None) for r in res.runs]
    assert view(on_ray) == view(local)
    assert [r.run.error for r in on_ray.results if r.run.error] == ["agent raised ValueError: bad trial 2"] * 2
