"""Reading what ingest keeps beside the runs: the ``counts``, ``steps``, ``trial_outcomes`` and
``unit_cells`` tables and the spend sums. A mixin of :class:`fluke.ledger.Ledger`, which gives
it ``query``, ``_where`` and the rest; nothing here reads a run's body.

>>> import tempfile, os
>>> from fluke.ledger import open_ledger
>>> from fluke.record import Outcome, Run
>>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "tb.db"))
>>> _ = ledger.ingest([Run(scenario="s", trial=t, outcome=Outcome(passed=t > 0)) for t in range(3)])
>>> [(r.trials, r.passes) for r in ledger.counts()]
[(3, 2)]
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ._types import CountRow, Places, StepRow, TrialOutcomes, UnitCell


class TableReads:
    """The tallies kept at ingest, per version × scenario × condition (and finer)."""

    query: Any
    _where: Any
    _condition_where: Any
    _json_field: Any

    def counts(self, *, version: str | Sequence[str] | None = None, scenario: str | None = None,
               condition: str | None = None) -> list[CountRow]:
        """Trials and passes per version × scenario × condition, kept up to date at ingest.

        A run whose ``passed`` is unknown counts as a trial that did not pass, and among the
        row's ``unknowns``.
        """
        where, params = self._where(scenario=scenario, version=version, runs=False)
        where, params = self._condition_where(where, params, condition)
        rows = self.query(f"SELECT vid, scenario, condition, trials, passes, unknowns FROM counts{where}", params)
        names = dict(self.query("SELECT vid, version FROM versions"))
        # sorted as tuples (version, scenario and condition are the table's key), then built
        ordered = sorted((names[v], s, c, int(n), int(k), int(u)) for v, s, c, n, k, u in rows)
        return [CountRow(*row) for row in ordered]

    def steps(self, *, version: str | Sequence[str] | None = None, scenario: str | None = None,
              condition: str | None = None) -> list[StepRow]:
        """Where runs died or were censored, per version × scenario × condition × place, kept
        up to date at ingest beside :meth:`counts` (a run whose outcome is unknown has no place).

        >>> import tempfile, os
        >>> from fluke.ledger import open_ledger
        >>> from fluke.record import Outcome, Run, ToolCall
        >>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "st.db"))
        >>> _ = ledger.ingest([Run(scenario="s", trial=t, events=[ToolCall(tool="pay", ok=t == 0)],
        ...                        outcome=Outcome(passed=t == 0)) for t in range(3)])
        >>> [(r.cause, r.step, r.event, r.runs) for r in ledger.steps()]
        [('censored', 0, '', 1), ('failed call', 0, 'pay', 2)]
        """
        where, params = self._where(scenario=scenario, version=version, runs=False)
        where, params = self._condition_where(where, params, condition)
        rows = self.query(f"SELECT vid, scenario, condition, cause, step, event, runs FROM steps{where}", params)
        names = dict(self.query("SELECT vid, version FROM versions"))
        out = [StepRow(names[v], s, c, cause, int(t), e, int(n)) for v, s, c, cause, t, e, n in rows]
        out.sort(key=lambda r: (r.version, r.scenario, r.condition, r.cause, r.step, r.event))
        return out

    def places(self, *, version: str | Sequence[str] | None = None, scenario: str | None = None,
               condition: str | None = None) -> Places:
        """Runs per place ``(scenario, condition, cause, step, event)`` summed over the versions
        given: the :meth:`steps` table, grouped by the database when there are several versions,
        read as columns (:class:`fluke.ledger.Places`, which reads as a mapping) with no row
        object built: ``compare`` reads a million runs' places this way. Places whose runs sum
        to zero are left out.

        >>> import tempfile, os
        >>> from fluke.ledger import open_ledger
        >>> from fluke.record import Identity, Outcome, Run
        >>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "pl.db"))
        >>> _ = ledger.ingest([Run(scenario="s", trial=t, identity=Identity(model=m), outcome=Outcome(passed=False,
        ...                        died_at=2)) for t in range(2) for m in ("a", "b")])
        >>> ledger.places()
        {('s', '', 'died_at', 2, 'end'): 4}
        >>> sum(r.runs for r in ledger.steps(version=ledger.select_versions("model=a")))
        2
        """
        where, params = self._where(scenario=scenario, version=version, runs=False)
        where, params = self._condition_where(where, params, condition)
        if isinstance(version, str) or (version is not None and len(set(version)) == 1):
            # one version: the table's key already makes each place one row
            sql = f"SELECT scenario, condition, cause, step, event, runs FROM steps{where}"
        else:
            sql = ("SELECT scenario, condition, cause, step, event, CAST(SUM(runs) AS BIGINT) FROM steps"
                   f"{where} GROUP BY scenario, condition, cause, step, event")
        return Places(self.stream(sql, params))

    def trial_outcomes(self, *, version: str | Sequence[str] | None = None, scenario: str | None = None,
                       condition: str | None = None, trials: Iterable[int] | None = None) -> TrialOutcomes:
        """Every run's outcome, in trial order within each scenario × condition, kept up to date at
        ingest (the ``trial_outcomes`` table: no run is read). ``trials`` keeps those trials only.

        Runs of one input and trial come in version order, then in the order :meth:`runs`
        gives them (the ingest that stored them, then their content key).

        >>> import tempfile, os
        >>> from fluke.ledger import open_ledger
        >>> from fluke.record import Outcome, Run
        >>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "to.db"))
        >>> _ = ledger.ingest([Run(scenario="s", trial=t, outcome=Outcome(passed=[True, False, None][t % 3]))
        ...                    for t in (4, 0, 2, 1, 300)])
        >>> got = ledger.trial_outcomes()
        >>> got.inputs, got.trial.tolist(), got.outcome.tolist()
        ((('s', ''),), [0, 1, 2, 4, 300], [0, 1, 2, 1, 0])
        >>> ledger.trial_outcomes(trials=range(2, 400)).trial.tolist()
        [2, 4, 300]
        """
        from ._tallies import read_trial_outcomes

        return read_trial_outcomes(self, version=version, scenario=scenario, condition=condition, trials=trials)

    #: Bytes a reader of :meth:`outcome_sequences` holds per run (None: the fix check's own
    #: figure for the arrays of :meth:`trial_outcomes`; the sequences are made here from those
    #: arrays a part of :data:`fluke.ledger._tallies.DECODE_ENTRIES` entries at a time).
    SEQUENCE_BYTES: int | None = None

    def outcome_sequences(self, *, version: str | Sequence[str] | None = None, scenario: str | None = None,
                          condition: str | None = None, trials: Iterable[int] | None = None):
        """Each input's outcomes in trial order, one byte a run (:class:`OutcomeSequences`): the
        order of :meth:`trial_outcomes`, without the trials and versions of the runs.

        >>> import tempfile, os
        >>> from fluke.ledger import open_ledger
        >>> from fluke.record import Outcome, Run
        >>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "os.db"))
        >>> _ = ledger.ingest([Run(scenario=s, trial=t, outcome=Outcome(passed=t > 0)) for s in "ab" for t in (2, 0)])
        >>> got = ledger.outcome_sequences()
        >>> got.inputs, got.sizes.tolist(), got.outcome.tolist()
        ((('a', ''), ('b', '')), [2, 2], [1, 0, 1, 0])
        """
        from ._tallies import read_trial_outcomes

        return read_trial_outcomes(self, version=version, scenario=scenario, condition=condition, trials=trials,
                                   sequences=True)

    def unit_cells(self, *, version: str | Sequence[str] | None = None, scenario: str | None = None,
                   condition: str | None = None) -> list[UnitCell]:
        """Trials, passes, unknowns and reward sums per version × sampling unit × scenario ×
        condition, kept up to date at ingest (the ``unit_cells`` table): what a clustered
        interval of the pass rate or of the mean reward needs. The unit is the runs' declared
        ``unit``, or their scenario.

        >>> import tempfile, os
        >>> from fluke.ledger import open_ledger
        >>> from fluke.record import Outcome, Run
        >>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "uc.db"))
        >>> _ = ledger.ingest([Run(scenario=s, trial=t, unit="airline", outcome=Outcome(passed=t == 0, reward=0.5 * t))
        ...                    for s in ("a", "b") for t in range(3)] + [Run(scenario="c")])
        >>> [(c.unit, c.scenario, c.trials, c.passes, c.rewarded, c.reward_sum, c.reward_squares)
        ...  for c in ledger.unit_cells()]
        [('airline', 'a', 3, 1, 3, 1.5, 1.25), ('airline', 'b', 3, 1, 3, 1.5, 1.25), ('c', 'c', 1, 0, 0, 0.0, 0.0)]
        """
        from ._tallies import read_unit_cells

        return read_unit_cells(self, version=version, scenario=scenario, condition=condition)

    def spend(self, *, version: str | Sequence[str] | None = None) -> dict[str, dict[str, tuple[int, float]]]:
        """Per version, ``{"latency": (runs carrying it, sum), "cost.<key>": (runs, sum), ...}`` by SQL.

        Read from the stored bodies in two aggregate queries (no run is built); a version whose
        runs carry neither cost nor latency is absent. Each query reads every stored body once,
        so it runs as a stream does (:meth:`stream`: on SQLite with the small page cache of a
        scan, not the ingest's 256 MiB, which a scan of a large ledger would fill to no purpose).

        >>> import tempfile, os
        >>> from fluke.ledger import open_ledger
        >>> from fluke.record import Run, Identity
        >>> ledger = open_ledger(os.path.join(tempfile.mkdtemp(), "s.db"))
        >>> _ = ledger.ingest([Run(scenario="s", trial=t, latency=2.0 + t, cost={"usd": 0.5}) for t in range(2)])
        >>> list(ledger.spend().values())[0]
        {'latency': (2, 5.0), 'cost.usd': (2, 1.0)}
        """
        where, params = self._where(version=version)
        names = dict(self.query("SELECT vid, version FROM versions"))
        out: dict[str, dict[str, tuple[int, float]]] = {}
        latency = f"CAST({self._json_field('latency')} AS DOUBLE PRECISION)"
        for vid, count, total in list(self.stream(f"SELECT vid, COUNT({latency}), SUM({latency}) FROM runs{where} "
                                                  "GROUP BY vid", params)):
            if int(count):
                out.setdefault(names[vid], {})["latency"] = (int(count), float(total))
        if self.dialect == "postgresql":
            sql = ("SELECT vid, j.key, COUNT(*), SUM(CAST(j.value AS DOUBLE PRECISION)) FROM runs, "
                   "jsonb_each_text(CAST(body AS jsonb) -> 'cost') AS j")
        else:
            sql = "SELECT vid, j.key, COUNT(*), SUM(j.value) FROM runs, json_each(runs.body, '$.cost') AS j"
        for vid, key, count, total in list(self.stream(f"{sql}{where} GROUP BY vid, j.key", params)):
            out.setdefault(names[vid], {})[f"cost.{key}"] = (int(count), float(total))
        return out
