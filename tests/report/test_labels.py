"""Chart labels of long ids: cut to fit, and still one label per id (τ²-bench telecom ids differ
in the middle, where a middle cut drops exactly what tells them apart)."""

from __future__ import annotations

from click.testing import CliRunner

from fluke.cli import group
from fluke.ledger import open_ledger
from fluke.report._charts import LABEL
from fluke.report._svg import distinct, middle

from ..conftest import TAU2_RESULTS, need


def test_tau2_bench_ids_keep_distinct_labels(tmp_path):
    ledger = str(tmp_path / "t.db")
    files = sorted(str(p) for p in need(TAU2_RESULTS).glob("*.json"))
    assert CliRunner().invoke(group, ["--ledger", ledger, "ingest", *files]).exit_code == 0
    with open_ledger(ledger, create=False) as led:
        ids = sorted({r.scenario for r in led.counts()})
    cut = [middle(i, LABEL) for i in ids]
    assert len(set(cut)) < len(ids)              # the reproducer: a middle cut makes some rows read the same
    labels = distinct(ids, LABEL)
    assert len(set(labels)) == len(ids) and max(map(len, labels)) <= LABEL
    assert [lab for i, lab in zip(ids, labels, strict=True) if len(i) <= LABEL] == [i for i in ids if len(i) <= LABEL]
