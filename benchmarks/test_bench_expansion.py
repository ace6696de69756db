"""Query expansion by a model (memory/search/legs/expansion.py, issue 24): what can be measured without a real
model.

- Calls: how many of the eval's questions (both halves, each searched as a chat turn's injection searches
  it: the person's own memories and the agent's, top 20) and of the paraphrase set's 24 the gate would
  send to the model, per kind. Nonsense must send none.
- Latency with the fake model on loopback (tests/fake_openai.py, answering two phrasings at once): a
  paraphrase question's recall without a model, with the model asked (uncached), and with the answer
  cached; and a question found locally with and without an expander (the gate's own cost). Rounds are
  interleaved so that load moves each alike.

The real gain (how often a real model's phrasings find the memory) depends on the model and is not
measured here: the fake model's phrasings are not a model's.

Run: python -m pytest benchmarks/test_bench_expansion.py --benchmark-only -n 0 -s
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.memory import query_expansion
from openclaw_cli.memory.inject import recall
from openclaw_cli.memory.query_expansion import AnswerCache, ModelExpander
from openclaw_cli.memory.search.legs import expansion
from openclaw_cli.memory.service import MemoryService
from tests import evalset, paraphrase_set
from tests.evalset import NOW
from tests.fake_openai import FAKE_API_KEY, FakeOpenAI

TOP_K = 20  # memory.inject.topK's default: what a turn's injection asks for
ROUNDS = 3


@pytest.fixture(scope="module")
def eval_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryService]:
    svc = evalset.build_service(Path(tmp_path_factory.mktemp("eval")))
    yield svc
    svc.close()


@pytest.fixture(scope="module")
def paraphrase_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryService]:
    svc = paraphrase_set.build_service(Path(tmp_path_factory.mktemp("paraphrase")))
    yield svc
    svc.close()


def _gated(service: MemoryService, items: list[dict[str, Any]]) -> tuple[Counter[str], Counter[str]]:
    """(questions, questions the gate would send) per kind."""
    asked: Counter[str] = Counter()
    sent: Counter[str] = Counter()
    for item in items:
        hits, _ = recall(service, item["query"], TOP_K, item["userId"], NOW)
        asked[item["kind"]] += 1
        sent[item["kind"]] += expansion.wanted(item["query"], hits)
    return asked, sent


def test_calls_per_question_with_the_gate(
    benchmark: Any, eval_service: MemoryService, paraphrase_service: MemoryService
) -> None:
    def measure() -> dict[str, Any]:
        table: dict[str, Any] = {}
        halves = evalset.split_halves()
        for half in evalset.HALVES:
            items = [i for i in evalset.load_queries() if halves[evalset.query_key(i)] == half]
            asked, sent = _gated(eval_service, items)
            table[half] = {kind: f"{sent[kind]}/{asked[kind]}" for kind in sorted(asked)}
            table[half]["all"] = f"{sum(sent.values())}/{sum(asked.values())}"
        unseen = evalset.load_jsonl("nonsense_unseen.jsonl")
        asked, sent = _gated(eval_service, unseen)
        table["nonsense unseen"] = f"{sum(sent.values())}/{sum(asked.values())}"
        asked, sent = _gated(paraphrase_service, paraphrase_set.load("queries.jsonl"))
        table["paraphrase set"] = f"{sum(sent.values())}/{sum(asked.values())}"
        return table

    table = benchmark.pedantic(measure, rounds=1, iterations=1)
    benchmark.extra_info.update(table)
    print(f"\nquestions sent to the model (load {_load()}):")
    for name, row in table.items():
        print(f"  {name}: {row}")
    for half in evalset.HALVES:
        assert table[half].get("nonsense", "0/0").startswith("0/")
    assert table["nonsense unseen"].startswith("0/")


def _phrasings(body: str) -> str:
    # Two phrasings built from the question: the cost of searching them, not a model's quality.
    return json.dumps({"phrasings": [f"User {body}", f"{body} preference"]})


def _hits(service: MemoryService, query: str) -> list[Any]:
    return recall(service, query, TOP_K, paraphrase_set.USER, NOW)[0]


def _ms(service: MemoryService, query: str, expander: ModelExpander | None) -> float:
    start = time.perf_counter()
    recall(service, query, TOP_K, paraphrase_set.USER, NOW, expander)
    return (time.perf_counter() - start) * 1000


def test_added_latency_with_the_fake_model(
    benchmark: Any, paraphrase_service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_API_KEY)
    fake = FakeOpenAI().start()
    fake.expand = _phrasings
    questions = [item["query"] for item in paraphrase_set.load("queries.jsonl")]
    found_locally = "do I prefer dark mode in every app?"
    try:
        for query in questions:  # warm: models loaded, word caches filled
            recall(paraphrase_service, query, TOP_K, paraphrase_set.USER, NOW)

        gated = [q for q in questions if expansion.wanted(q, _hits(paraphrase_service, q))]
        local_hits = _hits(paraphrase_service, found_locally)

        def measure() -> dict[str, Any]:
            times: dict[str, list[float]] = {"local": [], "asked": [], "cached": []}
            for _ in range(ROUNDS):
                expander = ModelExpander("openai/fake-chat", fake.url, 5.0, AnswerCache(1024))
                for query in gated:
                    times["local"].append(_ms(paraphrase_service, query, None))
                    times["asked"].append(_ms(paraphrase_service, query, expander))
                    times["cached"].append(_ms(paraphrase_service, query, expander))
            result: dict[str, Any] = {f"{k} ms": round(statistics.median(v), 2) for k, v in times.items()}
            start = time.perf_counter()
            for _ in range(1000):
                expansion.wanted(found_locally, local_hits)
            result["gate us, found locally"] = round((time.perf_counter() - start) * 1000, 2)
            start = time.perf_counter()
            for query in questions:
                expansion.wanted(query, [])
            result["gate us, nothing found"] = round((time.perf_counter() - start) * 1e6 / len(questions), 1)
            result["gated"] = f"{len(gated)}/{len(questions)}"
            result["calls"] = len(fake.expansion_requests)
            return result

        result = benchmark.pedantic(measure, rounds=1, iterations=1)
    finally:
        fake.stop()
        query_expansion.clear_cache()
    benchmark.extra_info.update(result)
    print(f"\nparaphrase question's recall, median ms (load {_load()}): {result}")
    assert result["calls"] == ROUNDS * len(gated)  # one per gated question and round: cached after


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def _injection_ms(runtime: Any, text: str) -> float:
    from tests.agent_helpers import turn

    result, _ = turn(runtime, text, user_id="alice")
    assert result.status == "ok", result.error
    return float(result.stages["memory injection"])


def test_a_turns_memory_injection_with_and_without_expansion(
    benchmark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The "memory injection" stage of real in-process turns (agent/turn/loop.py), the fake model on loopback
    answering two phrasings: a paraphrase (gated in: asked each time, the cache cleared) and a question
    found locally (gated out), each with expansion on and off, interleaved."""
    from openclaw_cli.agent.runtime import AgentRuntime
    from openclaw_cli.core.paths import Home
    from openclaw_cli.memory.agent_memory import NewMemory
    from tests.agent_helpers import chat_settings

    monkeypatch.setenv("OPENAI_API_KEY", FAKE_API_KEY)
    fake = FakeOpenAI().start()
    fake.expand = _phrasings
    runtimes = {
        on: AgentRuntime(
            Home(tmp_path / str(on)), chat_settings(fake.url, memory={"queryExpansion": {"enabled": on}})
        )
        for on in (True, False)
    }
    paraphrase, local = "what look do I want for my code editor?", "which tea is my favourite tea?"
    try:
        for runtime in runtimes.values():
            for text in ("User prefers dark mode", "User's favourite tea is sencha", "User lives in Lisbon"):
                runtime.services("main").memory.add(
                    NewMemory(l0=text, category="preference", user_id="alice")
                )
            _injection_ms(runtime, paraphrase)  # warm: models, the openai client

        def measure() -> dict[str, Any]:
            times: dict[str, list[float]] = {}
            for _ in range(ROUNDS * 4):
                for on, runtime in runtimes.items():
                    for name, text in (("paraphrase", paraphrase), ("found locally", local)):
                        query_expansion.clear_cache()
                        times.setdefault(f"{name}, expansion {'on' if on else 'off'}", []).append(
                            _injection_ms(runtime, text)
                        )
            found = {name: round(statistics.median(values), 1) for name, values in times.items()}
            found["expansion calls"] = len(fake.expansion_requests)
            return found

        result = benchmark.pedantic(measure, rounds=1, iterations=1)
    finally:
        for runtime in runtimes.values():
            runtime.close()
        fake.stop()
        query_expansion.clear_cache()
    benchmark.extra_info.update(result)
    print(f"\na turn's memory injection, median ms (load {_load()}): {result}")
    assert result["expansion calls"] == 1 + ROUNDS * 4  # the warm-up, then each gated turn once


def test_bounds_of_the_fusion_with_an_oracle_and_a_wrong_model(
    benchmark: Any, paraphrase_service: MemoryService
) -> None:
    """What the fusion can do with the best and with a wrong answer, on the paraphrase set's gated
    questions (no model: the expander is a function). Oracle: the one phrasing is the answer's own text
    (an upper bound no model reaches). Wrong: the one phrasing is the text of the next question's answer
    (a model answering about something else): how often the right answer leaves the top 3, and how often
    the wrong memory enters it."""
    items = paraphrase_set.load("queries.jsonl")
    texts = {m["id"]: m["l0"] for m in paraphrase_set.load("memories.jsonl")}

    def top3(query: str, expander: Any) -> list[str]:
        hits, _ = recall(paraphrase_service, query, TOP_K, paraphrase_set.USER, NOW, expander)
        return [hit.record.id for hit in hits[:3]]

    def measure() -> dict[str, Any]:
        counts = Counter[str]()
        for number, item in enumerate(items):
            query, answer = item["query"], item["expected"][0]
            wrong = items[(number + 1) % len(items)]["expected"][0]
            if not expansion.wanted(
                query, recall(paraphrase_service, query, TOP_K, paraphrase_set.USER, NOW)[0]
            ):
                continue
            counts["gated"] += 1
            local = top3(query, None)
            counts["hit@3 local"] += answer in local
            counts["hit@3 oracle"] += answer in top3(query, lambda q, a=answer: (texts[a],))
            misled = top3(query, lambda q, w=wrong: (texts[w],))
            counts["hit@3 wrong model"] += answer in misled
            counts["wrong memory in top 3"] += wrong in misled
        return dict(counts)

    result = benchmark.pedantic(measure, rounds=1, iterations=1)
    benchmark.extra_info.update(result)
    print(f"\nfusion bounds on the paraphrase set's gated questions: {result}")
    assert result["hit@3 oracle"] >= result["hit@3 local"]
