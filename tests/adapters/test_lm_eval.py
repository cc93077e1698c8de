"""lm-evaluation-harness ``--log_samples`` output: ``OUT/<model_name_sanitized>/samples_<task>_<date>.jsonl``
beside ``results_<date>.json``.

The harness needs ``datasets`` and a model to run, which this machine has neither of, so
the files are written here as lm_eval 0.4.13 writes them: the logged sample of
``lm_eval/evaluator.py`` (``doc_id``, ``doc``, ``target``, ``arguments``, ``resps``,
``filtered_resps``, ``filter``, ``metrics``, the three hashes, then each metric), passed
through ``EvaluationTracker.save_results_samples`` (``arguments`` as ``gen_args_i.arg_j``,
responses as strings, the target as a string); and the results file with ``model_name``,
``config.model_args``, ``n-shot`` and ``lm_eval_version``."""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from fluke.adapters import detect_format, read_file
from fluke.analysis import ingest, passk
from fluke.errors import InputError
from fluke.ledger import open_ledger

DATES = ["2026-01-05T09-10-11.123456", "2026-01-06T09-10-11.654321", "2026-01-07T08-00-00.000001"]


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _sample(doc_id, answer, response, filter_key, correct):
    doc = {"question": f"What is {doc_id} + {doc_id}?", "answer": f"#### {answer}"}
    prompt = f"Question: {doc['question']}\nAnswer:"
    return {"doc_id": doc_id, "doc": doc, "target": str(answer),
            "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": {"until": ["Question:"], "do_sample": False}}},
            "resps": [[response]], "filtered_resps": [response if filter_key == "none" else str(answer)],
            "filter": filter_key, "metrics": ["exact_match"], "doc_hash": _hash(json.dumps(doc, indent=2)),
            "prompt_hash": _hash(prompt), "target_hash": _hash(str(answer)), "exact_match": float(correct)}


def _run(out, date, rng, *, docs=20, filters=("strict-match", "flexible-extract")):
    folder = out / "meta-llama__Llama-3.1-8B"
    folder.mkdir(parents=True, exist_ok=True)
    outcomes = {}
    with open(folder / f"samples_gsm8k_{date}.jsonl", "w") as fh:
        for filter_key in filters:
            for i in range(docs):
                correct = rng.random() < 0.5
                if filter_key == filters[0]:
                    outcomes[i] = correct
                fh.write(json.dumps(_sample(i, 2 * i, f"The answer is {2 * i}.", filter_key, correct)) + "\n")
    (folder / f"results_{date}.json").write_text(json.dumps({
        "results": {"gsm8k": {"alias": "gsm8k", "exact_match,strict-match": 0.5}}, "n-shot": {"gsm8k": 5},
        "config": {"model": "hf", "model_args": "pretrained=meta-llama/Llama-3.1-8B,dtype=bfloat16"},
        "model_source": "hf", "model_name": "meta-llama/Llama-3.1-8B", "model_name_sanitized": folder.name,
        "lm_eval_version": "0.4.13", "date": 1767600000.0}))
    return folder / f"samples_gsm8k_{date}.jsonl", outcomes


def test_three_runs_of_a_task_are_trials_0_to_2_of_one_version(tmp_path):
    rng = random.Random(5)
    made = [_run(tmp_path / "out", date, rng) for date in reversed(DATES)][::-1]   # written newest first
    assert detect_format(made[0][0]) == "lm-eval"
    ledger = open_ledger(str(tmp_path / "l.db"))
    report = ingest(ledger, [str(path) for path, _ in made])
    assert [(r["added"], r["skipped"]) for r in report.files] == [(20, 0)] * 3
    assert all("left 20 of filter 'flexible-extract'" in r["notes"][0] for r in report.files)
    [version] = ledger.versions()
    ident = version.identity
    assert ident.model == "meta-llama/Llama-3.1-8B" and ident.world == "lm-eval/gsm8k@5-shot"
    assert ident.harness == {"lm_eval": "0.4.13"}
    assert ident.grader == {"lm_eval_metric": "exact_match", "filter": "strict-match"}
    for run in ledger.runs():
        doc_id = int(run.scenario.split("/")[1])
        assert run.outcome.passed == made[run.trial][1][doc_id]
    [row] = passk(ledger, ks=[3]).payload()["versions"]
    expected = sum(any(made[t][1][i] for t in range(3)) for i in range(20)) / 20
    assert row["trials"] == 60 and row["rows"][0]["pass_at_k"] == pytest.approx(expected)


def test_options_pick_the_filter_and_the_metric_and_events_hold_prompt_and_answer(tmp_path):
    path, _ = _run(tmp_path, DATES[0], random.Random(1), docs=3)
    runs = list(read_file(path, options={"filter": "flexible-extract"}))
    assert len(runs) == 3 and {r.identity.grader["filter"] for r in runs} == {"flexible-extract"}
    assert runs[1].events[0].text.startswith("Question: What is 1 + 1?") and runs[1].events[1].text == "2"
    none = list(read_file(path, options={"score": "acc"}))   # a metric the lines lack: unknown outcomes
    assert {r.outcome.passed for r in none} == {None}


def test_a_bad_doc_id_names_the_line(tmp_path):
    path = tmp_path / "samples_t_2026-01-01T00-00-00.jsonl"
    good = _sample(0, 0, "0", "none", True)
    path.write_text(json.dumps(good) + "\n" + json.dumps(dict(good, doc_id=[1])) + "\n")
    with pytest.raises(InputError, match=r"line 2: field doc_id: expected an integer or a string"):
        list(read_file(path))
