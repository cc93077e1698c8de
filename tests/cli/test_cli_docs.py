"""Every verb is documented: a --help with a runnable example, and a place in docs/cli.md."""

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from fluke.cli import VERBS, _load, group

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
BUILT = [verb for verb in VERBS if _load(verb) is not None]


def test_the_foundation_verbs_are_built():
    assert {"ingest", "runs", "export", "summary", "schema", "demo"} <= set(BUILT)


@pytest.mark.parametrize("verb", BUILT)
def test_every_verb_has_help_with_an_example_and_a_docs_entry(verb):
    result = CliRunner().invoke(group, [verb, "--help"])
    assert result.exit_code == 0, result.output
    assert "Example" in result.output, f"fluke {verb} --help shows no example"
    assert re.search(rf"fluke (\[[^\]]*\] )*{verb}\b", DOCS.read_text()), f"docs/cli.md does not document {verb}"


def test_unknown_verb_is_a_usage_error():
    result = CliRunner().invoke(group, ["ingets"])
    assert result.exit_code == 2 and "no verb 'ingets'; did you mean 'ingest'?" in result.output
