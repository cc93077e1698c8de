"""Interventions run through the runner's executors: the same answer on Ray as locally, and a
kill -9 part-way loses nothing and duplicates nothing when the intervention is run again."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import textwrap

import pytest

from fluke.ledger import open_ledger
from fluke.replay import Intervention, intervene, select_sources
from fluke.simulate import SUPPORT_TOOLS, support_tool_agent

from ._support import record, timed_out

RETRY3 = Intervention("set", "retry", 3)


@pytest.fixture
def recorded(tmp_path):
    path = str(tmp_path / "support.db")
    with open_ledger(path) as ledger:
        run = timed_out(record(ledger, 12))[0]
    return path, run.hash


def _view(result):
    arm = lambda a: (a.passes, a.judged, a.served, a.needed_simulator, a.version)  # noqa: E731
    return result.effect.estimate, arm(result.baseline), arm(result.intervened)


@pytest.mark.slow
def test_an_intervention_on_ray_matches_the_local_one(recorded):
    ray = pytest.importorskip("ray")
    path, run = recorded
    with open_ledger(path) as ledger:
        sources = select_sources(ledger, [run])
    local = intervene(sources, support_tool_agent, SUPPORT_TOOLS, [RETRY3], step=1, n=30)
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        on_ray = intervene(sources, support_tool_agent, SUPPORT_TOOLS, [RETRY3], step=1, n=30, executor="ray")
    finally:
        ray.shutdown()
    assert _view(on_ray) == _view(local)
    assert local.intervened.needed_simulator == 30 and local.baseline.served == {"recorded": 60}


KILLED = textwrap.dedent("""
    import sys, time
    from fluke.ledger import open_ledger
    from fluke.replay import Intervention, intervene, select_sources
    from fluke.simulate import SUPPORT_TOOLS, support_tool_agent

    seen = []

    def progress(done, total, result):
        seen.append(result)
        print(len(seen), flush=True)
        if len(seen) >= 150:       # the baseline arm's 100 and 50 of the intervened arm are stored
            time.sleep(600)        # wait here to be killed

    with open_ledger(sys.argv[1]) as ledger:
        intervene(select_sources(ledger, [sys.argv[2]]), support_tool_agent, SUPPORT_TOOLS,
                  [Intervention("set", "retry", 3)], step=1, n=100, ledger=ledger, progress=progress)
""")


def test_an_intervention_killed_part_way_resumes_with_nothing_lost_or_duplicated(recorded, tmp_path):
    path, run = recorded
    fresh = str(tmp_path / "fresh.db")
    shutil.copy(path, fresh)
    proc = subprocess.Popen([sys.executable, "-c", KILLED, path, run], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        for line in proc.stdout:
            if int(line) >= 150:
                break
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    with open_ledger(path) as ledger:
        assert ledger.count() == 12 + 150       # the recorded runs and every continuation stored before the kill
        again = intervene(select_sources(ledger, [run]), support_tool_agent, SUPPORT_TOOLS, [RETRY3], step=1,
                          n=100, ledger=ledger)
        runs = list(ledger.runs())
    assert (again.baseline.resumed, again.baseline.added) == (100, 0)
    assert (again.intervened.resumed, again.intervened.added) == (50, 50)
    assert len(runs) == 12 + 200
    keys = [(r.version, r.scenario, r.condition_key(), r.trial) for r in runs]
    assert len(set(keys)) == len(keys)
    with open_ledger(fresh) as ledger:   # the same intervention, never interrupted
        whole = intervene(select_sources(ledger, [run]), support_tool_agent, SUPPORT_TOOLS, [RETRY3], step=1,
                          n=100, ledger=ledger)
    assert _view(again) == _view(whole)
