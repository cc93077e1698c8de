"""A headless Chromium for the report tests, driven over the DevTools pipe.

Skips with the reason when Chromium is absent, except under CI (``CI`` set), where a skip
would hide an untested report, so it fails instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ._cdp import Browser, chromium_path

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "report"


@pytest.fixture(scope="module")
def chromium():
    binary = chromium_path()
    if binary is None:
        message = "Chromium not found on PATH (apt-get install chromium); the browser tests need it"
        if os.environ.get("CI"):
            pytest.fail(message + " and CI must not skip them", pytrace=False)
        pytest.skip(message)
    browser = Browser(binary, width=1280, height=900)
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots go (gitignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
