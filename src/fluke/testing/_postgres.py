"""A throwaway PostgreSQL cluster on 127.0.0.1, for tests and benchmarks."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def postgres_binaries() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl`` (PATH first, then Debian's layout), or None."""
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"),
                        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0)
    return candidates[-1].parent if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ThrowawayPostgres:
    """Start a fresh cluster in a temporary folder; ``stop()`` removes it.

    As root it runs the server as the ``postgres`` user, since initdb refuses root.
    ``url`` names the ``postgres`` database as superuser ``fluke`` with trust auth.
    """

    def __init__(self, bindir: Path | None = None) -> None:
        bindir = bindir or postgres_binaries()
        if bindir is None:
            raise FileNotFoundError("no initdb found on PATH or under /usr/lib/postgresql")
        self.bindir = bindir
        self.dir = Path(tempfile.mkdtemp(prefix="fluke-pg-"))
        self.port = _free_port()
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres")
            self.prefix = ["runuser", "-u", "postgres", "--"]
        self.data = self.dir / "data"
        self._run([str(bindir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "fluke", "--no-sync"])
        self._run([str(bindir / "pg_ctl"), "-D", str(self.data), "-w", "-l", str(self.dir / "log"),
                   "-o", f"-h 127.0.0.1 -p {self.port} -k {self.dir} -F", "start"])
        self.url = f"postgresql://fluke@127.0.0.1:{self.port}/postgres"
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)

    def _run(self, cmd: list[str]) -> None:
        subprocess.run(self.prefix + cmd, check=True, capture_output=True, timeout=120)

    def stop(self) -> None:
        """Stop the server and delete its folder."""
        try:
            self._run([str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"])
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "ThrowawayPostgres":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
