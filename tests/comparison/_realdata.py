"""The shared τ-bench / τ²-bench files, read through fluke's adapters, for tests."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from fluke.adapters import read_file
from fluke.record import Run

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
TAU2_RESULTS = DATA / "tau2-bench" / "src" / "experiments" / "model_training" / "results"
TAU1_AIRLINE = DATA / "tau-bench" / "historical_trajectories" / "gpt-4o-airline.json"
FINE_TUNED = "ft:gpt-4.1-2025-04-14:sierra:tau2-full-sft:BzrYdMNm"
TAU2_FILES = {
    ("gpt-4.1", "airline"): "gpt-4.1_airline_default_gpt-4.1_1trials.json",
    ("gpt-4.1", "retail"): "gpt-4.1_retail_defautl_gpt-4.1_1trials.json",
    ("gpt-4.1", "telecom"): "gpt-4.1_telecom_default_gpt-4.1_1trials.json",
    (FINE_TUNED, "airline"): f"{FINE_TUNED}_airline_default_gpt-4.1_1trials.json",
    (FINE_TUNED, "retail"): f"{FINE_TUNED}_retail_default_gpt-4.1_1trials.json",
    (FINE_TUNED, "telecom"): f"{FINE_TUNED}_telecom_default_gpt-4.1_1trials.json",
}


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"real data not found at {path} (the shared data folder is absent)")
    return path


@functools.cache
def tau2_runs(model: str, domain: str) -> tuple[Run, ...]:
    """The τ²-bench runs of ``model`` on ``domain`` as fluke runs (scenario = domain/task)."""
    return tuple(read_file(need(TAU2_RESULTS / TAU2_FILES[(model, domain)])))


@functools.cache
def tau1_airline_runs() -> tuple[Run, ...]:
    """τ-bench gpt-4o airline: 50 tasks × 4 trials."""
    return tuple(read_file(need(TAU1_AIRLINE), identity={"model": "gpt-4o"}))
