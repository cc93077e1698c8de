#: Every migration a new ledger records, in order (written out: a test against the source's own list could not fail).
MIGRATIONS = [
    "0001_runs_versions_documents_grades",
    "0002_runs_keyed_by_hash_with_counts",
    "0003_counts_keep_unknowns",
    "0004_pending_ingests",
    "0005_steps_where_runs_die",
    "0006_trial_outcomes_and_unit_cells",
]
