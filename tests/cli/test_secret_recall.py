"""Recall of the redactor on real credential shapes, in every place a run carries them, on every surface.

Each shape of ``tests/record/secret_corpus.py`` is planted in one run per placement (tool arguments,
tool results, messages, metadata, the scenario name, an identity value), each time with fresh random
characters and beside a harmless tag that says whether the surface showed that field at all. One
ledger holds them all; each surface is read once, and a secret is leaked where its random body is
printed. The table in docs/run-record.md#secrets is this test's :func:`recall` (run this module as a
script to print it).
"""

from __future__ import annotations

import json
import random

import pytest
from click.testing import CliRunner

from fluke.cli import group
from fluke.ledger import open_ledger
from fluke.record import AgentMessage, Identity, Outcome, Run, ToolCall, UserMessage

from ..record.secret_corpus import TEMPLATES, fill

PLACEMENTS = ["tool args", "tool results", "messages", "metadata", "scenario name", "identity value"]
SURFACES = ["text", "JSON", "Markdown", "HTML", "grade --jsonl"]
SPEC = "tools: [lookup]\n"


def _tag(i: int, p: int) -> str:
    return f"zq{i}x{p}qz"


def _plant(i: int, p: int, text: str) -> Run:
    tagged = f"{_tag(i, p)} {text}"
    events = [UserMessage(text="look it up")]
    scenario, identity, condition, tags = f"s{i}-{p}", Identity(model="m"), {}, []
    if p == 0:
        events.append(ToolCall(tool="lookup", args={"q": tagged, "opts": [{"v": text}]}, ok=True, result="ok"))
    elif p == 1:
        events.append(ToolCall(tool="lookup", args={"q": "x"}, ok=False, result={"body": tagged}, error=tagged))
    elif p == 2:
        events += [UserMessage(text=tagged), AgentMessage(text=f"here: {tagged}")]
    elif p == 3:
        condition, tags = {"note": tagged}, [f"env:{tagged}"]
    elif p == 4:
        scenario = f"s{i}-{p} {tagged}"
    else:
        identity = Identity(model="m", harness=tagged)
    return Run(scenario=scenario, identity=identity, condition=condition, tags=tags, events=events,
               outcome=Outcome(passed=(i + p) % 2 == 0), error=tagged if p == 1 else None)


def _planted() -> tuple[list[Run], dict[tuple[int, int], str]]:
    rng = random.Random(2028)
    runs, secrets = [], {}
    for i, (_, template) in enumerate(TEMPLATES):
        for p in range(len(PLACEMENTS)):
            text, secret = fill(template, rng)
            secrets[(i, p)] = secret
            runs.append(_plant(i, p, text))
    return runs, secrets


def _surfaces(folder, path: str) -> dict[str, str]:
    spec = str(folder / "spec.yaml")
    out: dict[str, list[str]] = {s: [] for s in SURFACES}
    for surface, fmt in (("text", "text"), ("JSON", "json"), ("Markdown", "markdown")):
        for args in (["runs"], ["summary"], ["grade", "--spec", spec, "--violations", "--no-store"]):
            result = CliRunner().invoke(group, ["--ledger", path, "--all", "--format", fmt, *args])
            assert result.exit_code in (0, 1), (surface, args, result.output)
            out[surface].append(result.stdout + result.stderr)
    result = CliRunner().invoke(group, ["--ledger", path, "report", "--out", str(folder / "r.html"), "--spec", spec])
    assert result.exit_code == 0, result.output
    out["HTML"].append((folder / "r.html").read_text(encoding="utf-8"))
    result = CliRunner().invoke(group, ["--ledger", path, "grade", "--spec", spec, "--jsonl", "--no-store"])
    assert result.exit_code in (0, 1), result.output
    out["grade --jsonl"].append(result.stdout + result.stderr)
    return {s: "\n".join(texts) for s, texts in out.items()}


def recall(folder) -> dict:
    """{(shape index, placement, surface): "hidden" | "leaked" | "not shown"} and the corpus."""
    runs, secrets = _planted()
    path = str(folder / "l.db")
    with open_ledger(path) as ledger:
        ledger.ingest(runs)
    (folder / "spec.yaml").write_text(SPEC, encoding="utf-8")
    outputs = _surfaces(folder, path)
    cells = {}
    for (i, p), secret in secrets.items():
        for surface, text in outputs.items():
            cells[(i, p, surface)] = ("leaked" if secret in text else
                                      "hidden" if _tag(i, p) in text else "not shown")
    return cells


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    return recall(tmp_path_factory.mktemp("recall"))


def test_the_corpus_has_a_hundred_real_shapes_planted_everywhere(cells):
    assert len(TEMPLATES) >= 100 and len({name for name, _ in TEMPLATES}) == len(TEMPLATES)
    assert len(cells) == len(TEMPLATES) * len(PLACEMENTS) * len(SURFACES)
    shown = {(p, s) for (_, p, s), v in cells.items() if v != "not shown"}
    # every surface shows some placement, JSON shows all of them, the HTML report all but identity values
    assert {s for _, s in shown} == set(SURFACES)
    assert all((p, "JSON") in shown for p in range(len(PLACEMENTS)))
    assert all((p, "HTML") in shown for p in range(len(PLACEMENTS) - 1))


@pytest.mark.parametrize("surface", SURFACES)
def test_no_shape_leaks_from_any_placement(cells, surface):
    leaked = sorted((TEMPLATES[i][0], PLACEMENTS[p]) for (i, p, s), v in cells.items()
                    if s == surface and v == "leaked")
    shown = [k for k, v in cells.items() if k[2] == surface and v != "not shown"]
    assert shown, surface
    shapes_leaked = {name for name, _ in leaked}
    assert len(shapes_leaked) <= 0.01 * len(TEMPLATES), f"{surface}: {leaked}"
    assert leaked == [], f"{surface}: {leaked}"


def test_what_gitleaks_alone_misses_is_what_fluke_adds():
    """Each of fluke's own prefix shapes (in fluke._redact) is there because the vendored gitleaks
    rules miss it: when gitleaks learns one, this fails and fluke's copy should go."""
    from fluke import _gitleaks
    from fluke._redact import _PATTERNS

    own = [name for name, *_ in _PATTERNS]
    added = own[own.index("google-oauth-secret"):]
    rng = random.Random(7)
    by_name = dict(TEMPLATES)
    corpus_of = {"google-oauth-secret": "Google OAuth client secret", "telegram-bot-token": "Telegram bot token",
                 "azure-sas-signature": "Azure SAS token", "square-oauth-secret": "Square OAuth secret",
                 "new-relic-key": "New Relic user key", "yandex-oauth-token": "Yandex OAuth token",
                 "docker-hub-pat": "Docker Hub PAT", "groq-key": "Groq key", "replicate-token": "Replicate token",
                 "supabase-token": "Supabase token", "tailscale-key": "Tailscale key",
                 "langsmith-key": "LangSmith key", "pinecone-key": "Pinecone key"}
    assert sorted(corpus_of) == sorted(added)
    for name in added:
        text, secret = fill(by_name[corpus_of[name]], rng)
        assert not any(text[a:b] == secret or secret in text[a:b] for a, b, _ in _gitleaks.find(text)), name


if __name__ == "__main__":   # print the table for docs/run-record.md
    import tempfile
    from pathlib import Path

    table = recall(Path(tempfile.mkdtemp()))
    print("| placement | " + " | ".join(SURFACES) + " |")
    print("|---|" + "---|" * len(SURFACES))
    for p, place in enumerate(PLACEMENTS):
        row = []
        for s in SURFACES:
            vals = [table[(i, p, s)] for i in range(len(TEMPLATES))]
            shown = sum(v != "not shown" for v in vals)
            hidden = sum(v == "hidden" for v in vals)
            row.append(f"{hidden}/{shown}" if shown else "not shown")
        print(f"| {place} | " + " | ".join(row) + " |")
    print(json.dumps({"shapes": len(TEMPLATES)}))
