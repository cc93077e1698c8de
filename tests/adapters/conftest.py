"""Shared fixtures for the chat-format adapter tests."""

from __future__ import annotations

from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / ".." / "shared" / "formats" / "samples"


@pytest.fixture
def samples() -> Path:
    """The real framework outputs in ../shared/formats/samples (skip when absent)."""
    if not SAMPLES.is_dir():
        pytest.skip(f"framework samples not found at {SAMPLES}")
    return SAMPLES


#: Inputs each reader's fuzz test ran this session (tests/adapters/test_fuzz.py), printed at the end.
FUZZ_COUNTS: dict[str, int] = {}


def pytest_terminal_summary(terminalreporter):
    if FUZZ_COUNTS:
        terminalreporter.write_line("reader fuzz, inputs this run: " + ", ".join(
            f"{name} {count:,}" for name, count in FUZZ_COUNTS.items()))
