"""The layout of a fluke Parquet dataset (a folder):

``fluke-lake.json``
    the manifest: ``{"format": "fluke-lake", "layout": 1, "runs": N, "tables": [...]}``;
``runs/version=<first 16 hex digits>/part-NNNNN.parquet``
    one row per run, partitioned by version: the columns of :data:`RUN_COLUMNS`; ``body`` is the
    stored canonical JSON (its SHA-256 is the run's hash) and ``source`` the run's source as JSON,
    so the dataset re-ingests to the same hashes; the other columns are read from the body once,
    at export, for the group-bys. A dataset made elsewhere may leave ``body`` null (outcome-only
    rows): the count verbs read it all the same, and ``fluke ingest`` refuses it;
``versions.parquet``, ``ingests.parquet``, ``documents.parquet``, ``grades.parquet``
    the ledger's tables of those names, as they are;
``counts.parquet``, ``steps.parquet``, ``unit_cells.parquet``
    the tallies of the exported runs, as the ledger keeps them, for readers other than fluke
    (fluke computes them from ``runs`` itself).

>>> [name for name, _ in RUN_COLUMNS][:6]
['k', 'vid', 'ingest', 'scenario', 'condition', 'trial']
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import InputError, require

MANIFEST = "fluke-lake.json"
LAYOUT_VERSION = 1

#: The runs table's columns and their Arrow types (by name: pyarrow is imported on use).
RUN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("k", "int64"),            # the content hash's first 64 bits, signed (the ledger's key)
    ("vid", "int64"),          # the version hash's first 60 bits
    ("ingest", "int64"),       # the ingest that stored it (orders runs as the ledger does)
    ("scenario", "string"),
    ("condition", "string"),   # fluke.record.condition_key of the run's condition
    ("trial", "int64"),
    ("unit", "string"),        # the declared unit, else the scenario
    ("passed", "bool"),        # null: unknown outcome
    ("reward", "float64"),
    ("cause", "string"),       # fluke.record.place_of: null for an unknown outcome
    ("step", "int64"),
    ("event", "string"),
    ("latency", "float64"),
    ("cost", "map<string,float64>"),
    ("body", "string"),
    ("source", "string"),
)

#: The other tables: name -> columns and Arrow types.
TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "versions": (("vid", "int64"), ("version", "string"), ("identity", "string"), ("first_recorded", "string")),
    "ingests": (("id", "int64"), ("recorded_at", "string")),
    "documents": (("kind", "string"), ("digest", "string"), ("body", "string"), ("recorded_at", "string")),
    "grades": (("spec_digest", "string"), ("run_hash", "string"), ("body", "string"), ("recorded_at", "string")),
    "counts": (("vid", "int64"), ("scenario", "string"), ("condition", "string"), ("trials", "int64"),
               ("passes", "int64"), ("unknowns", "int64")),
    "steps": (("vid", "int64"), ("scenario", "string"), ("condition", "string"), ("cause", "string"),
              ("step", "int64"), ("event", "string"), ("runs", "int64")),
    "unit_cells": (("vid", "int64"), ("unit", "string"), ("scenario", "string"), ("condition", "string"),
                   ("trials", "int64"), ("passes", "int64"), ("unknowns", "int64"), ("rewarded", "int64"),
                   ("reward_sum", "float64"), ("reward_squares", "float64")),
}


def pyarrow():
    """pyarrow, or the install hint."""
    return require("pyarrow", package="pyarrow", extra="lake", purpose="A Parquet dataset")


def _type(pa: Any, name: str) -> Any:
    if name.startswith("map<"):
        return pa.map_(pa.string(), pa.float64())
    return {"int64": pa.int64(), "string": pa.string(), "bool": pa.bool_(), "float64": pa.float64()}[name]


def schema(columns: tuple[tuple[str, str], ...]) -> Any:
    """The Arrow schema of a table's columns."""
    pa = pyarrow()
    return pa.schema([(name, _type(pa, kind)) for name, kind in columns])


def runs_arrow_schema() -> Any:
    """The Arrow schema of the runs table.

    >>> runs_arrow_schema().field("cost").type
    MapType(map<string, double>)
    """
    return schema(RUN_COLUMNS)


def is_dataset(path: str | Path) -> bool:
    """Whether ``path`` is a folder holding a fluke Parquet dataset's manifest.

    >>> import tempfile
    >>> is_dataset(tempfile.mkdtemp())
    False
    """
    return (Path(path) / MANIFEST).is_file()


class Dataset:
    """A fluke Parquet dataset on disk (what ``fluke ingest`` is given: a folder)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.manifest = json.loads((self.path / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(str(self.path / MANIFEST), None, None, f"cannot be read as a fluke-lake manifest ({exc})",
                             hint="write the dataset again with: fluke export --format parquet -o DIR") from None
        if not isinstance(self.manifest, dict) or self.manifest.get("format") != "fluke-lake":
            raise InputError(str(self.path / MANIFEST), None, "format", "is not 'fluke-lake'",
                             hint="write the dataset with: fluke export --format parquet -o DIR")
        layout = self.manifest.get("layout")
        if not isinstance(layout, int) or layout > LAYOUT_VERSION:
            raise InputError(str(self.path / MANIFEST), None, "layout",
                             f"layout {layout!r} is newer than this fluke reads ({LAYOUT_VERSION})",
                             hint="upgrade with: pip install -U fluke")

    def run_files(self) -> list[Path]:
        """The runs table's files, in a stable order (by version partition, then part)."""
        return sorted((self.path / "runs").glob("*/*.parquet"))

    def table(self, name: str) -> Path:
        """The file of one of :data:`TABLES`."""
        return self.path / f"{name}.parquet"
