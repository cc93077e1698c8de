"""Must show: incidents drawn from a simulated production stream, where a known share of traffic
happens at conditions the space names, give a printed coverage whose interval holds that share;
and over many streams the interval holds it about as often as its level says.
"""

from __future__ import annotations

import json

import numpy as np
from click.testing import CliRunner

from fluke.boundary import Incident, Space, coverage_interval, match_incidents
from fluke.cli import group

SPACE = {"name": "account desk", "axes": {"case": ["unique", "same_name", "missing_id"],
                                          "records": {"levels": [1, 5, 20], "ordered": True}}}
#: Production: (conditions, weight). 0.62 of the weight is on named points.
NAMED = [({"case": c, "records": r}, w) for (c, r, w) in
         (("unique", 1, 0.20), ("unique", 5, 0.12), ("same_name", 5, 0.10), ("missing_id", 20, 0.08),
          ("same_name", 1, 0.07), ("missing_id", 1, 0.05))]
UNNAMED = [({"case": "two_accounts", "records": 5}, 0.15), ({"case": "unique", "records": 200}, 0.13),
           ({"case": "unique", "records": 1, "locale": "fr"}, 0.10)]
TRUE_SHARE = sum(w for _, w in NAMED)


def _stream(rng, n):
    where = NAMED + UNNAMED
    weights = np.array([w for _, w in where])
    picks = rng.choice(len(where), size=n, p=weights / weights.sum())
    days = np.sort(rng.integers(0, 120, size=n))
    start = np.datetime64("2026-08-01")
    return [Incident(dict(where[i][0]), str(start + int(d)), id=f"INC-{k}") for k, (i, d) in
            enumerate(zip(picks, days, strict=True))]


def test_the_printed_coverage_holds_the_true_share(tmp_path):
    assert abs(TRUE_SHARE - 0.62) < 1e-12
    incidents = _stream(np.random.default_rng(7), 150)
    file = tmp_path / "incidents.jsonl"
    file.write_text("".join(json.dumps({**i.body(), "at": i.at}) + "\n" for i in incidents), encoding="utf-8")
    space = tmp_path / "space.yaml"
    space.write_text(json.dumps(SPACE), encoding="utf-8")
    ledger = str(tmp_path / "i.db")
    cli = CliRunner()
    added = cli.invoke(group, ["--ledger", ledger, "incident", "add", "--space", str(space), "--file", str(file)])
    assert added.exit_code == 0, added.output
    text = cli.invoke(group, ["--ledger", ledger, "incident", "show", "--space", str(space)]).output
    shown = cli.invoke(group, ["--ledger", ledger, "--json", "incident", "show", "--space", str(space)])
    doc = json.loads(shown.output)
    named = sum(1 for i in incidents if "locale" not in i.at and i.at["case"] in SPACE["axes"]["case"]
                and i.at["records"] in SPACE["axes"]["records"]["levels"])
    assert (doc["on_chart"], doc["incidents"]) == (named, 150)
    assert doc["lo"] <= TRUE_SHARE <= doc["hi"]
    # the line printed is the same figure: share, counts, interval
    pct = f"{100 * named / 150:.1f}% ({named}/150) [{100 * doc['lo']:.1f}%, {100 * doc['hi']:.1f}%]"
    assert f"coverage of production: {pct}" in text
    # over time: cumulative, ending at the whole
    periods = doc["over_time"]
    assert [p["period"] for p in periods] == ["2026-08", "2026-09", "2026-10", "2026-11"]
    assert periods[-1]["incidents"] == 150 and periods[-1]["on_chart"] == named
    assert all(a["incidents"] < b["incidents"] for a, b in zip(periods, periods[1:], strict=False))
    # each never-named incident suggests what to add
    assert set(doc["suggestions"]) == {"level two_accounts on axis case", "level 200 on axis records",
                                       "a new axis locale (seen: locale=fr)"}
    never = [m for m in doc["matches"] if m["where"] == "never named"]
    assert len(never) == 150 - named


def test_the_coverage_interval_holds_the_true_share_at_its_level():
    space = Space.from_mapping(SPACE)
    rng = np.random.default_rng(3)
    streams, held = 400, 0
    for _ in range(streams):
        on, n, lo, hi = match_incidents(space, _stream(rng, 60)).coverage()
        held += lo <= TRUE_SHARE <= hi
    rate = held / streams
    assert abs(rate - 0.95) <= 3 * np.sqrt(0.95 * 0.05 / streams)


def test_the_interval_agrees_with_a_peer():
    """Jeffreys interval: statsmodels' proportion_confint(method='jeffreys') is the same interval."""
    from statsmodels.stats.proportion import proportion_confint

    for k, n in ((0, 5), (7, 20), (93, 150), (20, 20)):
        lo, hi = coverage_interval(k, n, 0.95)
        plo, phi = proportion_confint(k, n, alpha=0.05, method="jeffreys")
        assert abs(lo - plo) < 1e-9 or k == 0
        assert abs(hi - phi) < 1e-9 or k == n


def test_bad_incidents_give_one_line_naming_the_record(tmp_path):
    space = tmp_path / "space.yaml"
    space.write_text(json.dumps(SPACE), encoding="utf-8")
    file = tmp_path / "bad.jsonl"
    file.write_text('{"at": {"case": "unique"}, "when": "2026-09-01"}\n{"at": {"case": "x"}, "when": "soon"}\n',
                    encoding="utf-8")
    ledger = tmp_path / "i.db"
    done = CliRunner().invoke(group, ["--ledger", str(ledger), "incident", "add", "--space", str(space),
                                      "--file", str(file)])
    assert done.exit_code == 2
    assert f"{file}: line 2: field when" in done.output and "Traceback" not in done.output
    # nothing half-written: the good first record was not kept either, so the ledger the failed
    # add started is gone again, and showing (which never creates one) says there is none
    assert not ledger.exists()
    shown = CliRunner().invoke(group, ["--ledger", str(ledger), "--json", "incident", "show", "--space", str(space)])
    assert shown.exit_code == 2 and f"no ledger at {ledger}" in shown.output
