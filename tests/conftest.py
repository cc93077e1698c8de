"""Shared fixtures: paths to the shared data, and a ledger on every backend.

PostgreSQL: when ``FLUKE_TEST_POSTGRES_URL`` is set (``.ci/run`` sets it), the tests use that
server; otherwise they start a throwaway server of their own when the binaries exist. Where
neither works the PostgreSQL tests skip with the reason, except under CI (``CI`` set), where
a skip would hide a backend nobody tested, so they fail instead.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest

try:  # CI reruns the same examples every time (a failure there is reproducible); locally they vary
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("ci", derandomize=True, database=None, deadline=None)
    if os.environ.get("CI"):
        _hypothesis_settings.load_profile("ci")
except ImportError:  # pragma: no cover - hypothesis is a test extra
    pass

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
DATA = SHARED / "data"
FORMATS = SHARED / "formats"
TAU_AIRLINE = DATA / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json"
TAU2_RESULTS = DATA / "tau2-bench" / "src" / "experiments" / "model_training" / "results"


def need(path: Path) -> Path:
    """Skip the test with a clear message when a shared file is absent."""
    if not path.exists():
        pytest.skip(f"shared data not found at {path} (the tests read ../shared from the repository root)")
    return path


def _unavailable(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"PostgreSQL tests would skip under CI: {reason}", pytrace=False)
    pytest.skip(f"PostgreSQL not available: {reason} (install postgresql, or set FLUKE_TEST_POSTGRES_URL)")


@pytest.fixture(scope="session")
def postgres_server_url():
    """A URL of a PostgreSQL server where the tests may create databases."""
    url = os.environ.get("FLUKE_TEST_POSTGRES_URL")
    if url:
        yield url
        return
    from fluke.testing import ThrowawayPostgres, postgres_binaries

    if postgres_binaries() is None:
        _unavailable("no initdb found on PATH or under /usr/lib/postgresql")
    try:
        server = ThrowawayPostgres()
    except (subprocess.SubprocessError, OSError, LookupError) as exc:
        _unavailable(f"could not start a throwaway server ({exc})")
    yield server.url
    server.stop()


@pytest.fixture
def postgres_url(postgres_server_url):
    """A fresh, empty database on the test server, dropped afterwards."""
    psycopg = pytest.importorskip("psycopg")
    name = "fluke_test_" + uuid.uuid4().hex[:12]
    with psycopg.connect(postgres_server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    base, _, _ = postgres_server_url.rpartition("/")
    yield f"{base}/{name}"
    with psycopg.connect(postgres_server_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def ledger_url(request, tmp_path):
    """The URL of an empty ledger, once for SQLite (a real file) and once for PostgreSQL."""
    if request.param == "sqlite":
        return str(tmp_path / "fluke.db")
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def ledger(ledger_url):
    """An open, empty ledger on each backend."""
    from fluke.ledger import open_ledger

    with open_ledger(ledger_url) as opened:
        yield opened
