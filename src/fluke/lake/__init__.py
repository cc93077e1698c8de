"""A ledger as a Parquet dataset: written by ``fluke export --format parquet``, read back by
``fluke ingest DIR``, and answered from in place by the count verbs (``--ledger parquet:DIR``,
or ``duckdb:FILE`` for one materialised into a DuckDB database), DuckDB doing the group-bys.

Needs ``pip install 'fluke[lake]'`` (pyarrow and duckdb), imported on first use.

>>> from fluke.lake import MANIFEST, LAYOUT_VERSION
>>> MANIFEST, LAYOUT_VERSION
('fluke-lake.json', 1)
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "MANIFEST": "_layout", "LAYOUT_VERSION": "_layout", "RUN_COLUMNS": "_layout", "is_dataset": "_layout",
    "runs_arrow_schema": "_layout", "Dataset": "_layout",
    "write_dataset": "_write", "LakeExport": "_write",
    
}

__all__ = sorted([*_EXPORTS, "materialise"])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None and name != "materialise":
        raise AttributeError(f"module 'fluke.lake' has no attribute {name!r}")
    if name == "materialise":
        from ..ledger._duckdb import materialise

        return materialise
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
