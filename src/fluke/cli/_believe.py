"""``fluke believe`` and ``predict``: what the runs let you believe (``calibration`` checks it).

>>> import os, tempfile
>>> from click.testing import CliRunner
>>> from fluke.cli import group
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Identity, Outcome, Run
>>> path = os.path.join(tempfile.mkdtemp(), "doc.db")
>>> with open_ledger(path) as ledger:
...     _ = ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model="m"), outcome=Outcome(passed=True))
...                        for t in range(5)])
>>> out = CliRunner().invoke(group, ["--ledger", path, "believe"]).output
>>> "What we infer: average rate 0.857" in out
True
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass
from typing import Any

import click
import numpy as np

from ..errors import InputError
from ._believe_print import _name, _print_believe, _print_review, _review_json
from ._common import Context, cli_errors, console, emit_json, json_option, pass_context

_PRIOR_HELP = "uniform, beta:a,b (e.g. beta:2,2), or family (empirical Bayes within declared mechanism tags)."


@dataclass
class _Beliefs:
    """Everything ``believe`` and ``predict`` compute for one version (built by :func:`_beliefs`)."""

    version: str
    label: str
    cells: list[tuple[str, str]]          # (scenario, condition)
    k: np.ndarray
    n: np.ndarray
    belief: Any                           # BetaPosterior, or BetaMixture with change detection
    state: Any                            # BetaPosterior carried forward (for certification)
    prior_text: list[str]
    families: list[str | None]
    carried: list[str]
    change: Any = None
    origin: str | None = None
    delta: np.ndarray | None = None
    account: Any = None                   # RunningAccount with --account
    account_labels: list[str] | None = None


_VERSIONS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _infos(ledger) -> list:
    """``ledger.versions()``, asked once per command (it aggregates over every run)."""
    if ledger not in _VERSIONS:
        _VERSIONS[ledger] = ledger.versions()
    return _VERSIONS[ledger]


def _version_label(ledger, version: str) -> str:
    for info in _infos(ledger):
        if info.version == version:
            return f"{version[:12]} ({info.identity.label()})"
    return version[:12]


def _pick_version(ledger, selector: str | None) -> str:
    if selector:
        return ledger.resolve_version(selector)
    infos = _infos(ledger)
    if not infos:
        raise InputError(None, None, None, "the ledger has no runs", hint="add some with: fluke ingest FILE")
    return infos[-1].version  # the most recently recorded


def _tags(ledger, version: str) -> dict[str, list[str]]:
    tags: dict[str, set[str]] = {}
    for run in ledger.runs(version=version):
        tags.setdefault(run.scenario, set()).update(run.tags)
    return {s: sorted(t) for s, t in tags.items()}


def _natural(text: str) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _family_of(tags: list[str], prefix: str) -> str | None:
    chosen = [t for t in tags if t.startswith(prefix)]
    return chosen[0] if chosen else None


def _beliefs(ledger, *, version_sel: str | None, prior: str, carry_from: str | None, delta: float,
             touched: tuple[str, ...], odds: float | None, family_prefix: str, want_tags: bool = False,
             account: bool = False) -> _Beliefs:
    from .. import inference as inf

    if carry_from is None and not account and (odds is not None or touched):
        raise InputError(None, None, "--odds/--touched", "a change check or a footprint needs an earlier version",
                         hint="add --carry-from VERSION, or --account to carry through every earlier version")
    if carry_from is not None and account:
        raise InputError(None, None, "--carry-from/--account", "choose one: one earlier version, or all of them")
    version = _pick_version(ledger, version_sel)
    rows = sorted(ledger.counts(version=version), key=lambda r: (_natural(r.scenario), r.condition))
    if not rows:
        raise InputError(None, None, "--version", f"version {version[:12]} has no runs")
    cells = [(r.scenario, r.condition) for r in rows]
    k = np.array([r.passes for r in rows], float)
    n = np.array([r.trials for r in rows], float)
    need_tags = want_tags or prior == "family" or bool(touched)
    tags = _tags(ledger, version) if need_tags else {}
    families = [_family_of(tags.get(s, []), family_prefix) for s, _ in cells]
    if prior == "family":
        fam = inf.family_priors(k, n, families)
        base = fam.prior
        prior_text = [fam.describe(i) for i in range(len(cells))]
    else:
        try:
            chosen = inf.parse_prior(prior)
        except ValueError as exc:
            raise InputError(None, None, "--prior", str(exc)) from None
        base = inf.posterior(np.zeros(len(cells)), np.zeros(len(cells)), prior=chosen)
        prior_text = [chosen.describe()] * len(cells)
    out = _Beliefs(version, _version_label(ledger, version), cells, k, n, None, None, prior_text,
                   families, ["nothing; this version's runs only."] * len(cells))
    if account:
        return _account(ledger, out, base, tags, delta=delta, touched=touched, odds=odds)
    if carry_from is None:
        out.belief = out.state = inf.posterior(k, n, prior=base)
        return out
    old = ledger.resolve_version(carry_from)
    if old == version:
        raise InputError(None, None, "--carry-from", "names the same version as --version",
                         hint="carry from an earlier version")
    old_counts = {(r.scenario, r.condition): r for r in ledger.counts(version=old)}
    ok = np.array([c in old_counts for c in cells])
    ko = np.array([old_counts[c].passes if c in old_counts else 0 for c in cells], float)
    no = np.array([old_counts[c].trials if c in old_counts else 0 for c in cells], float)
    d = inf.footprint_discount([tags.get(s, []) for s, _ in cells], touched, inside=delta) if touched \
        else np.full(len(cells), delta)
    carried = inf.discount(inf.posterior(ko, no, prior=base), d)
    out.origin, out.delta = _version_label(ledger, old), d
    if odds is None:
        out.belief = out.state = inf.posterior(k, n, prior=carried)
        out.carried = [inf.carried_text(out.origin, float(d[i])) if ok[i] else out.carried[i]
                       for i in range(len(cells))]
        return out
    change = inf.detect_change(carried, k, n, odds=odds, reset=base)
    out.change, out.belief = change, change.mixture
    reset = change.p_changed >= 0.5
    out.state = inf.BetaPosterior(np.where(reset, change.changed.alpha, change.unchanged.alpha),
                                  np.where(reset, change.changed.beta, change.unchanged.beta), base.prior)
    out.carried = [inf.carried_text(out.origin, float(d[i]), p_changed=float(change.p_changed[i]), odds=odds,
                                    reset=bool(reset[i])) if ok[i] else out.carried[i]
                   for i in range(len(cells))]
    return out


def _account(ledger, out: _Beliefs, base, tags, *, delta: float, touched, odds) -> _Beliefs:
    """The running account through every version recorded up to this one, in recording order."""
    from .. import inference as inf

    infos = _infos(ledger)
    upto = [i.version for i in infos].index(out.version) + 1
    chain = infos[:upto]
    index = {c: j for j, c in enumerate(out.cells)}
    k = np.zeros((len(chain), len(out.cells)))
    n = np.zeros_like(k)
    for t, info in enumerate(chain):
        for r in ledger.counts(version=info.version):
            j = index.get((r.scenario, r.condition))
            if j is not None:
                k[t, j], n[t, j] = r.passes, r.trials
    d = inf.footprint_discount([tags.get(s, []) for s, _ in out.cells], touched, inside=delta) if touched \
        else np.full(len(out.cells), delta)
    acc = inf.running_account(k, n, prior=base, delta=d, odds=odds, bar=None)
    labels = [_version_label(ledger, i.version) for i in chain]
    out.belief = out.state = acc.final
    out.account, out.account_labels, out.delta = acc, labels, d
    out.origin = labels[0] if len(chain) > 1 else None
    check = f"; change check at prior odds {odds:g}:1 for unchanged" if odds is not None else ""
    for j in range(len(out.cells)):
        if len(chain) == 1:
            break
        resets = int(acc.reset[:, j].sum())
        since = labels[int(acc.since[-1, j])]
        out.carried[j] = (f"the running account through {len(chain)} versions ({labels[0]} to {labels[-1]}), "
                          f"each carried at δ = {float(d[j]):g}{check}; {resets} reset(s); evidence runs from "
                          f"version {since}.")
    return out


def _belief_options(func):
    for option in reversed([
        click.option("--version", "version_sel", help="The version: hash prefix or field=value (default: the latest)."),
        click.option("--prior", default="uniform", show_default=True, help=_PRIOR_HELP),
        click.option("--family-prefix", default="", help="With --prior family: only tags starting with this "
                     "(e.g. tool:) name a mechanism family."),
        click.option("--carry-from", help="Carry evidence from this earlier version."),
        click.option("--account", is_flag=True, help="Carry evidence through every earlier version, in the order "
                     "recorded (the running account); with --odds, reset a scenario when a change is likely."),
        click.option("--discount", "delta", type=click.FloatRange(0, 1), default=0.5, show_default=True,
                     help="δ: the share of the carried evidence kept (1 keeps all, 0 starts over)."),
        click.option("--touched", multiple=True, help="Tags the change touched: only scenarios carrying one are "
                     "discounted; the rest carry at δ = 1. Repeatable."),
        click.option("--odds", type=click.FloatRange(min=0, min_open=True), default=None,
                     help="Check each scenario for a change: prior odds for 'unchanged' (e.g. 4 for 4:1)."),
    ]):
        func = option(func)
    return func


@click.command()
@_belief_options
@click.option("--bar", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.9, show_default=True,
              help="The reliability bar θ must clear.")
@click.option("--level", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.9,
              show_default=True, help="Credible interval level.")
@click.option("--next", "next_m", type=click.IntRange(min=1), default=8, show_default=True,
              help="m in P(next m runs all pass).")
@click.option("--statements", is_flag=True, help="Print the four-part statement of every scenario.")
@click.option("--against", help="Also compare with this version, scenario by scenario (week over week).")
@click.option("--clean-batch", type=click.IntRange(min=1), default=10, show_default=True,
              help="With --against: runs in a clean batch that graduates a frontier scenario.")
@json_option
@pass_context
def believe(ctx: Context, version_sel, prior, family_prefix, carry_from, account, delta, touched, odds, bar,
            level, next_m, statements, against, clean_batch) -> None:
    """Posteriors per scenario, the suite questions, and the four-part statement.

    \b
    Example:
      fluke believe --version model=gpt-4o --bar 0.9
      fluke believe --version model=v2 --carry-from model=v1 --discount 0.5 --odds 4
      fluke believe --account --discount 0.9 --odds 4
      fluke believe --version model=v2 --against model=v1 --clean-batch 10
    """
    from .. import inference as inf

    with cli_errors():
        b = _beliefs(ctx.ledger(), version_sel=version_sel, prior=prior, carry_from=carry_from, delta=delta,
                     touched=touched, odds=odds, family_prefix=family_prefix, account=account)
        check = _check_arrays(b)
        review = _review(ctx.ledger(), b, against, clean_batch) if against else None
        lo, hi = b.belief.interval(level)
        p_above, mean, p_next = b.belief.sf(bar), b.belief.mean, b.belief.p_all_pass(next_m)
        certify = inf.runs_to_certify(b.state, bar=bar, level=0.95)
        suite = inf.suite_questions(b.belief, bar=bar)
        suite_certify = inf.suite_runs_to_certify(b.state, bar=bar, level=0.95)
        prior_summary = b.prior_text[0] if len(set(b.prior_text)) == 1 else f"{prior} (per scenario, see each)"
        carried_summary = (None if b.origin is None else
                           inf.carried_text(b.origin, float(np.mean(b.delta)) if len(set(b.delta)) == 1 else None))
        if b.origin is not None and len(set(b.delta)) > 1:
            carried_summary = (f"evidence of version {b.origin}, discounted by footprint: δ = {delta:g} for "
                               f"{int(np.sum(b.delta < 1))} scenarios tagged {', '.join(touched)}, 1 elsewhere.")
        if b.account is not None and b.origin is not None:
            carried_summary = (f"the running account through {len(b.account_labels)} versions "
                               f"({b.account_labels[0]} to {b.account_labels[-1]})"
                               + (f", δ = {delta:g} each step" if len(set(b.delta)) == 1 else
                                  f", δ = {delta:g} for scenarios tagged {', '.join(touched)} and 1 elsewhere")
                               + f"; {int(b.account.reset.sum())} reset(s) across scenarios.")
        elif b.change is not None:
            carried_summary += (f" Change check at prior odds {odds:g}:1: {int(np.sum(b.change.p_changed >= 0.5))} "
                                f"of {len(b.cells)} scenarios likely changed and were reset.")
        suite_stmt = inf.suite_statement(suite, b.k, b.n, version=b.label, prior=prior_summary, carried=carried_summary)
        per = inf.scenario_statements([_name(c) for c in b.cells], b.k, b.n, b.belief, version=b.label,
                                      prior=b.prior_text, bar=bar, level=level, carried=b.carried)
    if ctx.as_json:
        emit_json("believe", {
            "version": b.version, "label": b.label, "bar": bar, "level": level, "prior": prior,
            "carried_from": b.origin, "odds": odds, "account": b.account_labels,
            "scenarios": [dict(
                scenario=c[0], condition=c[1], passes=int(b.k[i]), trials=int(b.n[i]), mean=float(mean[i]),
                p_above=float(p_above[i]), interval=[float(lo[i]), float(hi[i])], next_m=next_m,
                p_next_all_pass=float(p_next[i]), runs_to_certify=float(certify[i]),
                p_changed=None if check is None else float(check[0][i]),
                surprise=None if check is None else float(check[1][i]),
                since=None if b.account is None else b.account_labels[int(b.account.since[-1, i])],
                resets=None if b.account is None else int(b.account.reset[:, i].sum()),
                delta=None if b.delta is None else float(b.delta[i]),
                prior=b.prior_text[i], statement=per[i].as_dict()) for i, c in enumerate(b.cells)],
            "suite": dict(scenarios=suite.scenarios, average_mean=suite.average_mean, average_sd=suite.average_sd,
                          expected_below=suite.expected_below, below_interval=list(suite.below_interval(0.9)),
                          p_all_clear=suite.p_all_clear,
                          log10_p_all_clear=suite.log10_p_all_clear, expected_failures=suite.expected_failures,
                          failures_interval=list(suite.failures_interval(0.9)),
                          failures_pmf=suite.failures_pmf, runs_to_certify_suite=suite_certify),
            "statement": suite_stmt.as_dict(),
            "review": None if review is None else _review_json(review)})
        return
    _print_believe(b, mean, p_above, lo, hi, p_next, certify, suite, suite_certify, suite_stmt, per,
                   bar=bar, level=level, next_m=next_m, statements=statements, check=check)
    if review is not None:
        _print_review(review)


def _review(ledger, b: _Beliefs, against: str, clean_batch: int) -> dict:
    """Week over week: the regression set is every scenario whose old batch was clean."""
    from .. import inference as inf

    old = ledger.resolve_version(against)
    counts = {(r.scenario, r.condition): r for r in ledger.counts(version=old)}
    idx = [i for i, c in enumerate(b.cells) if c in counts]
    if not idx:
        raise InputError(None, None, "--against", f"version {old[:12]} shares no scenario with version {b.version[:12]}")
    ko = np.array([counts[b.cells[i]].passes for i in idx], float)
    no = np.array([counts[b.cells[i]].trials for i in idx], float)
    result = inf.review_week(ko, no, b.k[idx], b.n[idx], frontier=ko < no, clean_batch=clean_batch)
    return dict(old=_version_label(ledger, old), cells=[b.cells[i] for i in idx], ko=ko, no=no,
                kn=b.k[idx], nn=b.n[idx], result=result)


def _check_arrays(b: _Beliefs):
    """(P(changed), surprise) of the latest batch per scenario, when a change check ran."""
    if b.change is not None:
        return b.change.p_changed, b.change.surprise
    if b.account is not None and b.account.odds is not None and len(b.account_labels) > 1:
        return b.account.p_changed[-1], b.account.surprise[-1]
    return None


@click.command()
@_belief_options
@json_option
@pass_context
def predict(ctx: Context, version_sel, prior, family_prefix, carry_from, account, delta, touched, odds) -> None:
    """Record, before the next batch runs, each scenario's probability that a run passes.

    The predictions go into the ledger as documents; ``fluke calibration`` scores them
    against the runs recorded afterwards.

    \b
    Example:
      fluke predict --version model=gpt-4o --prior uniform
      fluke ingest next-batch.json && fluke calibration
    """
    from ..ledger import utcnow

    with cli_errors():
        ledger = ctx.ledger()
        b = _beliefs(ledger, version_sel=version_sel, prior=prior, carry_from=carry_from, account=account, delta=delta,
                     touched=touched, odds=odds, family_prefix=family_prefix, want_tags=True)
        made_at = utcnow()
        mean = b.belief.mean
        digests = [ledger.put_document("prediction", dict(
            version=b.version, scenario=c[0], condition=c[1], probability=float(mean[i]), made_at=made_at,
            prior=b.prior_text[i], family=b.families[i], carried=b.carried[i],
            evidence=dict(passes=int(b.k[i]), trials=int(b.n[i]))))
            for i, c in enumerate(b.cells)]
    if ctx.as_json:
        emit_json("predict", {"version": b.version, "made_at": made_at, "predictions": len(digests),
                              "digests": digests})
        return
    console().print(f"recorded {len(digests)} predictions for version {b.label} at {made_at}; "
                    "after the next batch is ingested, score them with: fluke calibration", markup=False)
