"""``fluke export --format parquet``: the runs and tallies as a fluke Parquet dataset (:mod:`fluke.lake`).

>>> import os, tempfile
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Run
>>> folder = tempfile.mkdtemp()
>>> ledger = open_ledger(os.path.join(folder, "x.db"))
>>> _ = ledger.ingest([Run(scenario="s", trial=t) for t in range(2)])
>>> export_parquet(ledger, os.path.join(folder, "lake")).payload()["runs"]
2
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._document import line
from ._result import Result
from ._select import require_runs, select_versions


@dataclass(frozen=True)
class LakeExportReport(Result):
    """What ``export --format parquet`` wrote."""

    kind = "export"
    result: Any

    def payload(self) -> dict[str, Any]:
        return self.result.to_dict()

    def blocks(self) -> list:
        return [line(self.result.describe())]


def export_parquet(ledger, out: str, *, version: str | None = None, scenario: str | None = None,
                   condition: str | None = None, since: str | None = None,
                   until: str | None = None) -> LakeExportReport:
    """Write the runs matching the filters, and their tallies, as a Parquet dataset in the new folder ``out``.

    Lossless: ``fluke ingest out`` stores the same runs (the same content hashes), and
    ``--ledger parquet:out`` answers the count verbs from it in place.
    """
    from ..errors import UsageError
    from ..lake import write_dataset

    if out == "-":
        raise UsageError("--format parquet writes a folder: give it with -o DIR")
    chosen = select_versions(ledger, version)
    if chosen is None:
        require_runs(ledger)
    return LakeExportReport(write_dataset(ledger, out, version=chosen, scenario=scenario, condition=condition,
                                          since=since, until=until))
