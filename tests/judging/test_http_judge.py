"""A judge over HTTP: an OpenAI-compatible endpoint faked on 127.0.0.1 by the test, K = 3, every
judgment stored in a real ledger (SQLite and PostgreSQL), the digest moved by one character."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from fluke.analysis._judge import judge
from fluke.errors import InputError
from fluke.judging import JudgeConfig
from fluke.record import AgentMessage, Identity, Outcome, Run, UserMessage

KEY = "sk-test-0123456789abcdefghij"


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - the http.server name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        view = json.loads(body["messages"][1]["content"])
        said = " ".join(e.get("text", "") for e in view["transcript"] if e["kind"] == "agent")
        # a judge that passes refunds, and wavers on "maybe" runs: FAIL on its second repeat only
        verdict = "PASS" if "refund" in said and not ("maybe" in said and body["seed"] == 1) else "FAIL"
        reply = json.dumps({"choices": [{"message": {"role": "assistant", "content": f"Verdict: {verdict}"}}]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(reply.encode())

    def log_message(self, *args):
        pass


def _serving(handler):
    """A fake judge on 127.0.0.1 answering with ``handler``, its requests kept in ``seen``."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.seen = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture()
def server():
    yield from _serving(_Handler)


def _runs():
    texts = ["refund issued", "cannot help", "refund maybe issued", "refund done", "no"]
    return [Run(scenario=f"s{i}", identity=Identity(model="agent-secret-name", policy="pol-v9"),
                events=[UserMessage(text="refund please"), AgentMessage(text=f"{t} by agent-secret-name")],
                outcome=Outcome(passed=i % 2 == 0)) for i, t in enumerate(texts)]


def test_http_judge_k3_stores_every_judgment_and_the_prompt_is_the_identity(server, ledger, monkeypatch):
    monkeypatch.setenv("JUDGE_KEY", KEY)
    ledger.ingest(_runs())
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    config = JudgeConfig(model="judge-model", endpoint="openai", prompt="Did the agent refund? PASS or FAIL.",
                         replicates=3, target={"url": url, "api_key_env": "JUDGE_KEY"})
    result = judge(ledger, config, record=True)
    assert len(server.seen) == 5 * 3
    assert {s["path"] for s in server.seen} == {"/v1/chat/completions"}
    assert {s["auth"] for s in server.seen} == {f"Bearer {KEY}"}
    assert all(s["body"]["model"] == "judge-model" and s["body"]["messages"][0]["content"] == config.prompt
               for s in server.seen)
    assert not any("agent-secret-name" in json.dumps(s["body"]) or "pol-v9" in json.dumps(s["body"])
                   for s in server.seen)
    stored = ledger.grades(config.digest)
    by_text = {r.hash: r.events[1].text for r in ledger.runs()}
    labels = {by_text[h].split(" by ")[0]: body["labels"] for h, body in stored.items()}
    assert labels == {"refund issued": [True] * 3, "cannot help": [False] * 3,
                      "refund maybe issued": [True, False, True], "refund done": [True] * 3, "no": [False] * 3}
    assert result.consistency.flips.value == pytest.approx(1 / 5)
    assert KEY not in result.render() and KEY not in result.to_json()
    # judged copies are their own version, with the judge's digest as the grader
    judged = [r for r in ledger.runs() if isinstance(r.identity.grader, dict)]
    assert len(judged) == 5 and {r.identity.grader["judge"] for r in judged} == {config.digest}

    # judging again with the same judge asks nothing; one character more in the prompt is another judge
    before = len(server.seen)
    assert judge(ledger, config).stored == 0 and len(server.seen) == before
    changed = config.model_copy(update={"prompt": config.prompt + "."})
    assert changed.digest != config.digest
    assert judge(ledger, changed).stored == 5 and len(server.seen) == before + 15
    assert set(ledger.grades(changed.digest)) == set(stored)
    assert {d.digest for d in ledger.documents("judge")} == {config.digest, changed.digest}


def test_a_judge_that_does_not_answer_is_one_line_naming_the_endpoint(ledger):
    ledger.ingest(_runs()[:1])
    config = JudgeConfig(model="m", endpoint="openai", prompt="p", target={"url": "http://127.0.0.1:9/v1"})
    with pytest.raises(InputError) as err:
        judge(ledger, config)
    assert "127.0.0.1:9/v1/chat/completions" in str(err.value) and "did not answer" in str(err.value)
    assert ledger.grades(config.digest) == {}


class _PairHandler(BaseHTTPRequestHandler):
    """A pairwise judge with a planted taste for the first slot: on half of the requests (a coin
    fixed by the pair and the repeat) it answers FIRST whatever it is shown; otherwise it picks the
    good answer. Every answer is logged beside the request."""

    def do_POST(self):  # noqa: N802 - the http.server name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        shown = json.loads(body["messages"][1]["content"])
        answer = _planted(shown["first"], shown["second"], body["seed"])
        self.server.seen.append({"body": body, "shown": shown, "answer": answer})
        reply = json.dumps({"choices": [{"message": {"role": "assistant", "content": f"The {answer} one."}}]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(reply.encode())

    def log_message(self, *args):
        pass


def _planted(first, second, seed):
    import hashlib

    coin = hashlib.sha256(f"{first['run']}|{second['run']}|{seed}".encode()).digest()[0] < 128
    good = "good" in first["transcript"][0]["text"]
    return "FIRST" if coin or good else "SECOND"


@pytest.fixture()
def pair_server():
    yield from _serving(_PairHandler)


PAIRS = 60


def test_pairwise_http_judge_k3_balanced_order_removes_the_planted_first_slot_preference(pair_server, ledger):
    from fluke.analysis._judge import judge_pairwise

    # two equally good versions: a answers well on even scenarios, b on odd ones
    ledger.ingest([Run(scenario=f"s{i}", identity=Identity(model=m, policy=f"policy-{m}-secret"),
                       events=[AgentMessage(text=f"{'good' if (i + (m == 'b')) % 2 == 0 else 'poor'} answer {i} "
                                                 f"from policy-{m}-secret")],
                       outcome=Outcome(passed=True)) for m in ("a", "b") for i in range(PAIRS)])
    url = f"http://127.0.0.1:{pair_server.server_address[1]}/v1"
    config = JudgeConfig(model="pair-judge", endpoint="openai", prompt="Which answer is better? FIRST or SECOND.",
                         pairwise=True, replicates=3, target={"url": url})
    result = judge_pairwise(ledger, config, "model=a", "model=b")
    seen = pair_server.seen
    assert len(seen) == PAIRS * 3 and result.pairs == PAIRS
    assert not any("secret" in json.dumps(s["body"]) for s in seen)          # blinded: no policy label shown
    # the first-slot share reported is the share of the server's own answers that said FIRST
    said_first = sum(s["answer"] == "FIRST" for s in seen)
    assert result.first_slot.n == PAIRS * 3 and result.first_slot.value == pytest.approx(said_first / len(seen))
    assert result.first_slot.low > 0.5                                         # the bias is shown ...
    assert "the judge favours a slot" in result.render()
    # ... and kept out of the verdict: each version sat first in half of the judgments
    runs = {r.hash: r.identity.model for r in ledger.runs()}
    firsts = [runs[s["shown"]["first"]["run"]] for s in seen]
    assert firsts.count("a") == firsts.count("b") == PAIRS * 3 // 2
    # the verdict equals an independent tally of the server's answers, mapped back through the order shown
    a_wins = sum((s["answer"] == "FIRST") == (runs[s["shown"]["first"]["run"]] == "a") for s in seen)
    assert (result.a_wins, result.b_wins, result.ties) == (a_wins, len(seen) - a_wins, 0)
    se = (0.25 / len(seen)) ** 0.5
    assert abs(result.share.value - 0.5) < 3 * se and result.share.low <= 0.5 <= result.share.high
    # every judgment is stored, K slots per pair, under the judge's digest
    stored = ledger.grades(config.digest)
    assert len(stored) == PAIRS and all(len(b["slots"]) == 3 and b["balanced"] for b in stored.values())
    assert sum(b["a_wins"] for b in stored.values()) == a_wins

    # the same judge, order not balanced: a always first, and the planted preference becomes a's win
    before = len(seen)
    unbalanced = judge_pairwise(ledger, config, "model=a", "model=b", balance=False)
    assert unbalanced.share.low > 0.5 and "order NOT balanced" in unbalanced.render()
    assert unbalanced.a_wins == sum(s["answer"] == "FIRST" for s in seen[before:])

    # one character more in the prompt is another judge, asked again and stored apart
    changed = config.model_copy(update={"prompt": config.prompt + "!"})
    assert changed.digest != config.digest
    judge_pairwise(ledger, changed, "model=a", "model=b")
    assert len(seen) == before + 2 * PAIRS * 3
    assert set(ledger.grades(changed.digest)) == set(stored)
    assert {d.digest for d in ledger.documents("judge")} >= {config.digest, changed.digest}
