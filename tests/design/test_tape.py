"""Random tapes: the same event gets the same draw in every policy, whatever came before."""

import numpy as np
from scipy import stats

from fluke.design import Tape


def test_same_event_same_draw_regardless_of_earlier_consumption():
    tape = Tape(42)
    # policy A makes two extra calls before the shared event; policy B makes none
    a_extra = [tape.uniform("tool_fault", ["case-1", "extra", i]) for i in range(2)]
    a = tape.uniform("tool_fault", ["case-1", "lookup", 0])
    b = Tape(42).uniform("tool_fault", ["case-1", "lookup", 0])
    assert a == b and a not in a_extra
    # a single sequential generator would desynchronise the two branches
    g1, g2 = np.random.default_rng(42), np.random.default_rng(42)
    g1.random(2)
    assert g1.random() != g2.random()


def test_mechanisms_and_seeds_are_separate_streams():
    t = Tape(1)
    assert t.uniform("tool_fault", "e1") != t.uniform("generation", "e1")
    assert Tape(1).uniform("generation", "e1") != Tape(2).uniform("generation", "e1")
    assert Tape([1, "memory=on"]).id != Tape([1, "memory=off"]).id


def test_draws_are_uniform_and_uncorrelated_across_event_keys():
    t = Tape(7)
    u = np.array([t.uniform("generation", ["env", i]) for i in range(5000)])
    assert stats.kstest(u, "uniform").pvalue > 0.001
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 4 / np.sqrt(5000)
    z = np.array([t.normal("noise", i, loc=1.0, scale=2.0) for i in range(3000)])
    assert stats.kstest((z - 1.0) / 2.0, "norm").pvalue > 0.001
