"""Session transcript search (issue 24): the conversational eval's figures per kind, and scale at 200k
messages (a year of daily chatting): indexing rate, warm search latency (operator and a person's view), and
what indexing on append costs a turn (appends with and without the index listener, interleaved rounds).

At scale the texts are generated and the vectors random unit vectors of the real embedder's identity: the
latency of the scans is that of real ones; relevance at this scale is the eval's business, not this file's.
OPENCLAW_BENCH_TURNS sets the size (default 200,000).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.core.paths import Home
from openclaw_cli.memory.store.transcripts import TurnFilter
from openclaw_cli.memory.transcripts.search import TranscriptRequest
from openclaw_cli.sessions.keys import parse_key
from openclaw_cli.sessions.store import SessionStore
from openclaw_cli.sessions.writer import Durability
from tests.transcript_eval import evaluate, load, write_home
from tests.transcript_helpers import open_index, repaired_index

TURNS = int(os.environ.get("OPENCLAW_BENCH_TURNS", "200000"))
PER_SESSION = 100
PEOPLE = 20
WORDS = [
    "trip",
    "flight",
    "hotel",
    "dinner",
    "meeting",
    "report",
    "budget",
    "garden",
    "bike",
    "train",
    "doctor",
    "dentist",
    "piano",
    "lesson",
    "book",
    "film",
    "music",
    "coffee",
    "tea",
    "weekend",
    "holiday",
    "birthday",
    "present",
    "recipe",
    "bread",
    "cake",
    "project",
    "deadline",
    "review",
    "code",
    "deploy",
    "server",
    "database",
    "migration",
    "backup",
    "laptop",
    "phone",
    "camera",
    "beach",
    "mountain",
    "museum",
    "concert",
    "ticket",
    "invoice",
]
HAN = "我们明天下午去公园散步然后吃晚饭看电影讨论项目计划旅行酒店机票生日礼物医生牙医钢琴课"
QUERIES = [
    "when is the dentist appointment",
    "what did we decide about the hotel for the trip",
    "database migration deadline",
    "birthday present ideas",
    "明天下午去公园",
    "piano lesson on the weekend",
    "the budget review meeting report",
    "which museum and concert tickets did I buy",
]


def _text(rng: random.Random, number: int) -> str:
    if number % 10 == 9:
        return "".join(rng.choice(HAN) for _ in range(rng.randint(8, 20)))
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))).capitalize() + "."


def _build(home: Path, turns: int) -> list[str]:
    """Sessions of PER_SESSION messages each, their messages.jsonl written whole (the index reads files)."""
    rng = random.Random(200)
    store = SessionStore(Home(home), "main", Durability("never"))
    start = datetime(2025, 3, 1, tzinfo=UTC)
    ids = []
    try:
        for number in range(max(1, turns // PER_SESSION)):
            person = f"p{number % PEOPLE}"
            when = start + timedelta(hours=4 * number)
            meta = store.create_session(
                parse_key(f"agent:main:telegram:default:direct:{person}"), when, person
            )
            store.set_status(meta["sessionId"], "archived", when)
            lines = []
            for idx in range(PER_SESSION):
                role = "user" if idx % 2 == 0 else "assistant"
                record: dict[str, Any] = {
                    "idx": idx,
                    "role": role,
                    "content": _text(rng, idx),
                    "ts": (when + timedelta(minutes=idx)).isoformat(),
                }
                if role == "user":
                    record["userId"] = person
                lines.append(json.dumps(record, ensure_ascii=False))
            (store.session_dir(meta["sessionId"]) / "messages.jsonl").write_text("\n".join(lines) + "\n")
            ids.append(meta["sessionId"])
    finally:
        store.close()
    return ids


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, dict[str, float]]]:
    import numpy as np

    home = tmp_path_factory.mktemp("transcripts-large") / "home"
    built: dict[str, float] = {}
    started = time.perf_counter()
    _build(home, TURNS)
    built["write_files_s"] = time.perf_counter() - started
    index, service = open_index(home)
    started = time.perf_counter()
    built["indexed"] = index.catch_up()
    built["index_s"] = time.perf_counter() - started
    storage = index.storage()
    identity = service.embedder().identity
    rng = np.random.default_rng(1)
    started = time.perf_counter()
    for first in range(1, storage.store_size() + 1, 5000):
        block = rng.normal(size=(5000, identity.dimensions)).astype(np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        rows = range(first, min(first + 5000, storage.store_size() + 1))
        with storage.transaction():
            storage.put_vectors(identity, {rowid: block[n] for n, rowid in enumerate(rows)})
    built["vectors_s"] = time.perf_counter() - started
    try:
        yield index, built
    finally:
        index.close()
        service.close()


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def test_bench_transcript_eval_by_kind(benchmark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = load()
    ids = write_home(tmp_path / "home", data)
    with repaired_index(tmp_path / "home") as index:
        figures = benchmark.pedantic(lambda: evaluate(index, data, ids), rounds=1, iterations=1)
    benchmark.extra_info.update({"figures": figures, "load": _load(), "goal_recall@10": 0.75})
    print(json.dumps(figures, indent=1))
    assert figures["overall"]["recall@10"] >= 0.75


def _latencies(index: Any, where: TurnFilter, rounds: int = 3) -> list[float]:
    out = []
    for _ in range(rounds):
        for query in QUERIES:
            started = time.perf_counter()
            index.search(TranscriptRequest(query, 10, where))
            out.append((time.perf_counter() - started) * 1000)
    return out


def _pct(values: list[float], share: float) -> float:
    return round(sorted(values)[int(share * (len(values) - 1))], 1)


def test_bench_transcript_search_at_scale(benchmark, large: Any) -> None:  # type: ignore[no-untyped-def]
    """Warm latency as the gateway sees it (long_lived: signs and int8 rows in memory) and as a process
    holding the signs alone (int8 rows of each pool read from SQLite), rounds interleaved."""
    from openclaw_cli.memory.transcripts.index import TranscriptIndex

    index, built = large
    gateway = TranscriptIndex(index.home, "main", index.settings, index.embedder, long_lived=True)
    views = {"operator": TurnFilter(), "person": TurnFilter(person="p3")}
    kinds = {"gateway": gateway, "signs_only": index}
    timings: dict[str, list[float]] = {f"{k}_{v}": [] for k in kinds for v in views}
    for searcher in kinds.values():
        _latencies(searcher, TurnFilter(), rounds=1)  # warm: model loaded, vectors read, pages cached
    for _round in range(3):
        for kind, searcher in kinds.items():
            for view, where in views.items():
                timings[f"{kind}_{view}"] += _latencies(searcher, where, rounds=1)
    benchmark.pedantic(lambda: gateway.search(TranscriptRequest(QUERIES[0], 10, TurnFilter())), rounds=5)
    gateway.close()
    info: dict[str, Any] = {
        "turns": built["indexed"],
        "index_rate_per_s": round(built["indexed"] / built["index_s"]),
    }
    for name, values in timings.items():
        info[f"{name}_p50_ms"], info[f"{name}_p95_ms"] = _pct(values, 0.5), _pct(values, 0.95)
    info.update({"load": _load(), **{k: round(v, 1) for k, v in built.items()}})
    benchmark.extra_info.update(info)
    print(json.dumps(info, indent=1))


def test_bench_append_cost_with_and_without_the_index(benchmark, large: Any) -> None:  # type: ignore[no-untyped-def]
    """Per-append latency of SessionStore.append (default durability) with the transcript listener installed
    and without it, in interleaved rounds on the 200k index; and how long the background thread takes to
    index each appended message."""
    index, _ = large
    home = index.home
    plain = SessionStore(home, "main")
    listened = SessionStore(home, "main")
    listened.listeners.append(index.session_changed)
    now = datetime(2026, 3, 1, tzinfo=UTC)
    sessions = {}
    for name, store in (("plain", plain), ("listened", listened)):
        key = f"agent:main:telegram:default:direct:bench-{name}"
        sessions[name] = store.create_session(parse_key(key), now, f"bench-{name}")["sessionId"]
    timings: dict[str, list[float]] = {"plain": [], "listened": []}
    for _round in range(10):
        for name, store in (("plain", plain), ("listened", listened)):
            for n in range(50):
                started = time.perf_counter()
                store.append(
                    sessions[name], "user", f"Round {_round} message {n} about the Lisbon trip.", now
                )
                timings[name].append((time.perf_counter() - started) * 1e6)
    started = time.perf_counter()
    flushed = index.flush() + 0  # whatever the background thread has not indexed yet
    drained_ms = (time.perf_counter() - started) * 1000
    one = []
    for n in range(50):
        listened.append(sessions["listened"], "assistant", f"Reply {n}: the flat in Alfama is booked.", now)
        started = time.perf_counter()
        index.index_session(sessions["listened"])
        one.append((time.perf_counter() - started) * 1000)
    benchmark.pedantic(
        lambda: listened.append(sessions["listened"], "user", "one more message about Lisbon", now), rounds=50
    )
    plain.close()
    listened.close()
    info = {
        "append_p50_us_without_index": round(statistics.median(timings["plain"]), 1),
        "append_p50_us_with_index": round(statistics.median(timings["listened"]), 1),
        "append_mean_us_without_index": round(statistics.fmean(timings["plain"]), 1),
        "append_mean_us_with_index": round(statistics.fmean(timings["listened"]), 1),
        "background_index_one_message_p50_ms": round(statistics.median(one), 2),
        "left_to_flush": flushed,
        "flush_ms": round(drained_ms, 1),
        "load": _load(),
    }
    benchmark.extra_info.update(info)
    print(json.dumps(info, indent=1))


def test_bench_transcript_search_cold_index(benchmark, large: Any) -> None:  # type: ignore[no-untyped-def]
    """One search on a freshly opened index (what a one-shot `session search` pays besides start-up and
    the model load): the catch-up reads every session's progress, and the vectors are read into memory."""
    from openclaw_cli.memory.transcripts.index import TranscriptIndex

    index, _ = large
    times = []
    for query in QUERIES[:4]:
        fresh = TranscriptIndex(index.home, "main", index.settings, index.embedder)
        started = time.perf_counter()
        fresh.search(TranscriptRequest(query, 10, TurnFilter()))
        times.append((time.perf_counter() - started) * 1000)
        fresh.close()
    benchmark.pedantic(lambda: None, rounds=1)
    info = {"cold_search_ms": [round(t) for t in times], "load": _load()}
    benchmark.extra_info.update(info)
    print(json.dumps(info, indent=1))


def test_bench_sign_pool_recall_at_scale(benchmark, large: Any) -> None:  # type: ignore[no-untyped-def]
    """Recall of the vector leg's top 10 and top 100 (sign pool, then exact int8 scores) against the exact
    int8 scan of every row, for the benchmark's queries and random unit queries, per pool size. The rows
    here are random unit vectors: the hardest case for a sign prefilter (no neighbour stands out), so
    these figures are a floor; the choice of SIGN_POOL is argued in transcripts/vectors.py."""
    import numpy as np

    from openclaw_cli.memory.transcripts.vectors import TurnVectors

    index, _ = large
    storage = index.storage()
    embedder = index.embedder()
    queries = [embedder.embed_query(q).vector for q in QUERIES]
    rng = np.random.default_rng(5)
    for row in rng.normal(size=(8, len(queries[0]))).astype(np.float32):
        queries.append(row / np.linalg.norm(row))
    _, rows, _, blob = storage.vectors_after(0, with_int8=True)
    matrix = np.frombuffer(blob, dtype=np.int8).reshape(len(rows), -1)
    exact = []
    for query in queries:
        scores = np.concatenate(
            [matrix[i : i + 8192].astype(np.float32) @ query for i in range(0, len(rows), 8192)]
        )
        exact.append(rows[np.argsort(-scores, kind="stable")[:100]])
    vectors = TurnVectors(resident=True)
    vectors.refresh(storage)
    info: dict[str, Any] = {"rows": len(rows), "queries": len(queries), "load": _load()}
    for pool in (1024, 2048, 4096, 8192):
        for k in (10, 100):
            found = [{r for r, _ in vectors.knn(storage, q, k, pool=pool)} for q in queries]
            recall = [len(set(truth[:k].tolist()) & got) / k for truth, got in zip(exact, found, strict=True)]
            info[f"pool{pool}_recall@{k}"] = round(statistics.fmean(recall), 3)
    benchmark.pedantic(lambda: vectors.knn(storage, queries[0], 100), rounds=5)
    benchmark.extra_info.update(info)
    print(json.dumps(info, indent=1))
