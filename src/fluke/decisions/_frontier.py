"""The cost–quality frontier: the versions no other version beats on both pass rate and cost per success.

A version is *dominated* when another has a pass rate at least as high and a cost per success at
most as high, one of them strictly. The frontier is every version not dominated: the choices a
team trading quality against spend could rationally make. It is read off point estimates; the
intervals beside them say how firm each position is. A version whose cost per success is
undefined (no pass, no recorded cost) is left off.

>>> frontier({"a": (80.0, 0.10), "b": (70.0, 0.05), "c": (65.0, 0.08), "d": (80.0, 0.12)})
['b', 'a']
"""

from __future__ import annotations

import math
from typing import Mapping


def frontier(points: Mapping[str, tuple[float, float]]) -> list[str]:
    """The labels on the frontier of ``{label: (pass rate, cost per success)}``, cheapest first."""
    ok = {k: v for k, v in points.items() if all(math.isfinite(x) for x in v)}
    out = []
    for name, (rate, cost) in ok.items():
        beaten = any(r >= rate and c <= cost and (r > rate or c < cost) for other, (r, c) in ok.items()
                     if other != name)
        if not beaten:
            out.append(name)
    return sorted(out, key=lambda k: (ok[k][1], -ok[k][0], k))
