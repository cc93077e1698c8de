"""The judge as a declared, hashed object: what it is, and how its digest enters a run's identity.

Everything that could change a verdict is a field (model, endpoint kind, prompt, rubric,
references, temperature, replicates, aggregation, tie rule), so two judges that could disagree
have different digests, and the runs they judged are different versions.

>>> from fluke.judging import JudgeConfig
>>> a = JudgeConfig(model="gpt-4o-mini", prompt="Did the agent resolve the request? Answer PASS or FAIL.")
>>> b = a.model_copy(update={"prompt": a.prompt + "!"})   # one character more
>>> len(a.digest), a.digest == b.digest
(64, False)
>>> a.grader()["judge"] == a.digest, a.grader()["name"]
(True, 'gpt-4o-mini')
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import InputError
from ..record import Identity, digest

#: What a judge is reached through: an OpenAI-compatible chat endpoint, a Python callable, the
#: deterministic fake of :class:`fluke.judging.FakeJudge`, or ``imported``: judgments another tool
#: made (an Inspect scorer, a CSV), read rather than asked for.
ENDPOINT_KINDS = ("openai", "python", "fake", "imported")
#: How K replicate labels become one: the majority, or every replicate must pass.
AGGREGATIONS = ("majority", "all")
#: What a tied majority (K even, half and half) becomes, decided before any run is judged.
TIE_RULES = ("fail", "pass", "unknown")
#: Ledger document kind under which judge configurations are kept.
JUDGE_KIND = "judge"


class JudgeConfig(BaseModel):
    """A judge, frozen: its digest is the SHA-256 of every field, so a one-character change in
    the prompt makes another judge."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    model: str = Field(min_length=1)
    endpoint: Literal["openai", "python", "fake", "imported"] = "openai"
    prompt: str = Field(min_length=1)
    rubric: str = ""
    references: list[str] = Field(default_factory=list)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    replicates: int = Field(default=1, ge=1, le=100)
    aggregation: Literal["majority", "all"] = "majority"
    tie: Literal["fail", "pass", "unknown"] = "fail"
    pairwise: bool = False
    #: Where the judge is reached (a URL for ``openai``, ``module:function`` for ``python``,
    #: the fake's parameters for ``fake``). Part of the digest: another endpoint is another judge.
    target: dict[str, Any] = Field(default_factory=dict)

    @property
    def digest(self) -> str:
        """SHA-256 of the configuration's canonical JSON (computed each time: pydantic's
        ``model_copy`` would carry a cached value over to the changed copy)."""
        return digest(self.model_dump(mode="json"))

    def grader(self) -> dict[str, Any]:
        """The identity's ``grader`` component for runs this judge labelled."""
        return {"judge": self.digest, "name": self.model, "endpoint": self.endpoint}

    def judged(self, identity: Identity) -> Identity:
        """``identity`` with this judge as its grader: a different version from the unjudged one.

        >>> from fluke.record import Identity
        >>> judge = JudgeConfig(model="m", prompt="p", endpoint="fake")
        >>> ident = Identity(model="agent-1")
        >>> judge.judged(ident).version != ident.version, judge.judged(ident).grader["judge"] == judge.digest
        (True, True)
        """
        # built afresh, not model_copy: a copy would keep the cached version of the original
        return Identity(**{**identity.model_dump(), "grader": self.grader()})

    def aggregate(self, labels: list[bool | None]) -> bool | None:
        """One label from the K replicates, by the declared aggregation and tie rule.

        A replicate the judge could not give (None) is left out; none at all is unknown.

        >>> JudgeConfig(model="m", prompt="p").aggregate([True, False])   # tie -> fail
        False
        >>> JudgeConfig(model="m", prompt="p", tie="unknown").aggregate([True, True, False])
        True
        """
        given = [label for label in labels if label is not None]
        if not given:
            return None
        if self.aggregation == "all":
            return all(given)
        passes = sum(given)
        if 2 * passes == len(given):
            return {"fail": False, "pass": True, "unknown": None}[self.tie]
        return 2 * passes > len(given)


def load_judge(source: dict[str, Any] | str, *, where: str = "judge configuration") -> JudgeConfig:
    """A :class:`JudgeConfig` from a dict, or from a JSON/YAML file's path; a bad field is one
    :class:`fluke.errors.InputError` naming the file and field.

    >>> load_judge({"model": "m", "prompt": "p", "replicates": 3}).replicates
    3
    >>> load_judge({"model": "m"})
    Traceback (most recent call last):
    ...
    fluke.errors.InputError: judge configuration: field prompt: Field required
    """
    if isinstance(source, str):
        where = source
        try:
            with open(source, "rb") as handle:
                text = handle.read()
        except OSError as exc:
            raise InputError(source, None, None, f"cannot read the judge configuration ({exc.strerror})") from None
        import yaml

        try:
            source = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise InputError(source, None, None, f"not JSON or YAML ({type(exc).__name__})") from None
        if not isinstance(source, dict):
            raise InputError(where, None, None, "a judge configuration is a mapping of fields")
    try:
        return JudgeConfig.model_validate(source)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise InputError(where, None, field, err["msg"]) from None
