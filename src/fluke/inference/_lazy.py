"""``scipy.stats``, imported on first use: importing it costs seconds on a loaded machine,
and the verbs that answer from counts mostly need only ``scipy.special``.

>>> from fluke.inference import lazy_stats
>>> round(float(lazy_stats.norm.ppf(0.975)), 4)
1.96
"""

from __future__ import annotations

import importlib

__all__ = ["lazy_stats"]


class _LazyStats:
    """Stands for the ``scipy.stats`` module; the import happens at the first attribute read."""

    def __getattr__(self, name):
        return getattr(importlib.import_module("scipy.stats"), name)

    def __repr__(self) -> str:
        return "<scipy.stats, imported on first use>"


lazy_stats = _LazyStats()
