"""Names a package exports from its modules, each module imported when one of its names is first asked for.

A package's ``__init__`` names its exports by home module and takes its ``__getattr__`` and ``__dir__``
from :func:`lazy_exports`, so ``import fluke.comparison`` costs nothing until a name is used:

>>> import types
>>> pkg = types.ModuleType("pkg")
>>> getattr_, dir_ = lazy_exports("json", {"json": ("dumps",)}, vars(pkg))
>>> getattr_("dumps")({"a": 1}), "dumps" in vars(pkg), "dumps" in dir_()
('{"a": 1}', True, True)
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping, MutableMapping


def lazy_exports(package: str, homes: Mapping[str, tuple[str, ...]], namespace: MutableMapping[str, Any]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose names live in ``homes`` (module, relative to
    ``package`` or absolute, -> its names); a name asked for once becomes a plain attribute in
    ``namespace`` (the package's globals)."""
    home_of = {name: module for module, names in homes.items() for name in names}

    def __getattr__(name: str) -> Any:
        home = home_of.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home, package), name)
        namespace[name] = value       # asked once: later look-ups are plain module attributes
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(home_of))

    return __getattr__, __dir__
