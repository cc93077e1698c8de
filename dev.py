#!/usr/bin/env python3
"""Set-up and the everyday commands, on nothing but Python 3.11+.

    python3 dev.py demo            # make .venv, install fluke, run the main job on the embedded default
    python3 dev.py test            # make .venv, install fluke and its test extras (locked versions), run every test
    python3 dev.py test --latest   # the same suite in .venv-latest, on the newest releases of every dependency
    python3 dev.py lint            # ruff, with the rules in pyproject.toml
    python3 dev.py lock            # resolve the newest releases again and rewrite requirements-lock.txt

Anything after the verb (and after ``--latest``) is passed on, to ``fluke demo`` or to pytest.
``FLUKE_TEST_EXTRAS`` names the extras the tests install (default ``test``; CI adds ``ray``);
``FLUKE_TEST_LATEST=1`` is the same as ``--latest``.

``requirements-lock.txt`` pins every package the extras ``test`` and ``ray`` need, as pip's
resolver chose them for CPython 3.11 on Linux x86-64; ``demo`` and ``test`` install through it
as a constraints file, so two machines run the same versions. ``test --latest`` asks pip which
versions the newest resolution would install: when they are the locked ones there is nothing
new to try and it says so; otherwise it installs them into ``.venv-latest``, runs the suite, and
when a test fails it lists each package whose newest release differs from the lock.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
LOCK = ROOT / "requirements-lock.txt"
LOCKED_EXTRAS = "test,ray"
TEST_ARGS = ["-n", "auto", "--doctest-modules", "--doctest-glob=*.md", "src/fluke", "tests", "docs"]


def _venv(latest: bool) -> Path:
    default = ROOT / (".venv-latest" if latest else ".venv")
    return Path(os.environ.get("FLUKE_VENV_LATEST" if latest else "FLUKE_VENV", default))


def _bin(env: Path) -> Path:
    return env / ("Scripts" if os.name == "nt" else "bin")


def _pip(env: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(_bin(env) / "python"), "-m", "pip", *args], check=True, **kw)


def _created(env: Path) -> Path:
    """``env``, made first (with pip) where it does not exist yet."""
    if not (_bin(env) / "python").exists():
        print(f"dev.py: creating {env}", flush=True)
        venv.EnvBuilder(with_pip=True).create(env)
    return env


def _ensure(extra: str, *, latest: bool = False) -> Path:
    """The virtualenv with fluke (editable) and ``extra`` installed: locked, or the newest releases."""
    if sys.version_info < (3, 11):
        sys.exit(f"fluke needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    env = _created(_venv(latest))
    inputs = (ROOT / "pyproject.toml").read_bytes() + (b"" if latest else LOCK.read_bytes())
    digest = hashlib.sha256(inputs + extra.encode()).hexdigest()[:16]
    stamp = env / f".installed-{(extra or 'base').replace(',', '-')}"
    if stamp.exists() and stamp.read_text() == digest and not latest:
        return env
    target = f"{ROOT}[{extra}]" if extra else str(ROOT)
    how = "the newest releases" if latest else f"the versions in {LOCK.name}"
    print(f"dev.py: installing fluke{'[' + extra + ']' if extra else ''} into {env} ({how})", flush=True)
    _pip(env, "install", "--quiet", "--upgrade", "pip")
    if latest:
        _pip(env, "install", "--quiet", "--upgrade", "--upgrade-strategy", "eager", "-e", target)
    else:
        _pip(env, "install", "--quiet", "-c", str(LOCK), "-e", target)
    stamp.write_text(digest)
    return env


def read_lock(text: str) -> dict[str, str]:
    """``name==version`` lines of a lock as {normalised name: version}.

    >>> read_lock("# a comment\\nNumPy==2.4.6\\nray_cpp==2.60.0\\n")
    {'numpy': '2.4.6', 'ray-cpp': '2.60.0'}
    """
    out = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            out[_normal(name)] = version.strip()
    return out


def _normal(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(".", "-")


def _resolver() -> Path:
    """A virtualenv whose pip is current (an old pip fetches whole wheels where a new one reads their metadata)."""
    env = _venv(latest=False)
    if not (_bin(env) / "python").exists():
        _pip(_created(env), "install", "--quiet", "--upgrade", "pip")
    return env


def newest() -> dict[str, str]:
    """What pip would install today for fluke[test,ray] on a clean machine: {name: version}, fluke left out."""
    env = _resolver()
    print(f"dev.py: asking pip for the newest releases fluke[{LOCKED_EXTRAS}] would install", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        _pip(env, "install", "--quiet", "--dry-run", "--ignore-installed", "--report", str(report),
             f"{ROOT}[{LOCKED_EXTRAS}]")
        items = json.loads(report.read_text())["install"]
    found = {_normal(i["metadata"]["name"]): i["metadata"]["version"] for i in items}
    found.pop("fluke", None)
    return dict(sorted(found.items()))


def differences(locked: dict[str, str], new: dict[str, str]) -> list[str]:
    """One line per package whose newest version is not the locked one.

    >>> differences({"numpy": "2.3.0", "rich": "14.0"}, {"numpy": "2.4.6", "rich": "14.0", "six": "1.17"})
    ['numpy 2.3.0 -> 2.4.6', 'six (not locked) -> 1.17']
    """
    names = sorted(set(locked) | set(new))
    return [f"{n} {locked.get(n, '(not locked)')} -> {new.get(n, '(no longer needed)')}"
            for n in names if locked.get(n) != new.get(n)]


def lock() -> int:
    found = newest()
    header = [f"# Every package fluke[{LOCKED_EXTRAS}] needs, as pip resolved them for CPython 3.11 on Linux x86-64.",
              "# Written by `python3 dev.py lock`; `dev.py demo` and `dev.py test` install through it (pip -c).",
              "# `python3 dev.py test --latest` runs the suite on the newest releases instead."]
    LOCK.write_text("\n".join(header + [f"{n}=={v}" for n, v in found.items()]) + "\n")
    print(f"dev.py: {LOCK.name}: {len(found)} packages", flush=True)
    return 0


def test(rest: list[str], *, latest: bool) -> int:
    extras = os.environ.get("FLUKE_TEST_EXTRAS", "test")
    changed: list[str] = []
    if latest:
        changed = differences(read_lock(LOCK.read_text()), newest())
        if not changed:
            print(f"dev.py: the newest releases are the versions in {LOCK.name}; the locked run covers them",
                  flush=True)
            return 0
        count = f"{len(changed)} package" + ("" if len(changed) == 1 else "s")
        print(f"dev.py: the newest releases differ from {LOCK.name} in {count}:", flush=True)
        for line in changed:
            print(f"  {line}", flush=True)
    env = _ensure(extras, latest=latest)
    code = subprocess.call([str(_bin(env) / "python"), "-m", "pytest", *(rest or TEST_ARGS)], cwd=ROOT)
    if code not in (0, 5) and latest:
        print(f"dev.py: the suite fails on the newest releases; where `dev.py test` passes on the lock, the cause is "
              f"among the packages that moved: {'; '.join(changed)}", flush=True)
    return code


def main(argv: list[str]) -> int:
    verb, rest = (argv[0], argv[1:]) if argv else ("help", [])
    if verb == "demo":
        env = _ensure("")
        return subprocess.call([str(_bin(env) / "fluke"), "demo", *rest])
    if verb == "test":
        latest = os.environ.get("FLUKE_TEST_LATEST") == "1"
        if rest[:1] == ["--latest"]:
            latest, rest = True, rest[1:]
        return test(rest, latest=latest)
    if verb == "lint":
        env = _ensure(os.environ.get("FLUKE_TEST_EXTRAS", "test"))
        return subprocess.call([str(_bin(env) / "ruff"), "check", *(rest or ["src", "tests", "bench", "dev.py"])],
                               cwd=ROOT)
    if verb == "lock":
        return lock()
    print(__doc__)
    return 0 if verb in ("help", "-h", "--help") else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
