"""Is this the right spec? The tools the runs call set beside the tools the spec knows.

A spec of one domain grades another domain's runs without complaint: every tool is an
``unknown_tool`` violation, every path is broken, and the luck rate says that every pass was
luck. ``grade`` and ``report`` count the distinct tools the agent called (tool calls the user
made are not the agent's path) in the first :data:`SAMPLE` runs they grade, and warn when most
of them are unknown to the spec.

>>> fit = Vocabulary.of(["lookup", "refund"])
>>> fit.add([{"kind": "tool", "tool": "lookup", "requestor": "agent"},
...          {"kind": "tool", "tool": "get_bill", "requestor": "agent"},
...          {"kind": "tool", "tool": "toggle_airplane_mode", "requestor": "user"}])
>>> fit.called, fit.unknown
(['get_bill', 'lookup'], ['get_bill'])
>>> fit.warning("airline.yaml") is None     # one of two is not most
True
>>> fit.add([{"kind": "tool", "tool": "get_plan", "requestor": "agent"}])
>>> fit.warning("airline.yaml")
'2 of 3 tools the runs called are unknown to spec airline.yaml (e.g. get_bill, get_plan): is this the right spec?'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: How many runs (from the start of what is graded) the tools are counted in.
SAMPLE = 2000


@dataclass
class Vocabulary:
    """The spec's tools (``known``; None: the spec lists none, so no tool is unknown) and the tools seen."""

    known: frozenset[str] | None
    seen: set[str] = field(default_factory=set)
    runs: int = 0

    @classmethod
    def of(cls, tools: Iterable[str] | None) -> "Vocabulary":
        return cls(None if not tools else frozenset(tools))

    @classmethod
    def of_spec(cls, spec: Any) -> "Vocabulary":
        """The vocabulary of a loaded :class:`fluke.grading.Spec` (its ``tools``)."""
        return cls.of(spec.tools)

    def add(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Count one run's events (stored JSON: ``kind``, ``tool``, ``requestor``)."""
        self.runs += 1
        self.seen.update(e["tool"] for e in events
                         if e.get("kind") == "tool" and e.get("requestor", "agent") == "agent" and e.get("tool"))

    def add_run(self, run: Any) -> None:
        """Count a :class:`fluke.record.Run`."""
        self.runs += 1
        self.seen.update(e.tool for e in run.events if getattr(e, "tool", None) and e.requestor == "agent")

    @property
    def full(self) -> bool:
        return self.runs >= SAMPLE

    @property
    def called(self) -> list[str]:
        return sorted(self.seen)

    @property
    def unknown(self) -> list[str]:
        return [] if self.known is None else sorted(self.seen - self.known)

    def warning(self, spec_name: str) -> str | None:
        """The warning when most distinct tools called are unknown to the spec; None otherwise."""
        unknown = self.unknown
        if not self.seen or 2 * len(unknown) <= len(self.seen):
            return None
        sample = "" if self.runs < SAMPLE else f" in the first {SAMPLE} runs"
        return (f"{len(unknown)} of {len(self.seen)} tools the runs called{sample} are unknown to spec {spec_name} "
                f"(e.g. {', '.join(unknown[:3])}): is this the right spec?")

    def payload(self) -> dict[str, Any]:
        return {"runs_sampled": self.runs, "tools_called": len(self.seen), "tools_unknown": self.unknown}


def sample_ledger(ledger, spec: Any, version: Any = None, scenario: str | None = None) -> Vocabulary:
    """The vocabulary check over the first :data:`SAMPLE` runs of ``version`` (and ``scenario``)
    in the order ``grade`` takes them: the ledger's storage order, read a slice
    (:meth:`fluke.ledger.Ledger.slices`) at a time until there are enough. Never a sort of the
    whole ledger: on SQLite an ordered read of a million runs spends most of a minute before
    its first row.

    >>> from fluke.ledger import open_ledger
    >>> from fluke.record import Run, ToolCall
    >>> from fluke.grading import load_spec
    >>> ledger = open_ledger(":memory:")
    >>> _ = ledger.ingest([Run(scenario="s", trial=t, events=[ToolCall(tool=f"t{t}")]) for t in range(3000)])
    >>> fit = sample_ledger(ledger, load_spec({"tools": ["t1"]}))
    >>> fit.runs, len(fit.seen), "t2999" in fit.seen
    (2000, 2000, False)
    """
    import orjson

    fit = Vocabulary.of_spec(spec)
    stored = ledger.count()
    for bounds in ledger.slices(max(1, stored // SAMPLE)):
        for body in ledger.run_slice(bounds, scenario=scenario, version=version):
            fit.add(orjson.loads(body).get("events") or ())
            if fit.full:
                return fit
    return fit
