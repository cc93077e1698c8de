"""``fluke contrast`` under the unknown-outcome policy (issue 14, point 6): an unknown ``passed``
counts as a failure by default or is left out with ``--unknown exclude``, and the output says how
many there were. The oracle is the paired main effect computed here by hand."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.ledger import open_ledger
from fluke.record import Identity, Outcome, Run

# environment -> outcome per (memory, retry) cell; None is an unknown outcome
CELLS = [("off", "off"), ("off", "on"), ("on", "off"), ("on", "on")]
OUTCOMES = {
    "e0": [False, True, True, True], "e1": [False, None, True, True], "e2": [True, False, None, True],
    "e3": [False, False, True, None], "e4": [True, True, True, True], "e5": [False, True, False, True],
}


@pytest.fixture(scope="module")
def url(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("contrastu") / "fluke.db")
    runs = [Run(scenario=f"{env}-{m}-{r}", unit=env, trial=0, condition={"memory": m, "retry": r},
                identity=Identity(model="sim"), outcome=Outcome(passed=v))
            for env, vs in OUTCOMES.items() for (m, r), v in zip(CELLS, vs, strict=True)]
    with open_ledger(path) as ledger:
        ledger.ingest(runs)
    return path


def _memory_effect(policy: str) -> tuple[float, int]:
    """The mean over complete environments of ((on,off) + (on,on) − (off,off) − (off,on)) / 2."""
    effects = []
    for vs in OUTCOMES.values():
        if policy == "exclude" and None in vs:
            continue  # a cell left empty: the environment cannot be paired
        y = [0.0 if v is None else float(v) for v in vs]
        effects.append((y[2] + y[3] - y[0] - y[1]) / 2)
    return sum(effects) / len(effects), len(effects)


def _run(url, *args):
    result = CliRunner().invoke(group, ["--ledger", url, "contrast", "--factors", "memory,retry", *args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("policy", ["fail", "exclude"])
def test_the_policy_decides_what_an_unknown_outcome_contributes(url, policy):
    doc = json.loads(_run(url, "--unknown", policy, "--json"))
    memory = next(c for c in doc["contrasts"] if c["name"] == "memory")
    want, envs = _memory_effect(policy)
    assert memory["statistic"] == pytest.approx(want, abs=1e-12)
    assert doc["environments"] == envs
    assert (doc["unknowns"], doc["unknown_policy"]) == (3, policy)


def test_the_default_counts_unknowns_as_failures_and_says_so(url):
    assert json.loads(_run(url, "--json"))["unknown_policy"] == "fail"
    text = _run(url)
    assert "3 unknown outcomes counted as failures (--unknown fail)" in " ".join(text.split())
