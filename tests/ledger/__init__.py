#: Every migration a new ledger records, in order (written out: a test against the source's own list could not fail).
MIGRATIONS = [
    "0001_runs_versions_documents_grades",
    "0002_runs_keyed_by_hash_with_counts",
    "0003_counts_keep_unknowns",
    "0004_pending_ingests",
    "0005_steps_where_runs_die",
    "0006_trial_outcomes_and_unit_cells",
    "0007_one_run_per_trial",
]


def undo_trial_keys(ledger) -> None:
    """Make a ledger as it was before 0007 (inside the caller's transaction): no trial key."""
    ledger.execute("DROP INDEX runs_trial")
    ledger.execute("ALTER TABLE runs DROP COLUMN t")
    ledger.execute("DELETE FROM migrations WHERE name = '0007_one_run_per_trial'")


def kept(runs) -> list:
    """The runs a ledger keeps of ``runs``: the first of each version x scenario x condition x trial."""
    out = {}
    for r in runs:
        out.setdefault((r.version, r.scenario, r.condition_key(), r.trial), r)
    return list(out.values())
