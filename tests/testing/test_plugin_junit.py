"""The plugin's ``--fluke-junit``: the session's claims as JUnit XML, read back with junitparser."""

from __future__ import annotations

import pytest

from .test_plugin import HEADER

junitparser = pytest.importorskip("junitparser")


def test_the_plugin_writes_the_sessions_claims_as_junit(pytester):
    pytester.makepyfile(test_agent=HEADER + '''
@pytest.mark.fluke(k=40, identity={"model": "desk", "harness": "reliable"})
def test_reliable(fluke_runs):
    runs = fluke_runs(desk_agent(slips=False), CASES)
    fluke.expect(runs).reliable(bar=0.6, prob=0.95)
''')
    junit = pytester.path / "claims.xml"
    result = pytester.runpytest_subprocess("--fluke-ledger", str(pytester.path / "l.db"), "--fluke-junit",
                                           str(junit), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    [suite] = list(junitparser.JUnitXml.fromfile(str(junit)))
    cases = {case.name.split(":")[0]: case for case in suite}
    [(name, case)] = cases.items()
    assert name == "reliable" and case.classname == "test_agent.py::test_reliable" and not case.result
    assert "P(θ > 0.6) ≥ 0.95" in case.name
