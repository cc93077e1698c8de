"""``gate``: a declared decision rule (YAML or TOML) checked on the ledger, every reason listed.

A rule names one version and the checks it must pass; every section is optional but one::

    name: release gate
    version: model=support-desk-v2        # a selector; default: the latest version recorded
    spec: spec.yaml                       # for gate and luck (a path, relative to the rule, or a mapping)
    gate: true                            # the grading gate (hard violations, soft by majority)
    reliable: {bar: 0.9, prob: 0.95, per: scenario}   # or per: suite; scenarios: "refund/*"
    luck: {at_most: 0.05}                 # the luck rate's credible interval under the ceiling
    severe: {severity: hard, at_most: 0.01}  # the exact upper bound on the runs breaking a hard check
    compare: {baseline: model=support-desk-v1, margin: 0.05}  # not worse (able to see 5 points)
    #   ... add judge: 3f2a9c, labels: audit.jsonl to compare PPI-corrected pass rates instead
    sealed: true                          # the rule was sealed (fluke gate RULE --seal) before the runs
    judge: {judge: 3f2a9c, labels: audit.jsonl, kappa: 0.6}  # a judge may gate only when it has earned it
    unknown: fail                         # a run of unknown outcome: a failure (the default) or exclude
    on_inconclusive: warn                 # a check too small to tell: warn (the default), fail or pass

The rule is validated whole before the ledger is read (unknown keys with "did you mean", wrong
types, values out of range: :class:`~fluke.errors.SpecError`). Each check is decided by the
analysis function that answers it (:mod:`fluke.analysis._claims`); the decision holds only when
every check holds.

>>> rule = parse_gate_rule("reliable: {bar: 0.8}\\nluck: {at_most: 0.1}\\nspec: spec.yaml\\n")
>>> rule["reliable"]["prob"], rule["luck"]["level"]
(0.95, 0.95)
>>> parse_gate_rule("relaible: {bar: 0.8}")
Traceback (most recent call last):
...
fluke.errors.SpecError: gate rule: relaible: unknown key (did you mean 'reliable'?); allowed: compare, gate, judge,
luck, name, on_inconclusive, reliable, sealed, severe, spec, unknown, version
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ..errors import SpecError
from ..format import fluke_command, parse_problem
from ..policies import INCONCLUSIVE_POLICIES, UNKNOWN_POLICIES, InconclusivePolicy, UnknownPolicy
from ._claims import FAILS, HOLDS, TOO_SMALL, Claim
from ._document import Column, Details, Heading, Span, Table, blank, line, note
from ._result import Result

#: The ledger document kind of a sealed gate rule.
GATE_SEAL_KIND = "gate_seal"

_TOP = {"name": str, "version": str, "spec": (str, dict), "gate": bool, "reliable": dict, "luck": dict,
        "compare": dict, "sealed": bool, "unknown": str, "judge": dict, "on_inconclusive": str, "severe": dict}
_SECTIONS = {
    "reliable": {"bar": (float, 0.9), "prob": (float, 0.95), "per": (str, "scenario"), "prior": (str, "uniform"),
                 "scenarios": ((str, list), None)},
    "luck": {"at_most": (float, None), "level": (float, 0.95)},
    "severe": {"severity": (str, "hard"), "at_most": (float, None), "level": (float, 0.95)},
    "compare": {"baseline": (str, None), "margin": (float, None), "alpha": (float, 0.05), "power": (float, 0.8),
                "judge": (str, None), "labels": (str, None)},
    "judge": {"judge": (str, None), "labels": (str, None), "strata": (str, None), "kappa": (float, 0.6),
              "flips": (float, 0.1), "min_labels": (float, 50.0)},
}
_REQUIRED = {"luck": "at_most", "compare": "baseline", "judge": "judge", "severe": "at_most"}
_CHECKS = ("gate", "reliable", "luck", "compare", "judge", "severe")


def _fail(where: str, message: str) -> SpecError:
    return SpecError(f"gate rule: {where}: {message}")


def _unknown(where: str, key: str, allowed) -> SpecError:
    close = difflib.get_close_matches(str(key), list(allowed), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return _fail(f"{where}{key}", f"unknown key{hint}; allowed: {', '.join(sorted(allowed))}")


def _typed(where: str, value: Any, kind) -> Any:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if float in kinds and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if bool not in kinds and isinstance(value, bool) or not isinstance(value, kinds):
        names = " or ".join({"str": "a string", "dict": "a mapping", "bool": "true/false", "float": "a number",
                             "list": "a list"}[k.__name__] for k in kinds)
        raise _fail(where, f"{value!r} is not {names}")
    return value


def _load_text(text: str, fmt: str) -> Any:
    if fmt == "toml":
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise _fail("text", f"not valid TOML ({exc})") from None
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise _fail("text", f"not valid YAML ({parse_problem(exc)})") from None


def parse_gate_rule(text: str | Mapping[str, Any], *, fmt: str = "yaml") -> dict[str, Any]:
    """Parse (YAML or TOML text, or a mapping) and validate a gate rule; fill defaults."""
    raw = _load_text(text, fmt) if isinstance(text, str) else text
    if not isinstance(raw, Mapping):
        raise _fail("text", "must be a mapping of checks (reliable, luck, compare, gate)")
    rule: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in _TOP:
            raise _unknown("", key, _TOP)
        rule[key] = _typed(key, value, _TOP[key])
    for section, fields in _SECTIONS.items():
        if section not in rule:
            continue
        given = rule[section]
        for key in given:
            if key not in fields:
                raise _unknown(f"{section}.", key, fields)
        if _REQUIRED.get(section) and _REQUIRED[section] not in given:
            raise _fail(section, f"needs {_REQUIRED[section]!r}")
        rule[section] = {k: (_typed(f"{section}.{k}", given[k], kind) if k in given and given[k] is not None
                             else default) for k, (kind, default) in fields.items()}
    for section, key in (("reliable", "bar"), ("reliable", "prob"), ("luck", "at_most"), ("luck", "level"),
                         ("compare", "alpha"), ("compare", "power"), ("compare", "margin"), ("judge", "kappa"),
                         ("judge", "flips"), ("severe", "at_most"), ("severe", "level")):
        value = rule.get(section, {}).get(key)
        if value is not None and not 0 < value < 1:
            raise _fail(f"{section}.{key}", f"{value!r} must lie strictly between 0 and 1")
    c = rule.get("compare", {})
    if bool(c.get("judge")) != bool(c.get("labels")):
        raise _fail("compare", "corrected rates need both judge (the judge's digest or name) and labels (the "
                    "people's labels file)")
    if "reliable" in rule and rule["reliable"]["per"] not in ("scenario", "suite"):
        raise _fail("reliable.per", f"{rule['reliable']['per']!r} is not one of scenario, suite")
    if rule.get("unknown", "fail") not in UNKNOWN_POLICIES:
        raise _fail("unknown", f"{rule['unknown']!r} must be 'fail' (count a run of unknown outcome as a failure, "
                    "the default) or 'exclude' (leave it out)")
    rule["on_inconclusive"] = rule.get("on_inconclusive", "warn")
    if rule["on_inconclusive"] not in INCONCLUSIVE_POLICIES:
        raise _fail("on_inconclusive", f"{rule['on_inconclusive']!r} must be 'warn' (a check too small to tell "
                    "does not fail the gate but is listed, the default), 'fail' or 'pass'")
    if not any(rule.get(c) for c in _CHECKS):
        raise _fail("text", "names no check: add one of gate, reliable, luck, compare, judge, severe")
    if (rule.get("gate") or "luck" in rule) and "spec" not in rule:
        raise _fail("spec", "gate and luck grade the runs' paths: name the spec")
    if "severe" in rule and "spec" not in rule:
        raise _fail("spec", "severe counts the checks runs break, by severity: name the spec")
    if "severe" in rule and rule["severe"]["severity"] not in ("hard", "soft", "warn"):
        raise _fail("severe.severity", f"{rule['severe']['severity']!r} is not one of hard, soft, warn")
    return rule


def load_gate_rule(path: str | Path) -> tuple[dict[str, Any], bytes]:
    """A rule file (``.toml`` read as TOML, anything else as YAML): the validated rule and its bytes.

    A relative ``spec`` path is taken relative to the rule file."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise _fail(str(path), f"cannot be read ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(str(path), f"not UTF-8 at byte {exc.start}") from None
    rule = parse_gate_rule(text, fmt="toml" if path.suffix.lower() == ".toml" else "yaml")
    if isinstance(rule.get("spec"), str) and not Path(rule["spec"]).is_absolute():
        rule["spec"] = str(path.parent / rule["spec"])
    for section in ("judge", "compare"):
        labels = rule.get(section, {}).get("labels")
        if isinstance(labels, str) and not Path(labels).is_absolute():
            rule[section]["labels"] = str(path.parent / labels)
    return rule, raw


@dataclass(frozen=True)
class GateSealResult(Result):
    """A gate rule sealed in the ledger (``fluke gate RULE --seal``)."""

    kind = "gate_seal"
    digest: str
    text_sha256: str
    name: str
    file: str = "RULE"            # the rule file sealed, which the check must be given again
    ledger: str | None = None     # its URL, so that the hint names it

    def payload(self) -> dict[str, Any]:
        return {"digest": self.digest, "text_sha256": self.text_sha256, "name": self.name}

    def blocks(self) -> list:
        check = fluke_command(self.ledger, "gate", self.file)
        return [line(f"sealed gate rule {self.name!r}: digest {self.digest[:12]} (rule sha256 "
                     f"{self.text_sha256[:12]}); runs recorded from now on can confirm it"),
                note(f"Check it after the runs with the same file: {check} (with sealed: true in the rule).")]


def seal_gate(ledger, rule: str | Path) -> GateSealResult:
    """Seal a gate rule file's exact bytes in the ledger, before the runs (validated first).

    >>> import os, tempfile
    >>> from fluke.ledger import open_ledger
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "rule.yaml")
    >>> _ = open(path, "w").write("reliable: {bar: 0.8}\\nsealed: true\\n")
    >>> len(seal_gate(open_ledger(os.path.join(folder, "s.db")), path).digest)
    64
    """
    parsed, raw = load_gate_rule(rule)
    if callable(ledger) and not hasattr(ledger, "runs"):
        ledger = ledger()
    digest, sha = seal_text(ledger, GATE_SEAL_KIND, raw)
    return GateSealResult(digest, sha, parsed.get("name") or "gate rule", str(rule) if isinstance(rule, (str, Path))
                          else "RULE", getattr(ledger, "url", None))


def seal_text(ledger, kind: str, raw: bytes) -> tuple[str, str]:
    """Store the exact bytes ``raw`` of a rule file as a ``kind`` seal document, stamped now:
    ``(document digest, SHA-256 of the text)``, what :func:`_seal_claim` later compares."""
    from ..ledger import utcnow

    sha = hashlib.sha256(raw).hexdigest()
    digest = ledger.put_document(kind, {"text_sha256": sha, "text": raw.decode("utf-8"), "sealed_at": utcnow()})
    return digest, sha


def _seal_claim(ledger, raw: bytes | None, version: str, *, kind: str = GATE_SEAL_KIND,
                verb: tuple[str, ...] = ("gate", "RULE", "--seal")) -> Claim:
    """Whether the exact rule text ``raw`` was sealed (a ``kind`` document) before every run of ``version``."""
    from .._time import utc_time as when
    from ..record import digest

    asked = "the rule was sealed before every run it judges"
    if raw is None:
        return Claim("sealed", asked, FAILS, "the rule was given as data, not as the file that was sealed",
                     "no rule text", ("fails: give the rule file that was sealed",), version=version)
    sha = hashlib.sha256(raw).hexdigest()
    seals = [d for d in ledger.documents(kind) if d.body.get("text_sha256") == sha]
    intact = [d for d in seals if digest(d.body) == d.digest
              and hashlib.sha256(str(d.body.get("text", "")).encode()).hexdigest() == sha]
    if not intact:
        why = ("a seal of this rule no longer matches its digest" if seals else
               f"no seal of this exact rule file in the ledger (seal it first: "
               f"{fluke_command(ledger, *verb)})")
        return Claim("sealed", asked, FAILS, why, f"rule sha256 {sha[:12]}", (f"fails: {why}",), version=version)
    first = min(intact, key=lambda d: when(d.recorded_at))
    sealed = when(first.recorded_at)
    times = ledger.recorded_times(version=version)
    early = sum(when(t) <= sealed for t in times.values())
    found = f"sealed {first.recorded_at} (digest {first.digest[:12]}); {early} of {len(times)} runs recorded before"
    status = HOLDS if early == 0 else FAILS
    reasons = () if early == 0 else (f"fails: {early} of {len(times)} runs of version {version[:12]} were recorded "
                                     "before the seal; they cannot confirm it",)
    return Claim("sealed", asked, status, found, f"rule sha256 {sha[:12]}", reasons, version=version)


#: Reasons shown outside the comment's ``<details>`` (the worst first); the rest are inside it.
WORST_SHOWN = 5


@dataclass(frozen=True)
class DecisionResult(Result):
    """A gate rule decided on the ledger: ``holds`` when every check holds, or is too small to
    tell and the rule's ``on_inconclusive`` is ``warn`` or ``pass``."""

    kind = "gate"
    name: str
    version: str
    label: str
    claims: tuple[Claim, ...]
    rule: dict

    @property
    def on_inconclusive(self) -> InconclusivePolicy:
        return InconclusivePolicy.of(self.rule.get("on_inconclusive", "warn"))

    @property
    def holds(self) -> bool:
        return self.status == HOLDS or (self.status == TOO_SMALL and self.on_inconclusive.lets_pass)

    @property
    def status(self) -> str:
        if all(c.holds for c in self.claims):
            return HOLDS
        return FAILS if any(c.status == FAILS for c in self.claims) else TOO_SMALL

    def reasons(self) -> list[str]:
        """Every reason a check does not hold, each prefixed by its check (failing checks first)."""
        order = sorted(self.claims, key=lambda c: (c.holds, c.status != FAILS))
        return [f"{c.check}: {r}" for c in order if not c.holds for r in (c.reasons or (c.found,))]

    def settle(self) -> list[str]:
        """For each check too small to tell, the runs that would settle it (where the check knows)."""
        out = []
        for c in self.claims:
            if c.status == TOO_SMALL and c.runs_needed is not None:
                per = f" {c.needed_unit}" if c.needed_unit else " per arm" if c.check == "not_worse_than" else \
                    " more clean runs"
                out.append(f"{c.check}: about {c.runs_needed:.0f}{per} would settle it")
        return out

    def payload(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "label": self.label, "holds": self.holds,
                "status": self.status, "on_inconclusive": self.on_inconclusive,
                "checks": [c.as_dict() for c in self.claims], "reasons": self.reasons(), "settle": self.settle(),
                "rule": self.rule}

    def headline(self) -> str:
        """The verdict in one line: what the heading of every rendering says."""
        word = {HOLDS: "HOLDS", FAILS: "FAILS", TOO_SMALL: "DOES NOT HOLD (too small to tell)"}[self.status]
        if self.status == TOO_SMALL and self.holds:
            word = f"PASSES WITH A WARNING (too small to tell; on_inconclusive: {self.on_inconclusive})"
        return f"fluke gate {word}: {self.name}"

    def blocks(self) -> list:
        held = sum(c.holds for c in self.claims)
        out: list = [Heading(self.headline()),
                     line(Span(f"{held} of {len(self.claims)} checks hold", "good" if held == len(self.claims)
                               else "bad"), f" for version {self.label}")]
        order = sorted(self.claims, key=lambda c: (c.holds, c.status != FAILS))
        style = {HOLDS: "good", FAILS: "bad", TOO_SMALL: "warn"}
        shown = {TOO_SMALL: f"too small to tell ({self.on_inconclusive})"}
        out.append(Table("checks (failing first)",
                         [Column("check", key=True), Column("status"), Column("asked"), Column("the runs say")],
                         [[c.check, Span(shown.get(c.status, c.status), style[c.status]), c.asked, c.found]
                          for c in order], limit=None))
        for c in self.claims:
            if c.limit:
                out.append(line(f"detection limit ({c.check}): {c.limit}"))
        for text in self.settle():
            out.append(line(text))
        if any(c.status == TOO_SMALL for c in self.claims):
            out.append(note(f"on_inconclusive: {self.on_inconclusive} (the rule's policy for a check too small to "
                            "tell: warn lists it and exits 0, fail exits 1, pass exits 0)"))
        reasons = self.reasons()
        if reasons:
            worst = self.worst()
            out.append(Table(f"worst reasons ({len(worst)} of {len(reasons)})",
                             [Column("reason", key=True)], [[r] for r in worst], limit=None))
            if len(reasons) > WORST_SHOWN:
                out.append(Details(f"every reason it does not hold ({len(reasons)})",
                                   [Table("", [Column("reason", key=True)], [[r] for r in reasons], limit=200,
                                          more="reasons")]))
        out.append(blank())
        out += [note(f"Conditional on ({c.check}): {c.rests_on}.") for c in self.claims]
        return out

    def annotations(self) -> list[tuple[str, str, str]]:
        """One annotation per reason (an error for a check that fails, a warning for one too small
        to tell), after one for the verdict."""
        level = {HOLDS: "notice", FAILS: "error", TOO_SMALL: "warning" if self.holds else "error"}
        out = [(level[self.status], "fluke gate", self.headline())]
        for c in sorted(self.claims, key=lambda c: (c.holds, c.status != FAILS)):
            if not c.holds:
                out += [(level[c.status], f"fluke gate: {c.check}", r) for r in (c.reasons or (c.found,))]
        return out

    def worst(self) -> list[str]:
        """The first :data:`WORST_SHOWN` reasons taken in turn from each check that does not hold
        (its worst first), so one check's many reasons do not hide another's."""
        lists = [[f"{c.check}: {r}" for r in (c.reasons or (c.found,))]
                 for c in sorted(self.claims, key=lambda c: (c.holds, c.status != FAILS)) if not c.holds]
        out: list[str] = []
        for depth in range(max(map(len, lists), default=0)):
            out += [reasons[depth] for reasons in lists if depth < len(reasons)]
            if len(out) >= WORST_SHOWN:
                break
        return out[:WORST_SHOWN]


def gate(ledger, rule: str | Path | Mapping[str, Any], *, raw: bytes | None = None, version: str | None = None,
         baseline: str | None = None) -> DecisionResult:
    """Decide a gate rule (a file path or a parsed mapping) on ``ledger``; see the module docstring.

    ``version`` and ``baseline`` override the rule's (CI knows the commits only when it runs);
    they choose which runs are judged, not how, and the result records them.

    >>> import os, tempfile
    >>> from fluke.ledger import open_ledger
    >>> from fluke.record import Identity, Outcome, Run
    >>> led = open_ledger(os.path.join(tempfile.mkdtemp(), "g.db"))
    >>> _ = led.ingest([Run(scenario=f"s{i}", trial=t, identity=Identity(model="m"),
    ...                     outcome=Outcome(passed=True)) for i in range(2) for t in range(40)])
    >>> result = gate(led, {"reliable": {"bar": 0.9, "prob": 0.95}})
    >>> result.holds, result.status
    (True, 'holds')
    """
    from ._claims import claim_gate, claim_luck, claim_not_worse, claim_reliable
    from ._select import pick_version, version_label

    if isinstance(rule, (str, Path)):
        rule, raw = load_gate_rule(rule)
    else:
        rule = parse_gate_rule(rule)
    if baseline is not None:
        if "compare" not in rule:
            raise SpecError("gate: --baseline given, but the rule has no compare check")
        rule = {**rule, "compare": {**rule["compare"], "baseline": baseline}}
    if version is not None:
        rule = {**rule, "version": version}
    if callable(ledger) and not hasattr(ledger, "runs"):  # opened only once the rule is known to be good
        ledger = ledger()
    version = pick_version(ledger, rule.get("version"))
    claims: list[Claim] = []
    unknown = UnknownPolicy.of(rule.get("unknown", UnknownPolicy.FAIL))
    if rule.get("gate"):
        claims.append(claim_gate(ledger, rule["spec"], version=version, unknown=unknown))
    if "reliable" in rule:
        r = rule["reliable"]
        claims.append(claim_reliable(ledger, version=version, scenarios=r["scenarios"], bar=r["bar"],
                                     prob=r["prob"], per=r["per"], prior=r["prior"], unknown=unknown))
    if "luck" in rule:
        claims.append(claim_luck(ledger, rule["spec"], version=version, at_most=rule["luck"]["at_most"],
                                 level=rule["luck"]["level"], unknown=unknown))
    if "severe" in rule:
        from ._decide import claim_severe

        s = rule["severe"]
        claims.append(claim_severe(ledger, rule["spec"], version=version, severity=s["severity"],
                                   at_most=s["at_most"], level=s["level"], unknown=unknown))
    if "compare" in rule and (rule["compare"]["judge"] or rule["compare"]["labels"]):
        c = rule["compare"]
        from ._corrected import claim_not_worse_corrected

        claims.append(claim_not_worse_corrected(ledger, c["baseline"], version=version, judge=c["judge"],
                                                labels=c["labels"], margin=c["margin"], alpha=c["alpha"],
                                                power=c["power"]))
    elif "compare" in rule:
        c = rule["compare"]
        claims.append(claim_not_worse(ledger, c["baseline"], version=version, margin=c["margin"],
                                      alpha=c["alpha"], power=c["power"], unknown=unknown))
    if "judge" in rule:
        from ._judge import claim_judge

        claims.append(claim_judge(ledger, rule["judge"]))
    if rule.get("sealed"):
        claims.append(_seal_claim(ledger, raw, version))
    label = version_label(ledger, version)
    return DecisionResult(rule.get("name") or "gate rule", version, label, tuple(claims), rule)
