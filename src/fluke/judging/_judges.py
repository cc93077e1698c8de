"""The judges fluke can ask: a deterministic fake (for tests and simulations), a Python callable,
and an OpenAI-compatible chat endpoint over HTTP.

Every judge answers two questions about blinded views (:func:`fluke.judging.blind_view`):
``label(view, replicate)`` -- did this run pass (True, False, or None when it could not say) --
and ``prefer(first, second, replicate)`` -- which of two runs is better ("first", "second" or
"tie"). ``replicate`` numbers the K repeats, so a deterministic judge can still vary by repeat.

>>> judge = FakeJudge({"r1": True, "r2": False}, sensitivity=1.0, specificity=1.0)
>>> judge.label({"run": "r1"}, 0), judge.label({"run": "r2"}, 0)
(True, False)
>>> FakeJudge({"a": True, "b": True}, first_slot=1.0).prefer({"run": "a"}, {"run": "b"}, 0)
'first'
"""

from __future__ import annotations

import hashlib
import importlib
import os
from typing import Any, Callable, Protocol

import orjson

from ..errors import InputError, UsageError
from ._config import JudgeConfig

PREFERENCES = ("first", "second", "tie")


class Judge(Protocol):
    """What fluke needs of a judge."""

    def label(self, view: dict[str, Any], replicate: int) -> bool | None: ...

    def prefer(self, first: dict[str, Any], second: dict[str, Any], replicate: int) -> str: ...


def _uniform(*parts: Any) -> float:
    """A number in [0, 1) fixed by ``parts``: the fake's coin, the same on every machine."""
    raw = hashlib.sha256(orjson.dumps(parts)).digest()
    return int.from_bytes(raw[:8], "big") / 2 ** 64


class FakeJudge:
    """A judge with known error rates, deterministic given ``seed``.

    ``truth`` maps a run's hash to whether it truly passed. The fake says pass with probability
    ``sensitivity`` on a true pass and ``1 - specificity`` on a true failure, so its bias in
    points is known. As a pairwise judge it picks the first slot with probability
    ``first_slot`` whatever the runs, and otherwise the truly better one (a coin between equals).
    """

    def __init__(self, truth: dict[str, bool], *, sensitivity: float = 0.9, specificity: float = 0.9,
                 first_slot: float = 0.0, seed: int = 0) -> None:
        self.truth, self.sensitivity, self.specificity = truth, sensitivity, specificity
        self.first_slot, self.seed = first_slot, seed

    @classmethod
    def from_runs(cls, runs: Any, **kwargs: Any) -> "FakeJudge":
        """A fake whose truth is the runs' recorded outcomes (a simulation knows them)."""
        return cls({run.hash: bool(run.outcome.passed) for run in runs}, **kwargs)

    def label(self, view: dict[str, Any], replicate: int) -> bool | None:
        true = self.truth.get(view["run"])
        if true is None:
            return None
        u = _uniform("label", self.seed, view["run"], replicate)
        return u < self.sensitivity if true else u >= self.specificity

    def prefer(self, first: dict[str, Any], second: dict[str, Any], replicate: int) -> str:
        if _uniform("slot", self.seed, first["run"], second["run"], replicate) < self.first_slot:
            return "first"
        a, b = self.truth.get(first["run"]), self.truth.get(second["run"])
        if a != b:
            return "first" if a else "second"
        return "first" if _uniform("coin", self.seed, first["run"], second["run"], replicate) < 0.5 else "second"


class CallableJudge:
    """A judge that is a Python function: ``label_fn(view) -> bool | None`` and, for pairwise
    judgments, ``prefer_fn(first, second) -> "first" | "second" | "tie"``.

    >>> judge = CallableJudge(lambda view: "refund" in str(view["transcript"]))
    >>> judge.label({"run": "x", "transcript": [{"text": "refund sent"}]}, 0)
    True
    """

    def __init__(self, label_fn: Callable[[dict], Any] | None = None,
                 prefer_fn: Callable[[dict, dict], str] | None = None) -> None:
        self.label_fn, self.prefer_fn = label_fn, prefer_fn

    def label(self, view: dict[str, Any], replicate: int) -> bool | None:
        if self.label_fn is None:
            raise UsageError("this judge has no label function; give CallableJudge(label_fn=...)")
        answer = self.label_fn(view)
        return None if answer is None else bool(answer)

    def prefer(self, first: dict[str, Any], second: dict[str, Any], replicate: int) -> str:
        if self.prefer_fn is None:
            raise UsageError("this judge has no pairwise function; give CallableJudge(prefer_fn=...)")
        answer = self.prefer_fn(first, second)
        if answer not in PREFERENCES:
            raise UsageError(f"a pairwise judge answers one of {', '.join(PREFERENCES)}; got {answer!r}")
        return answer


def read_verdict(text: str) -> bool | None:
    """PASS/FAIL from a judge's reply: the first of the two words it says, None when neither.

    >>> read_verdict("Verdict: PASS. The refund was issued."), read_verdict("fail"), read_verdict("unsure")
    (True, False, None)
    """
    upper = text.upper()
    found = [(upper.find(word), word) for word in ("PASS", "FAIL") if word in upper]
    return None if not found else min(found)[1] == "PASS"


def read_preference(text: str) -> str:
    """FIRST/SECOND/TIE from a pairwise judge's reply (the earliest named), tie when none.

    >>> read_preference("The SECOND response is better"), read_preference("???")
    ('second', 'tie')
    """
    upper = text.upper()
    found = [(upper.find(word), word.lower()) for word in ("FIRST", "SECOND", "TIE") if word in upper]
    return "tie" if not found else min(found)[1]


class HttpJudge:
    """A judge behind an OpenAI-compatible ``/chat/completions`` endpoint.

    The system message is the configuration's prompt, rubric and references; the user message
    is the blinded view as JSON. The API key is read from the environment variable that
    ``target["api_key_env"]`` names (never from the configuration, never printed).
    """

    def __init__(self, config: JudgeConfig, *, timeout: float = 60.0) -> None:
        url = config.target.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise UsageError("an openai judge needs target.url, the endpoint's base URL (http:// or https://)")
        self.config, self.url, self.timeout = config, url.rstrip("/") + "/chat/completions", timeout
        env = config.target.get("api_key_env")
        self.key = os.environ.get(env) if isinstance(env, str) else None

    def _system(self) -> str:
        parts = [self.config.prompt]
        if self.config.rubric:
            parts.append("Rubric:\n" + self.config.rubric)
        parts.extend("Reference:\n" + ref for ref in self.config.references)
        return "\n\n".join(parts)

    def _ask(self, content: str, replicate: int) -> str:
        import urllib.error
        import urllib.request

        body = orjson.dumps({"model": self.config.model, "temperature": self.config.temperature,
                             "seed": replicate,
                             "messages": [{"role": "system", "content": self._system()},
                                          {"role": "user", "content": content}]})
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:   # noqa: S310 - declared URL
                reply = orjson.loads(response.read())
            return str(reply["choices"][0]["message"]["content"])
        except (urllib.error.URLError, OSError) as exc:
            raise InputError(self.url, None, None, f"the judge did not answer ({type(exc).__name__})") from None
        except (orjson.JSONDecodeError, KeyError, IndexError, TypeError):
            raise InputError(self.url, None, "choices[0].message.content",
                             "the judge's reply is not an OpenAI chat completion") from None

    def label(self, view: dict[str, Any], replicate: int) -> bool | None:
        return read_verdict(self._ask(orjson.dumps(view).decode(), replicate))

    def prefer(self, first: dict[str, Any], second: dict[str, Any], replicate: int) -> str:
        content = orjson.dumps({"first": first, "second": second}).decode()
        return read_preference(self._ask(content, replicate))


def make_judge(config: JudgeConfig, truth: dict[str, bool] | None = None) -> Judge:
    """The judge a configuration declares: ``openai`` (HTTP), ``python`` (``target.function``,
    a ``module:function`` returning a judge or a label function) or ``fake`` (``target`` holds
    its sensitivity, specificity, first_slot and seed; ``truth`` its known outcomes).

    >>> cfg = JudgeConfig(model="fake", prompt="p", endpoint="fake", target={"sensitivity": 1.0})
    >>> make_judge(cfg, {"r": True}).label({"run": "r"}, 0)
    True
    """
    if config.endpoint == "openai":
        return HttpJudge(config)
    if config.endpoint == "imported":
        raise UsageError(f"judge {config.model!r} holds judgments imported from another tool; it cannot be asked "
                         "again (fluke judge import reads them)")
    if config.endpoint == "fake":
        known = {k: config.target[k] for k in ("sensitivity", "specificity", "first_slot", "seed")
                 if k in config.target}
        return FakeJudge(truth or {}, **known)
    spec = config.target.get("function")
    if not isinstance(spec, str) or ":" not in spec:
        raise UsageError("a python judge needs target.function as module:function")
    module_name, _, attr = spec.partition(":")
    try:
        target = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"cannot load the judge {spec} ({type(exc).__name__})") from None
    return target if hasattr(target, "label") else CallableJudge(target)
