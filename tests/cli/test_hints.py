"""Every ``fluke …`` suggestion fluke prints runs where it was printed.

Each command below is one a newcomer meets (the README's steps, a typo, a missing ledger, a
seal, the simulation's reveal); every line it prints that holds ``fluke VERB …`` is taken as
a hint, run in the same folder with the same environment, and must exit 0 or 1 (1: a gate or
a decision that does not hold) without an error line. Placeholders in capitals are filled
with what a user would give: ``FILE`` a run file, ``SPEC`` the demo's spec, ``RULE`` a rule.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from fluke.cli import VERBS, group

from ..conftest import TAU_AIRLINE, TAU2_RESULTS, need

#: A hint: ``fluke`` where a suggestion stands (after "with ", ": ", "e.g. ", "then " or the
#: spaces around "·"; not a heading such as "fluke gate FAILS"), global options, a verb, and its
#: words up to the end of the suggestion (a bracket, a semicolon, "·", ", then", or the line's end).
_WHERE = r"(?:(?<=with )|(?<=: )|(?<=e\.g\. )|(?<=then )|(?<=   ))"
_VERB = "|".join(sorted(VERBS, key=len, reverse=True))
HINT = re.compile(_WHERE + r"fluke((?: --(?:ledger|format) \S+| --json| --all)* (?:--help|" + _VERB
                  + r")\b(?:(?!, then|, or |\s+·|\s\(|[;)]).)*)")


def hints(text: str) -> list[str]:
    """The ``fluke …`` commands in ``text``, without the leading ``fluke``.

    >>> hints("next: fluke --ledger d.db believe   ·   fluke compare a b (see: fluke compare --help)")
    ['--ledger d.db believe', 'compare a b', 'compare --help']
    >>> hints("fluke gate FAILS: release; seal it first with fluke gate RULE --seal")
    ['gate RULE --seal']
    """
    return [m.group(1).strip() for m in HINT.finditer(text)]


def fluke(*args: str):
    return CliRunner().invoke(group, list(args), prog_name="fluke", catch_exceptions=False)


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    """A folder with the ledgers of the README: the demo, τ-bench's gpt-4o, τ²-bench, a simulation."""
    root = tmp_path_factory.mktemp("newcomer")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        mp.delenv("FLUKE_LEDGER", raising=False)
        assert fluke("demo", "--out", "demo").exit_code == 0
        assert fluke("--ledger", "quick.db", "ingest", str(need(TAU_AIRLINE)), "--identity", "model=gpt-4o"
                     ).exit_code == 0
        assert fluke("--ledger", "tau2.db", "ingest", *map(str, sorted(need(TAU2_RESULTS).glob("*.json")))
                     ).exit_code == 0
        (root / "rule.yaml").write_text("name: half pass\ndecision: {statistic: mean, above: 0.5}\n")
        (root / "release.yaml").write_text("version: model=support-desk-v2\nreliable: {bar: 0.9, prob: 0.95}\n"
                                           "sealed: true\n")
        (root / "loss.yaml").write_text("failure: 1\nask: 0.2\n")   # a loss table that needs no spec
        (root / "empty").mkdir()
    return root


#: (folder, command): what a newcomer types, each printing at least one hint.
NEWCOMER = [
    (".", "demo --out demo2"),
    (".", "--ledger sim.db simulate --runs-per-task 2"),
    (".", "--ledger sim2.db simulate --runs-per-task 2 --runs-per-task 3 --seal-file p2.json"),
    (".", "--ledger sim2.db simulate --reveal p2.json"),
    (".", "--ledger demo/fluke.db unseal deadbeef"),
    (".", "--ledger demo/fluke.db unseal --list"),
    (".", "--ledger demo/fluke.db seal rule.yaml"),
    (".", "--ledger demo/fluke.db predict"),
    (".", "--ledger demo/fluke.db gate release.yaml"),
    (".", "--ledger demo/fluke.db gate release.yaml --seal"),
    (".", "--ledger demo/fluke.db plan --bar 0.9 --version model=support-desk-v2 --seal"),
    (".", "--ledger demo/fluke.db summary --scenario nothing-like-this"),
    (".", "--ledger quick.db interval --condition nothing=here"),
    (".", "--ledger quick.db predict"),
    (".", "--ledger quick.db calibration"),
    (".", "--ledger quick.db report --out quick.html"),
    (".", "belive"),
    (".", "--ledger quick.db compare model=gpt-4o"),
    ("empty", "summary"),
]


def _placeholders(place: Path, folder: Path) -> dict[str, str]:
    return {"FILE": str(need(TAU_AIRLINE)), "SPEC": str(place / "demo" / "spec.yaml"),
            "RULE": str(place / "release.yaml"), "SEAL_RULE": str(place / "rule.yaml"),
            "TABLE": str(place / "loss.yaml")}


def _run(words: list[str], fill: dict[str, str]):
    if "seal" in words and "RULE" in words:  # a pre-registration rule, not a gate rule
        fill = {**fill, "RULE": fill["SEAL_RULE"]}
    return fluke(*[fill.get(w, w) for w in words])


@pytest.mark.parametrize(("where", "command"), NEWCOMER, ids=[c for _, c in NEWCOMER])
def test_every_printed_hint_runs_where_it_was_printed(place, monkeypatch, where, command):
    folder = place / where
    monkeypatch.chdir(folder)
    monkeypatch.delenv("FLUKE_LEDGER", raising=False)
    fill = _placeholders(place, folder)
    printed = _run(shlex.split(command), fill)
    found = hints(printed.output)
    assert found, f"fluke {command} printed no hint:\n{printed.output}"
    for hint in found:
        result = _run(shlex.split(hint), _placeholders(place, folder))
        assert result.exit_code in (0, 1), f"`fluke {hint}` (printed by `fluke {command}`) failed:\n{result.output}"
        assert "error:" not in result.output, f"`fluke {hint}` (printed by `fluke {command}`):\n{result.output}"
