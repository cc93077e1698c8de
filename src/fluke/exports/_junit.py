"""JUnit XML: one test case per check or claim, as every CI system renders test results.

A claim that holds passes; one that fails is a ``<failure>`` whose message is its first reason
and whose text lists every reason, the detection limit and what it rests on; one that is too
small to tell is ``<skipped>`` with the reason (it neither passed nor failed). Every string is
redacted and made inert first; the XML writer escapes what XML must.

>>> xml = junit_xml([{"check": "reliable", "asked": "P(θ > 0.9) ≥ 0.95", "status": "too small to tell",
...                   "found": "5/5 passed", "reasons": ["s: about 23 more clean runs"], "rests_on": "5 runs"}],
...                 suite="release gate")
>>> '<skipped message="too small to tell: s: about 23 more clean runs"' in xml
True
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any, Iterable

from ._findings import claim_dicts


def _said(status: str, reason: str) -> str:
    """The reason, led by the status once (a claim's reasons may already open with it)."""
    return reason if reason.startswith(f"{status}:") else f"{status}: {reason}"


def _case(suite: ET.Element, claim: dict[str, Any], classname: str) -> str:
    name = f"{claim.get('check', 'claim')}: {claim.get('asked', '')}".rstrip(": ")
    case = ET.SubElement(suite, "testcase", name=name, classname=claim.get("test") or classname, time="0")
    status = claim.get("status")
    reasons = list(claim.get("reasons") or []) or [claim.get("found", "")]
    detail = "\n".join([*reasons, *([f"detection limit: {claim['limit']}"] if claim.get("limit") else []),
                        f"rests on: {claim.get('rests_on', '')}"])
    if status == "holds":
        ET.SubElement(case, "system-out").text = f"{claim.get('found', '')}\nrests on: {claim.get('rests_on', '')}"
        return "passed"
    if status == "fails":
        failure = ET.SubElement(case, "failure", message=_said("fails", reasons[0]), type="fluke.claim.fails")
        failure.text = detail
        return "failed"
    skipped = ET.SubElement(case, "skipped", message=_said("too small to tell", reasons[0]))
    skipped.text = detail
    return "skipped"


def junit_xml(claims: Iterable[Any], *, suite: str = "fluke", classname: str | None = None,
              properties: dict[str, Any] | None = None) -> str:
    """Claims (:class:`fluke.analysis.Claim`, or their ``as_dict``; a ``test`` key names a case's
    class) as one JUnit ``<testsuites>`` document."""
    safe_claims = claim_dicts(claims)
    from ._findings import clean

    root = ET.Element("testsuites", name="fluke")
    element = ET.SubElement(root, "testsuite", name=clean(suite))
    if properties:
        props = ET.SubElement(element, "properties")
        for key, value in properties.items():
            ET.SubElement(props, "property", name=clean(key), value=clean(value))
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for claim in safe_claims:
        counts[_case(element, claim, clean(classname or f"fluke.{suite}"))] += 1
    for node in (root, element):
        node.set("tests", str(len(safe_claims)))
        node.set("failures", str(counts["failed"]))
        node.set("errors", "0")
        node.set("skipped", str(counts["skipped"]))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def gate_junit(result: Any) -> str:
    """A gate decision (:class:`fluke.analysis.DecisionResult`) as JUnit XML: a test case per check."""
    return junit_xml(result.claims, suite=f"fluke gate: {result.name}", classname="fluke.gate",
                     properties={"version": result.version, "label": result.label, "status": result.status})
