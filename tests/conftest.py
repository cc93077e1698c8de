"""Shared fixtures: paths to the shared data, and a ledger on every backend.

PostgreSQL: when ``FLUKE_TEST_POSTGRES_URL`` is set (``.ci/run`` sets it), the tests use that
server; otherwise they start a throwaway server of their own when the binaries exist. Where
neither works the PostgreSQL tests skip with the reason, except under CI (``CI`` set), where
a skip would hide a backend nobody tested, so they fail instead.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest

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


def _pg_bin() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return candidates[-1].parent if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Server:
    """A throwaway PostgreSQL cluster on 127.0.0.1, removed at the end of the session."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.dir = Path(tempfile.mkdtemp(prefix="fluke-pg-"))
        self.port = _free_port()
        self.prefix: list[str] = []
        if os.geteuid() == 0:  # initdb refuses to run as root
            user = "postgres"
            shutil.chown(self.dir, user)
            self.prefix = ["runuser", "-u", user, "--"]
        self.data = self.dir / "data"
        self._run([str(bindir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "fluke", "--no-sync"])
        self._run([str(bindir / "pg_ctl"), "-D", str(self.data), "-w", "-l", str(self.dir / "log"),
                   "-o", f"-h 127.0.0.1 -p {self.port} -k {self.dir} -F", "start"])
        self.url = f"postgresql://fluke@127.0.0.1:{self.port}/postgres"

    def _run(self, cmd: list[str]) -> None:
        subprocess.run(self.prefix + cmd, check=True, capture_output=True, timeout=120)

    def stop(self) -> None:
        try:
            self._run([str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"])
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


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
    bindir = _pg_bin()
    if bindir is None:
        _unavailable("no initdb found on PATH or under /usr/lib/postgresql")
    try:
        server = _Server(bindir)
    except (subprocess.SubprocessError, OSError, LookupError) as exc:
        _unavailable(f"could not start a throwaway server ({exc})")
    for _ in range(50):
        try:
            socket.create_connection(("127.0.0.1", server.port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
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
