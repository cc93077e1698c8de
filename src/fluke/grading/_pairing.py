"""Pairing expected calls with made calls: optimal, not first fit.

Both functions take the compatibility edges (which expected call a made call could satisfy)
and return the pairs of a largest matching.

* :func:`pair_unordered`: one assignment problem per tool (``scipy.optimize.linear_sum_assignment``
  on a 0/1 cost matrix; a minimum-cost assignment there is a maximum matching). A tool called
  once, or expected once, needs no solver, nor does one where first fit already pairs every
  expected call that has a candidate (no matching can be larger).
* :func:`pair_ordered`: the largest matching that keeps the reference's order across turns.
  Expected calls come in groups (a group is one expected turn, unordered inside), made calls
  in turns (parallel calls of one assistant message, unordered inside). A matching keeps the
  order when no expected pair ``e`` before ``e'`` (in different groups) is made the other way
  round: ``turn(e) <= turn(e')``. Calls made in one turn may satisfy any expected order, and
  one expected group may be spread over several turns. Dynamic programming over
  (group, turn, calls of the group used, calls of the turn used): time ``G * T * 2**(g + t)``
  for G groups of at most g calls and T turns of at most t calls, and T counts only the turns
  that hold a call some expected call could take (about the reference's length, not the run's).

>>> edges = {0: [0, 1], 1: [0]}           # expected 0 fits made 0 or 1; expected 1 only made 0
>>> sorted(pair_unordered(edges, {0: "a", 1: "a"}))      # first fit would miss one
[(0, 1), (1, 0)]
>>> pair_ordered([[0], [1]], [[0], [1]], {0: [1], 1: [0]})   # crossing: only one pair keeps order
[(0, 1)]
>>> sorted(pair_ordered([[0, 1]], [[0], [1]], {0: [1], 1: [0]}))   # one expected turn over two made
[(0, 1), (1, 0)]
"""

from __future__ import annotations

from typing import Hashable

import numpy as np

#: Largest calls of one made turn taken together by the ordered pairing; a larger turn is
#: split into consecutive chunks (known limit: then its calls are ordered between chunks).
TURN_CHUNK = 6


def pair_unordered(edges: dict[int, list[int]], expected_key: dict[int, Hashable]) -> list[tuple[int, int]]:
    """A maximum matching of expected to made calls, one assignment per key (tool and
    requestor: expected calls of different keys never compete for a made call)."""
    by_key: dict[Hashable, list[int]] = {}
    for e in edges:
        if edges[e]:
            by_key.setdefault(expected_key[e], []).append(e)
    pairs: list[tuple[int, int]] = []
    for es in by_key.values():
        cols = sorted({m for e in es for m in edges[e]})
        if len(es) == 1:
            pairs.append((es[0], edges[es[0]][0]))
            continue
        if len(cols) == 1:
            pairs.append((es[0], cols[0]))
            continue
        # First fit, kept only when it pairs every expected call that has a candidate: then no
        # matching can be larger. Otherwise the assignment decides.
        taken: set[int] = set()
        quick = []
        for e in es:
            m = next((m for m in edges[e] if m not in taken), None)
            if m is None:
                break
            taken.add(m)
            quick.append((e, m))
        if len(quick) == len(es):
            pairs += quick
            continue
        from scipy.optimize import linear_sum_assignment

        at = {m: j for j, m in enumerate(cols)}
        cost = np.ones((len(es), len(cols)))
        for i, e in enumerate(es):
            for m in edges[e]:
                cost[i, at[m]] = 0.0
        rows, picked = linear_sum_assignment(cost)
        pairs += [(es[i], cols[j]) for i, j in zip(rows.tolist(), picked.tolist(), strict=True) if cost[i, j] == 0.0]
    return pairs


def _lcs(es: list[int], ms: list[int], edges: dict[int, list[int]]) -> list[tuple[int, int]]:
    """The one-call-per-turn case: a longest common subsequence under ``edges``."""
    G, T = len(es), len(ms)
    fit = [set(edges.get(e, ())) for e in es]
    table = [[0] * (T + 1) for _ in range(G + 1)]
    for g in range(G - 1, -1, -1):
        row, below, ok = table[g], table[g + 1], fit[g]
        for t in range(T - 1, -1, -1):
            best = row[t + 1] if row[t + 1] >= below[t] else below[t]
            if ms[t] in ok and below[t + 1] + 1 > best:
                best = below[t + 1] + 1
            row[t] = best
    pairs, g, t = [], 0, 0
    while g < G and t < T:
        if ms[t] in fit[g] and table[g][t] == table[g + 1][t + 1] + 1:
            pairs.append((es[g], ms[t]))
            g, t = g + 1, t + 1
        elif table[g][t] == table[g][t + 1]:
            t += 1
        else:
            g += 1
    return pairs


def pair_ordered(groups: list[list[int]], turns: list[list[int]],
                 edges: dict[int, list[int]]) -> list[tuple[int, int]]:
    """A largest order-keeping matching (see the module docstring).

    ``groups`` lists expected calls by expected turn, ``turns`` made calls by made turn (both
    in order); ``edges[e]`` the made calls expected call ``e`` could take.
    """
    takers = {m for ms in edges.values() for m in ms}
    live: list[list[int]] = []
    for turn in turns:
        kept = [m for m in turn if m in takers]
        live += [kept[i:i + TURN_CHUNK] for i in range(0, len(kept), TURN_CHUNK)]
    G, T = len(groups), len(live)
    if not G or not T:
        return []
    if all(len(g) == 1 for g in groups) and all(len(t) == 1 for t in live):
        return _lcs([g[0] for g in groups], [t[0] for t in live], edges)
    fits = [{m: set() for m in turn} for turn in live]     # made call -> expected calls it fits
    where = {m: t for t, turn in enumerate(live) for m in turn}
    for e, ms in edges.items():
        for m in ms:
            fits[where[m]][m].add(e)
    # cell[g][t]: the (bit in group g, bit in turn t) pairs that may match
    cells = [[[(1 << i, 1 << j) for i, e in enumerate(groups[g]) for j, m in enumerate(live[t])
               if e in fits[t][m]] for t in range(T)] for g in range(G)]
    value: dict[tuple[int, int, int, int], int] = {}
    choice: dict[tuple[int, int, int, int], tuple] = {}
    for g in range(G - 1, -1, -1):
        ng = 1 << len(groups[g])
        for t in range(T - 1, -1, -1):
            nt = 1 << len(live[t])
            cell = cells[g][t]
            for ug in range(ng - 1, -1, -1):
                for ut in range(nt - 1, -1, -1):
                    right = value.get((g, t + 1, ug, 0), 0) if t + 1 < T else 0
                    down = value.get((g + 1, t, 0, ut), 0) if g + 1 < G else 0
                    best, how = (right, ("r",)) if right >= down else (down, ("d",))
                    for bg, bt in cell:
                        if not ug & bg and not ut & bt:
                            v = 1 + value[(g, t, ug | bg, ut | bt)]
                            if v > best:
                                best, how = v, ("p", bg, bt)
                    value[(g, t, ug, ut)] = best
                    choice[(g, t, ug, ut)] = how
    pairs: list[tuple[int, int]] = []
    g = t = ug = ut = 0
    while g < G and t < T:
        how = choice[(g, t, ug, ut)]
        if how[0] == "r":
            t, ut = t + 1, 0
        elif how[0] == "d":
            g, ug = g + 1, 0
        else:
            _, bg, bt = how
            pairs.append((groups[g][bg.bit_length() - 1], live[t][bt.bit_length() - 1]))
            ug, ut = ug | bg, ut | bt
    return pairs
