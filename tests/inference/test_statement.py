"""The four-part statement says what it is conditional on and what was carried."""

import numpy as np

from fluke.inference import (Prior, carried_text, detect_change, discount, posterior, scenario_statement,
                             suite_questions, suite_statement)


def test_five_of_five_statement_has_four_checkable_parts():
    s = scenario_statement("update-record", 5, 5, posterior(5, 5), version="ab12cd34ef56 (model=M)")
    assert s.happened == "update-record passed 5 of 5 runs."
    assert "0.857" in s.inferred and "P(θ > 0.9) = 0.469" in s.inferred
    assert s.conditional_on == "version ab12cd34ef56 (model=M); prior uniform Beta(1, 1)."
    assert s.carried.startswith("nothing")


def test_carried_statement_names_version_and_discount():
    carried = discount(posterior(10, 10), 0.5)
    belief = carried.update(5, 5)
    s = scenario_statement("s", 5, 5, belief, version="V (harness=3.2)",
                           carried=carried_text("V' (harness=3.1)", 0.5))
    assert "δ = 0.5" in s.carried and "V' (harness=3.1)" in s.carried
    assert "Beta(11, 1)" in s.inferred          # 1 + 0.5·10 = 6, plus five passes


def test_mixture_statement_after_reset():
    change = detect_change(posterior(50, 50), 3, 5, odds=4)
    text = carried_text("V1", 1.0, p_changed=float(change.p_changed), odds=4, reset=True)
    s = scenario_statement("s", 3, 5, change.mixture, version="V2", prior="uniform Beta(1, 1)", carried=text)
    assert "P(changed) = 0.872" in s.carried and "reset" in s.carried
    assert "mixture" in s.inferred and f"{float(change.mixture.mean):.3f}" in s.inferred


def test_one_run_per_scenario_says_how_little_it_supports():
    k, n = np.array([1, 0, 1, 1]), np.ones(4, int)
    s = suite_statement(suite_questions(posterior(k, n), bar=0.9), k, n, version="v", prior="uniform")
    assert "one run per scenario" in s.inferred and "0.224 to 0.975" in s.inferred
    assert "takes 28 clean runs" in s.inferred
    s4 = suite_statement(suite_questions(posterior(k * 4, n * 4), bar=0.9), k * 4, n * 4, version="v",
                         prior=Prior(2, 2).describe())
    assert "one run per scenario" not in s4.inferred and "Beta(2, 2)" in s4.conditional_on
