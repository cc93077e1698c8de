"""Load a suite file: a Python file that defines ``cases`` and ``agent``.

Optional names: ``identity`` (a dict naming the agent's version: model, harness, ...),
``spec`` (a grading spec dict, or a path relative to the suite file), ``k`` (runs per
case), ``seed`` and ``tools`` (a :class:`fluke.tools.Tools` the agent calls through fluke). Command-line
options win over the file's values.

>>> import tempfile, os, textwrap
>>> path = os.path.join(tempfile.mkdtemp(), "suite.py")
>>> _ = open(path, "w").write(textwrap.dedent('''
...     cases = [{"scenario": "echo", "input": "hi", "check": lambda out: out == "hi"}]
...     def agent(text):
...         return [], text
...     identity = {"model": "echo-1"}
... '''))
>>> suite = load_suite(path)
>>> [c.scenario for c in suite.cases], suite.identity
(['echo'], {'model': 'echo-1'})
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..errors import InputError
from ._types import Case, as_case


@dataclass(frozen=True)
class Suite:
    """The contents of a suite file."""

    cases: list[Case]
    agent: Callable[..., Any]
    identity: dict[str, Any] = field(default_factory=dict)
    spec: Any = None
    k: int | None = None
    seed: int | None = None
    tools: Any = None


def load_suite(path: str | Path) -> Suite:
    """Import the suite file at ``path`` and check what it defines."""
    path = Path(path)
    if not path.is_file():
        raise InputError(str(path), None, None, "does not exist", hint="give the path of a .py suite file")
    name = f"fluke_suite_{abs(hash(str(path.resolve())))}"
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise InputError(str(path), None, None, "cannot be imported as Python", hint="use a .py file")
    module = importlib.util.module_from_spec(module_spec)
    sys.path.insert(0, str(path.parent.resolve()))  # let the suite import its neighbours
    try:
        module_spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise InputError(str(path), f"line {exc.lineno}", None, f"is not valid Python ({exc.msg})") from None
    except Exception as exc:
        raise InputError(str(path), None, None,
                         f"raised {type(exc).__name__} while loading: {exc}") from exc
    finally:
        sys.path.remove(str(path.parent.resolve()))
    for required in ("cases", "agent"):
        if not hasattr(module, required):
            raise InputError(str(path), None, required, "is not defined",
                             hint="a suite file defines `cases` (a list) and `agent` (a callable)")
    agent = module.agent
    if not callable(agent):
        raise InputError(str(path), None, "agent", f"is a {type(agent).__name__}, not callable")
    raw = module.cases() if callable(module.cases) else module.cases
    cases = [as_case(c, position=i, file=str(path)) for i, c in enumerate(raw)]
    identity = getattr(module, "identity", None) or {}
    if not isinstance(identity, dict):
        raise InputError(str(path), None, "identity", "is not a dict", hint="identity = {'model': ...}")
    spec = getattr(module, "spec", None)
    if isinstance(spec, (str, Path)) and not Path(spec).is_absolute():
        spec = path.parent / spec  # a spec path in a suite file is relative to that file
    return Suite(cases=cases, agent=agent, identity=identity, spec=spec,
                 k=getattr(module, "k", None), seed=getattr(module, "seed", None),
                 tools=getattr(module, "tools", None))
