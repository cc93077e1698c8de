"""Pre-registration: seal a decision rule before the runs, unseal it after.

A rule file (YAML or JSON) says what will be decided, on which runs, by which statistic, and
against which threshold. :func:`seal_body` keeps the file's exact text, its SHA-256 and the
parsed rule; the ledger stores that body under the SHA-256 of its canonical JSON (the seal's
digest). :func:`unseal` later checks, in order:

1. the stored body still hashes to its digest, the kept text to its SHA-256, and the text
   still parses to the stored rule (any changed byte is detected);
2. if the rule file is given again, it is byte-for-byte the sealed one;
3. every run in scope was recorded *after* the seal;

and then reports the decision against the rule. The pre-registration holds only when all
three checks pass and the rule says yes.

A rule::

    name: memory helps
    scope: {identity: {model: sim-support}}   # or version: <hash prefix or model=...>
    decision:
      statistic: contrast        # mean | contrast | pass_at_k | pass_hat_k
      factors: [memory, retry]
      effect: memory             # which contrast (contrast only)
      outcome: passed            # passed | reward
      bound: lower               # lower | estimate | upper
      above: 0.025               # or below:
      unknown: fail              # an unknown outcome.passed: a failure (the default) or exclude
    predictions: {memory: 0.15}  # kept, not evaluated

>>> body = seal_body("decision: {statistic: mean, above: 0.5}\\n", sealed_at="2026-01-01T00:00:00+00:00")
>>> body["rule"]["decision"]["bound"], len(body["text_sha256"])
('lower', 64)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable

import yaml

from ..errors import SpecError, UsageError
from ..format import parse_problem
from ..inference import check_unknown_policy
from ..policies import UnknownPolicy
from ..record import digest

__all__ = ["RuleDecision", "SealCheck", "check_seal", "evaluate_rule", "in_scope", "parse_rule",
           "seal_body"]

SEAL_FORMAT = 1
_STATISTICS = ("mean", "contrast", "pass_at_k", "pass_hat_k")
_TOP = {"name", "hypothesis", "scope", "decision", "predictions", "thresholds", "notes"}
_DECISION = {"statistic", "outcome", "unit", "factors", "effect", "k", "bound", "above", "below",
             "confidence_level", "unknown"}
#: What a rule that does not say does with an unknown ``outcome.passed`` (the project's one policy).
#: Not written into the parsed rule, so a seal made before the key existed still parses to itself.
DEFAULT_UNKNOWN = UnknownPolicy.FAIL
_SCOPE = {"version", "identity", "condition", "scenarios"}


def _fail(where: str, message: str) -> SpecError:
    return SpecError(f"rule: {where}: {message}")


def parse_rule(text: str) -> dict:
    """Parse and validate a rule; fill defaults. Raises :class:`SpecError` naming the field.

    >>> parse_rule("decision: {statistic: pass_at_k, k: 3, above: 0.5}")["decision"]["bound"]
    'estimate'
    """
    try:
        rule = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise _fail("text", f"not valid YAML ({parse_problem(exc)})") from None
    if not isinstance(rule, dict):
        raise _fail("text", "must be a mapping with a 'decision' key")
    unknown = set(rule) - _TOP
    if unknown:
        raise _fail(sorted(unknown)[0], f"unknown key; allowed: {sorted(_TOP)}")
    scope = rule.setdefault("scope", {}) or {}
    if not isinstance(scope, dict) or set(scope) - _SCOPE:
        raise _fail("scope", f"must be a mapping with keys among {sorted(_SCOPE)}")
    for key in ("condition", "identity"):
        if key in scope and not isinstance(scope[key], dict):
            raise _fail(f"scope.{key}", "must be a mapping such as {memory: true} or {model: gpt-4o}")
    rule["scope"] = scope
    dec = rule.get("decision")
    if not isinstance(dec, dict):
        raise _fail("decision", "missing: say which statistic must clear which threshold")
    unknown = set(dec) - _DECISION
    if unknown:
        raise _fail(f"decision.{sorted(unknown)[0]}", f"unknown key; allowed: {sorted(_DECISION)}")
    stat = dec.setdefault("statistic", "mean")
    if stat not in _STATISTICS:
        raise _fail("decision.statistic", f"{stat!r} is not one of {list(_STATISTICS)}")
    if ("above" in dec) == ("below" in dec):
        raise _fail("decision", "give exactly one of 'above' or 'below' (the threshold)")
    threshold = dec.get("above", dec.get("below"))
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise _fail("decision.above/below", f"{threshold!r} must be a number")
    dec.setdefault("outcome", "passed")
    if dec["outcome"] not in ("passed", "reward"):
        raise _fail("decision.outcome", f"{dec['outcome']!r} must be 'passed' or 'reward'")
    dec.setdefault("unit", "unit")
    if dec["unit"] not in ("unit", "scenario"):
        raise _fail("decision.unit", f"{dec['unit']!r} must be 'unit' or 'scenario'")
    dec.setdefault("confidence_level", 0.95)
    try:
        check_unknown_policy(dec.get("unknown", DEFAULT_UNKNOWN))
    except UsageError as exc:
        raise _fail("decision.unknown", str(exc)) from None
    if stat in ("pass_at_k", "pass_hat_k"):
        k = dec.get("k")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise _fail("decision.k", f"{k!r} must be a whole number of at least 1")
        dec.setdefault("bound", "estimate")
        if dec["bound"] != "estimate":
            raise _fail("decision.bound", "pass@k and pass^k have no interval here: use 'estimate'")
    else:
        dec.setdefault("bound", "lower" if "above" in dec else "upper")
        if dec["bound"] not in ("lower", "estimate", "upper"):
            raise _fail("decision.bound", f"{dec['bound']!r} must be lower, estimate or upper")
    if stat == "contrast":
        factors = dec.get("factors")
        if not (isinstance(factors, list) and len(factors) == 2 and all(isinstance(f, str) for f in factors)):
            raise _fail("decision.factors", "a contrast needs two factor names, e.g. [memory, retry]")
        dec.setdefault("effect", factors[0])
    return rule


def seal_body(text: str | bytes, *, sealed_at: str | None = None) -> dict:
    """The document to store: exact text, its SHA-256, the parsed rule, and the sealing time."""
    raw = text.encode() if isinstance(text, str) else bytes(text)
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail("text", f"not UTF-8 at byte {exc.start}") from None
    rule = parse_rule(decoded)
    return {"seal_format": SEAL_FORMAT, "rule": rule, "text": decoded,
            "text_sha256": hashlib.sha256(raw).hexdigest(),
            "sealed_at": sealed_at or datetime.now(timezone.utc).isoformat()}


@dataclass(frozen=True)
class SealCheck:
    """Whether a stored seal is intact; ``problems`` says what changed."""

    digest: str
    problems: tuple[str, ...]

    @property
    def intact(self) -> bool:
        return not self.problems


def check_seal(stored_digest: str, body: dict, *, text: bytes | str | None = None) -> SealCheck:
    """Recompute every hash of a stored seal; compare a re-supplied rule file byte for byte.

    >>> body = seal_body("decision: {statistic: mean, above: 0.5}\\n", sealed_at="t")
    >>> check_seal(digest(body), body).intact
    True
    >>> check_seal(digest(body), body, text="decision: {statistic: mean, above: 0.4}\\n").problems[0][:29]
    'the rule file differs from th'
    """
    problems = []
    if digest(body) != stored_digest:
        problems.append(f"the stored seal no longer hashes to {stored_digest[:12]}: it was changed "
                        "after sealing")
    kept = body.get("text")
    if not isinstance(kept, str) or hashlib.sha256(kept.encode()).hexdigest() != body.get("text_sha256"):
        problems.append("the sealed rule text does not match its SHA-256")
    else:
        try:
            if parse_rule(kept) != body.get("rule"):
                problems.append("the stored rule differs from the sealed rule text")
        except SpecError as exc:
            problems.append(f"the sealed rule text no longer parses ({exc})")
    if text is not None:
        raw = text.encode() if isinstance(text, str) else bytes(text)
        sealed = kept.encode() if isinstance(kept, str) else b""
        if hashlib.sha256(raw).hexdigest() != body.get("text_sha256"):
            at = next((i for i, (x, y) in enumerate(zip(raw, sealed, strict=False)) if x != y),
                      min(len(raw), len(sealed)))
            problems.append(f"the rule file differs from the sealed one (first at byte {at})")
    return SealCheck(stored_digest, tuple(problems))


def in_scope(rule: dict, runs: Iterable) -> list:
    """The runs a rule's scope covers: identity fields, condition pairs, scenario list.

    ``scope.version`` (one version) is resolved by the caller against the ledger;
    ``scope.identity`` may match several versions (the policies of a factorial study).
    """
    scope = rule.get("scope") or {}
    cond = scope.get("condition") or {}
    ident = scope.get("identity") or {}
    scen = set(scope.get("scenarios") or [])
    return [r for r in runs
            if all(r.condition.get(k) == v for k, v in cond.items())
            and all(getattr(r.identity, k, None) == v for k, v in ident.items())
            and (not scen or r.scenario in scen)]


@dataclass(frozen=True)
class RuleDecision:
    """The statistic a rule names, the value compared, and whether it clears the threshold."""

    statistic: str
    estimate: float
    low: float | None
    high: float | None
    compared: float
    threshold: float
    direction: str
    passed: bool
    runs: int
    reason: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    unknowns: int = 0                 # runs in scope whose outcome.passed is unknown
    unknown_policy: str = DEFAULT_UNKNOWN

    def text(self) -> str:
        if self.reason:
            return f"undecidable: {self.reason}"
        side = "above" if self.direction == "above" else "below"
        if self.passed:
            return f"yes: {self.compared:.4g} is {side} the threshold {self.threshold:g}"
        return f"no: {self.compared:.4g} is not {side} the threshold {self.threshold:g}"


def _outcomes(runs, name, unknown):
    """(values, runs kept, unknowns): an unknown ``passed`` follows the policy; a missing reward is left out."""
    import numpy as np

    from ..inference import apply_unknown_policy

    if name == "passed":
        done = apply_unknown_policy([r.outcome.passed for r in runs], unknown)
        return done.passed, [r for r, keep in zip(runs, done.keep, strict=True) if keep], done.unknowns
    keep = [r for r in runs if r.outcome.reward is not None]
    return np.array([r.outcome.reward for r in keep], dtype=float), keep, 0


def evaluate_rule(rule: dict, runs: list) -> RuleDecision:
    """Compute the rule's statistic on ``runs`` (already scoped) and compare it to the threshold."""
    import numpy as np

    from ..inference import clustered_interval, pass_at_k, pass_hat_k
    from ._factorial import factorial_contrasts

    dec = rule["decision"]
    direction = "above" if "above" in dec else "below"
    threshold = float(dec[direction])
    stat = dec["statistic"]
    policy = dec.get("unknown", DEFAULT_UNKNOWN)
    y, kept, unknowns = _outcomes(runs, dec["outcome"], policy)

    def undecided(reason):
        return RuleDecision(stat, float("nan"), None, None, float("nan"), threshold, direction,
                        False, len(kept), reason, {}, unknowns, policy)

    if not kept:
        return undecided(f"no run in scope has an outcome.{dec['outcome']}")
    low = high = None
    detail: dict[str, Any] = {}
    if stat == "mean":
        units = [r.sampling_unit if dec["unit"] == "unit" else r.scenario for r in kept]
        ci = clustered_interval(y, units, confidence_level=dec["confidence_level"], unit=dec["unit"])
        if ci.reason:
            return undecided(ci.reason)
        est, low, high = ci.statistic, ci.low, ci.high
        detail = {"clusters": ci.clusters, "method": ci.method}
    elif stat == "contrast":
        f1, f2 = dec["factors"]
        missing = [f for f in (f1, f2) if any(f not in r.condition for r in kept)]
        if missing:
            return undecided(f"runs in scope lack condition {missing[0]!r}")
        try:
            fc = factorial_contrasts(y, [r.sampling_unit for r in kept],
                                     {f1: [r.condition[f1] for r in kept],
                                      f2: [r.condition[f2] for r in kept]},
                                     confidence_level=dec["confidence_level"])
            c = fc[dec["effect"]]
        except (ValueError, KeyError) as exc:
            return undecided(str(exc))
        if not np.isfinite(c.standard_error):
            return undecided(f"only {c.environments} complete environments")
        est, low, high = c.statistic, c.low, c.high
        detail = {"effect": c.name, "environments": c.environments}
    else:
        per: dict[str, list[float]] = {}
        for v, r in zip(y, kept, strict=True):
            per.setdefault(r.scenario, []).append(v)
        succ = np.array([sum(v) for v in per.values()])
        n = np.array([len(v) for v in per.values()])
        fn = pass_at_k if stat == "pass_at_k" else pass_hat_k
        res = fn(np.round(succ).astype(int), n, k=dec["k"])
        if res.reason:
            return undecided(res.reason)
        est = res.statistic
        detail = {"k": dec["k"], "scenarios": int(n.size)}
    compared = {"lower": low, "upper": high, "estimate": est}[dec["bound"]]
    passed = compared > threshold if direction == "above" else compared < threshold
    return RuleDecision(stat, float(est), low, high, float(compared), threshold, direction,
                    bool(passed), len(kept), None, detail, unknowns, policy)
