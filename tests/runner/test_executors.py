"""The executors the runner and ``fluke grade`` share: worker processes, and jobs drawn from a
generator only as slots free (so a ledger read in chunks is never held whole)."""

from __future__ import annotations

import os

import pytest

from fluke.errors import UsageError
from fluke.runner import Job, executor_for


def square_and_pid(x):
    return x * x, os.getpid()


def test_processes_answer_as_local_in_other_processes():
    jobs = [Job(i, "s", 0, i, 0) for i in range(12)]
    local = {job.case: a.value[0] for job, a in executor_for("local", workers=None)(jobs, square_and_pid)}
    got = list(executor_for("processes", workers=2)(jobs, square_and_pid))
    assert {job.case: a.value[0] for job, a in got} == local == {i: i * i for i in range(12)}
    assert os.getpid() not in {a.value[1] for _, a in got}


def test_a_generator_of_jobs_is_drawn_at_most_a_window_ahead():
    drawn = []

    def jobs():
        for i in range(20):
            drawn.append(i)
            yield Job(i, "s", 0, i, 0)

    run = executor_for("threads", workers=2)(jobs(), lambda x: x)
    first = next(run)
    assert len(drawn) <= 2 * 2          # the window: twice the workers
    rest = list(run)
    assert sorted(job.case for job, _ in [first, *rest]) == list(range(20)) == drawn
    assert all(job.case == a.value for job, a in [first, *rest])


def test_an_exception_in_a_worker_process_comes_back_as_data():
    [(_, attempt)] = executor_for("processes", workers=1)([Job(0, "s", 0, "x", 0)], int)
    assert attempt.value is None and attempt.error.startswith("ValueError: invalid literal")


@pytest.mark.parametrize("name, kwargs, words", [
    ("processes", {"workers": 0}, "workers=0 must be at least 1"),
    ("local", {"workers": None, "address": "127.0.0.1:6379"}, "is for the ray executor"),
])
def test_bad_executor_options_are_refused(name, kwargs, words):
    with pytest.raises(UsageError, match=words):
        executor_for(name, **kwargs)
