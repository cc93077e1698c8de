"""Where the outside review's reproducers live (../shared/repro), for the tests that replay them."""

from __future__ import annotations

from .conftest import SHARED

DRILLS = SHARED / "repro" / "drills"
FUZZ_REPRO = DRILLS / "fuzz_repro"

#: A stored body of a plain run, as replay_fuzz_repro.py uses for the ledger inputs.
GOOD_BODY = ('{"condition":{},"cost":{},"error":null,"events":[],"format_version":1,"identity":{"date":null,'
             '"grader":null,"harness":null,"model":null,"policy":null,"tools":null,"world":null},"latency":null,'
             '"outcome":{"died_at":null,"label":null,"passed":null,"reward":null},"scenario":"s","seed":null,'
             '"tags":[],"tape":null,"trial":0,"unit":null}')
