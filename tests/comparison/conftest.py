"""A τ-bench ledger shared by the comparison tests (built once per session)."""

import pytest

from fluke.ledger import open_ledger

from ._realdata import TAU1_AIRLINE, TAU2_FILES, TAU2_RESULTS, need, tau1_airline_runs, tau2_runs


@pytest.fixture(scope="session")
def tau_ledger(tmp_path_factory):
    """One SQLite ledger file with the τ²-bench model-training runs and τ-bench gpt-4o airline.

    Shared read-only (compare only appends a comparison record; tests that count records use
    their own ledger).
    """
    for path in TAU2_FILES.values():
        need(TAU2_RESULTS / path)
    need(TAU1_AIRLINE)
    ledger_url = str(tmp_path_factory.mktemp("tau") / "fluke.db")
    with open_ledger(ledger_url) as ledger:
        for model, domain in TAU2_FILES:
            ledger.ingest(tau2_runs(model, domain))
        ledger.ingest(tau1_airline_runs())
    return ledger_url
