#!/usr/bin/env python3
"""Set-up and the two everyday commands, on nothing but Python 3.11+.

    python3 dev.py demo    # make .venv, install fluke, run the main job on the embedded default
    python3 dev.py test    # make .venv, install fluke with its test extras, run the whole test suite

Anything after the verb is passed on (to ``fluke demo`` or to pytest). ``FLUKE_TEST_EXTRAS``
names the extras the tests install (default ``test``; CI adds ``ray``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("FLUKE_VENV", ROOT / ".venv"))
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")


def _ensure(extra: str) -> None:
    if sys.version_info < (3, 11):
        sys.exit(f"fluke needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    if not (BIN / "python").exists():
        print(f"dev.py: creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    stamp = VENV / f".installed-{(extra or 'base').replace(',', '-')}"
    pyproject = ROOT / "pyproject.toml"
    if stamp.exists() and stamp.stat().st_mtime >= pyproject.stat().st_mtime:
        return
    target = f"{ROOT}[{extra}]" if extra else str(ROOT)
    print(f"dev.py: installing fluke{'[' + extra + ']' if extra else ''} into {VENV}", flush=True)
    subprocess.run([str(BIN / "python"), "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True)
    subprocess.run([str(BIN / "python"), "-m", "pip", "install", "--quiet", "-e", target], check=True)
    stamp.touch()


def main(argv: list[str]) -> int:
    verb, rest = (argv[0], argv[1:]) if argv else ("help", [])
    if verb == "demo":
        _ensure("")
        return subprocess.call([str(BIN / "fluke"), "demo", *rest])
    if verb == "test":
        _ensure(os.environ.get("FLUKE_TEST_EXTRAS", "test"))
        args = rest or ["--doctest-modules", "--doctest-glob=*.md", "src/fluke", "tests", "docs"]
        return subprocess.call([str(BIN / "python"), "-m", "pytest", *args], cwd=ROOT)
    print(__doc__)
    return 0 if verb in ("help", "-h", "--help") else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
