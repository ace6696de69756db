"""The retrieval eval set (fixtures/eval/) loaded into a real memory database, and its metrics.

Used by benchmarks/test_bench_eval.py (recall@5, recall@10 and MRR per mode) and by
benchmarks/tune_search.py (the sweep that chose the search defaults).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from openclaw_cli.config.loading import SearchSettings, Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.embedding.onnx_embedder import Embedder
from openclaw_cli.memory.search.pipeline import HybridSearcher, SearchRequest
from openclaw_cli.memory.service import MemoryService
from openclaw_cli.memory.store.records import MemoryRecord
from openclaw_cli.memory.text.stopwords import CHINESE_STOPWORDS, ENGLISH_STOPWORDS
from tests.memory_helpers import with_shared_models

EVAL_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "eval"
CREATED = datetime(2026, 1, 15, tzinfo=UTC)
NOW = datetime(2026, 1, 16, tzinfo=UTC)


def load_jsonl(name: str) -> list[dict[str, Any]]:
    with (EVAL_DIR / name).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


MEMORY_FILES = ("memories.jsonl", "distractors.jsonl", "conversations.jsonl")
QUERY_FILES = {"queries": "queries.jsonl", "conversation": "conversation_queries.jsonl"}


Half = Literal["tuning", "held-out"]
HALVES: tuple[Half, ...] = ("tuning", "held-out")
# Chosen once, among split-0: ... split-199:, as the salt whose halves are closest in size within each
# query kind (a choice made on the counts alone, before any search ran on either half).
SPLIT_SALT = "split-188:"


def load_queries(
    parts: tuple[str, ...] = ("queries", "conversation"), half: Half | None = None
) -> list[dict[str, Any]]:
    """The eval questions: `queries` (queries.jsonl) and/or `conversation` (conversation_queries.jsonl),
    all of them or one half of the split (fixtures/eval/README.md, "Tuning and held-out halves")."""
    items = [item for part in parts for item in load_jsonl(QUERY_FILES[part])]
    if half is None:
        return items
    halves = split_halves()
    return [item for item in items if halves[query_key(item)] == half]


def query_key(item: dict[str, Any]) -> str:
    return f"{item['userId']}\x00{item['query']}"


def _answer_group(record_id: str) -> str:
    """A dialogue turn stands for its whole conversation (c-01-3-02 -> conversation 01)."""
    return f"conversation-{record_id.split('-')[1]}" if record_id.startswith("c-") else record_id


TEMPLATE_OVERLAP = 0.25  # shared content words over all content words of two L0s


def _content_words(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9#@_.-]+|[\u4e00-\u9fff]", text.lower())
    return {w.strip(".") for w in words} - ENGLISH_STOPWORDS - CHINESE_STOPWORDS - {""}


def _identifiers(words: set[str]) -> set[str]:
    """Version numbers, tickets, issues and handles (v2.3.1, jira-4521, #342, @alice_dev), not years."""
    return {w for w in words if w[:1] in "#@" or (any(c.isdigit() for c in w) and not w.isdigit())}


def template_pairs() -> list[tuple[str, str]]:
    """Memories written from one template, which tuning on one would teach about the other: most content
    words shared ("Lin's birthday is March 14." / "Sam's birthday is August 2."), or one identifier
    ("Opened PR #342 ..." / "Sam opened PR #342 ..."). They go to the same half."""
    memories = sorted((m["id"], _content_words(m["l0"])) for m in load_jsonl("memories.jsonl"))
    return [
        (a, b)
        for (a, ours), (b, theirs) in itertools.combinations(memories, 2)
        if len(ours & theirs) >= TEMPLATE_OVERLAP * len(ours | theirs)
        or _identifiers(ours) & _identifiers(theirs)
    ]


def split_halves() -> dict[str, Half]:
    """Every query's half. Queries that share an answer are one group, and a dialogue turn stands for its
    whole conversation, so twin questions (the same question in English and Chinese), questions about
    near-duplicate memories (which are listed together as answers) and all questions about one
    conversation fall in the same half; so do memories written from one template (template_pairs). A
    group is named by its smallest member and goes to the half that a hash of its name picks; a query
    without answers (nonsense) is its own group."""
    items = load_queries()
    parent: dict[str, str] = {}

    def find(node: str) -> str:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for item in items:
        groups = [_answer_group(rid) for rid in item["expected"]] or [f"query:{query_key(item)}"]
        find(groups[0])
        for other in groups[1:]:
            parent[find(other)] = find(groups[0])
    for one, other in template_pairs():
        parent[find(other)] = find(one)
    names: dict[str, str] = {}
    for node in list(parent):
        root = find(node)
        names[root] = min(names.get(root, node), node)
    halves: dict[str, Half] = {}
    for item in items:
        first = _answer_group(item["expected"][0]) if item["expected"] else f"query:{query_key(item)}"
        digest = hashlib.sha256((SPLIT_SALT + names[find(first)]).encode("utf-8")).digest()
        halves[query_key(item)] = HALVES[digest[0] % 2]
    return halves


def build_service(
    home_dir: Path, embedding_model: str | None = None, share: Callable[[Embedder], Embedder] | None = None
) -> MemoryService:
    """A memory database holding every eval record (memories, distractors, dialogue turns), written at once,
    with the default embedder or the packaged model named. `share` wraps the embedder the service uses for
    everything (tests/eval_vectors.py: vectors computed once per run)."""
    settings = with_shared_models(Settings())
    if embedding_model is not None:
        embedding = settings.memory.embedding.model_copy(update={"model": embedding_model})
        settings = settings.model_copy(
            update={"memory": settings.memory.model_copy(update={"embedding": embedding})}
        )
    service = MemoryService(Home(home_dir), "main", settings.memory)
    if share is not None:
        shared = share(service.embedder())
        service.embedder = lambda: shared  # type: ignore[method-assign]
    service.add_many([eval_record(service, m) for name in MEMORY_FILES for m in load_jsonl(name)])
    return service


def eval_record(service: MemoryService, memory: dict[str, Any]) -> MemoryRecord:
    """One eval fixture line (l0, category, scope, userId, l1, id) as the record the service stores."""
    return service.build_record(
        NewMemory(
            l0=memory["l0"],
            category=memory["category"],
            scope=memory["scope"],
            user_id=memory["userId"],
            l1=memory.get("l1") or None,
            record_id=memory["id"],
            created_at=CREATED,
            source=_turn_source(memory),
        )
    )


def _turn_source(memory: dict[str, Any]) -> dict[str, Any] | None:
    """A dialogue turn keeps where it was said, as extraction records it: session id, message index."""
    if "session" not in memory:
        return None
    return {"sessionId": memory["session"], "messages": [memory["turn"]]}


@dataclass
class Metrics:
    recall_at_5: float
    recall_at_10: float
    mrr: float
    queries: int

    def as_dict(self) -> dict[str, float]:
        return {
            "recall@5": round(self.recall_at_5, 4),
            "recall@10": round(self.recall_at_10, 4),
            "mrr": round(self.mrr, 4),
            "queries": self.queries,
        }


def _reranker(settings: SearchSettings) -> Any:
    from openclaw_cli.memory.search.rerank import create_reranker

    return create_reranker(settings.rerank) if settings.rerank.provider != "none" else None


def evidence_pieces(item: dict[str, Any]) -> list[set[str]]:
    """The pieces of evidence a query needs, each a set of records that state it just as directly (a
    dialogue turn and the assistant's "Noted: ..." repeating it). Without `evidence`, every expected
    record is a piece of its own."""
    return [set(piece) for piece in item.get("evidence") or [[rid] for rid in item["expected"]]]


def evidence_recall(item: dict[str, Any], found: Sequence[str]) -> float:
    """The share of the query's pieces of evidence that `found` holds (one record of a piece suffices)."""
    pieces = evidence_pieces(item)
    return sum(1 for piece in pieces if piece & set(found)) / len(pieces)


def searcher_for(
    service: MemoryService, settings: SearchSettings, disabled: frozenset[str] = frozenset()
) -> HybridSearcher:
    """The real searcher over the eval store, warm, with the named stages left out."""
    store = next(iter(service.existing_stores()))
    return HybridSearcher(
        store, settings, service.embedder(), _reranker(settings), warm=True, disabled=disabled
    )


def rankings(
    service: MemoryService,
    settings: SearchSettings,
    mode: str,
    items: list[dict[str, Any]],
    disabled: frozenset[str] = frozenset(),
) -> list[list[str]]:
    """The ids of each query's top 10, as the real searcher returns them."""
    searcher = searcher_for(service, settings, disabled)
    found = []
    for item in items:
        request = SearchRequest(query=item["query"], k=10, user_id=item["userId"], mode=mode)  # type: ignore[arg-type]
        found.append([hit.record.id for hit in searcher.search(request, NOW).hits])
    return found


def reciprocal_rank(item: dict[str, Any], found: Sequence[str]) -> float:
    """1 / the rank of the first expected record in `found` (0 when none is there)."""
    expected = set(item["expected"])
    return next((1.0 / rank for rank, rid in enumerate(found, start=1) if rid in expected), 0.0)


def evaluate(
    service: MemoryService,
    settings: SearchSettings,
    mode: str,
    queries: list[dict[str, Any]] | None = None,
    disabled: frozenset[str] = frozenset(),
) -> Metrics:
    items = queries if queries is not None else load_jsonl("queries.jsonl")
    items = [item for item in items if item["expected"]]  # nonsense queries are scored by evaluate_by_kind
    r5 = r10 = rr = 0.0
    for item, ids in zip(items, rankings(service, settings, mode, items, disabled), strict=True):
        r5 += evidence_recall(item, ids[:5])
        r10 += evidence_recall(item, ids[:10])
        rr += reciprocal_rank(item, ids)
    n = len(items) or 1
    return Metrics(r5 / n, r10 / n, rr / n, len(items))


def evaluate_by_kind(
    service: MemoryService,
    settings: SearchSettings,
    mode: str,
    queries: list[dict[str, Any]] | None = None,
    disabled: frozenset[str] = frozenset(),
) -> dict[str, dict[str, float]]:
    """Metrics per query kind plus `overall` (every query with an answer).

    `nonsense` queries expect nothing: their only metric is `empty`, the share of them that return no hit
    at all. They are kept out of `overall` so that recall and MRR stay about finding answers.
    """
    items = queries if queries is not None else load_queries()
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        by_kind.setdefault(item["kind"], []).append(item)
    table: dict[str, dict[str, float]] = {}
    for kind, group in sorted(by_kind.items()):
        if kind == "nonsense":
            searcher = searcher_for(service, settings, disabled)
            empty = sum(
                not searcher.search(
                    SearchRequest(query=q["query"], k=10, user_id=q["userId"], mode=mode),  # type: ignore[arg-type]
                    NOW,
                ).hits
                for q in group
            )
            table[kind] = {"empty": round(empty / len(group), 4), "queries": len(group)}
        else:
            table[kind] = evaluate(service, settings, mode, group, disabled).as_dict()
    answered = [q for q in items if q["expected"]]
    table["overall"] = evaluate(service, settings, mode, answered, disabled).as_dict()
    return table
