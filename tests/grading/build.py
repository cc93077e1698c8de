"""Compact builders for runs in the grading tests."""

from __future__ import annotations

from fluke.record import AgentMessage, Outcome, Run, ToolCall, UserMessage


def user(text):
    return UserMessage(text=text)


def agent(text):
    return AgentMessage(text=text)


def call(tool, args=None, *, ok=True, result="", error=None, requestor="agent"):
    return ToolCall(tool=tool, args={} if args is None else args, ok=ok, result=result, error=error,
                    requestor=requestor)


def run_of(*events, passed=True, scenario="s", trial=0, error=None):
    return Run(scenario=scenario, trial=trial, events=list(events), outcome=Outcome(passed=passed),
               error=error)


def checks(grade):
    """(check, severity, index) of every violation."""
    return [(v.check, v.severity, v.index) for v in grade.violations]
