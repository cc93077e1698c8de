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
