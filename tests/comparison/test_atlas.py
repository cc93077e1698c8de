"""Issue 35 (8): the atlas's small grid, run in the suite (bench/atlas.py runs the full one)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ATLAS = Path(__file__).resolve().parents[2] / "bench" / "atlas.py"


def _atlas():
    spec = importlib.util.spec_from_file_location("fluke_bench_atlas", ATLAS)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("index", range(3))
def test_small_grid_power_at_the_printed_limit_and_interval_coverage(index):
    atlas = _atlas()
    cell = atlas.atlas_cell(atlas.SMALL[index], reps=800, limits=60, coverage_reps=150, seed=index)
    assert cell.refused == 0.0
    assert abs(cell.power - 0.8) <= 0.04 + cell.power_mc, atlas.markdown([cell])
    assert cell.coverage >= 0.93 - cell.coverage_mc, atlas.markdown([cell])

