"""The mixed eval of `memory search --source memory,sessions` (memory/search/sources.py): one home holding the
memory eval set (fixtures/eval/*.jsonl, every record) and the conversational transcript eval (Maya's sessions
plus distractor sessions, tests/transcript_eval.py). Each question has its answer in ONE source: the memory
queries (queries.jsonl) in a memory, the transcript questions (transcripts.json) in turns. Both legs answer
each question once (as the operator: every memory, every session); merging those payloads with a given turn
weight is then pure arithmetic, so a sweep of weights costs nothing more.

The score of a weight is the macro MRR: the mean of the memory queries' MRR and the transcript questions' MRR
(there are ~8 memory queries for each transcript question; a plain mean would let them decide alone). A hit
counts when it is of the right source and is the answer (an expected memory id; an evidence turn).

Halves: memory queries by the eval set's own split (tests/evalset.py, split_halves); transcript questions by
a hash of their text (a choice made before any search ran).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openclaw_cli.core.paths import Home
from openclaw_cli.memory.search.result import SearchRequest
from openclaw_cli.memory.search.sources import merge
from openclaw_cli.memory.store.transcripts import TurnFilter
from openclaw_cli.memory.transcripts.index import TranscriptIndex
from openclaw_cli.memory.transcripts.search import TranscriptRequest
from tests import evalset, transcript_eval

BOTH = ("memory", "sessions")
WEIGHTS = tuple(round(0.5 + 0.05 * step, 2) for step in range(21))  # 0.50 .. 1.50


@dataclass
class Question:
    query: str
    source: str  # where its answer is: memory or sessions
    answers: frozenset[Any]  # memory ids, or (sessionId, index) turns
    half: str
    payloads: dict[str, Any]


def build(home: Path) -> tuple[list[Question], Any, Any]:
    """The home, both indexes, and every question with both legs' payloads; (questions, index, service)."""
    data = transcript_eval.load()
    ids = transcript_eval.write_home(home, data)
    service = evalset.build_service(home)
    index = TranscriptIndex(Home(home), "main", service.settings, service.embedder)
    index.repair()
    searcher = evalset.searcher_for(service, service.settings.search)
    halves = evalset.split_halves()
    questions: list[Question] = []

    def legs(query: str) -> dict[str, Any]:
        memory_request = SearchRequest(query=query, k=10)
        turn_request = TranscriptRequest(query, 10, TurnFilter())
        return {
            "memory": searcher.search(memory_request, evalset.NOW).to_dict(memory_request),
            "sessions": index.search(turn_request).to_dict(turn_request),
        }

    for item in evalset.load_queries(("queries",)):
        if item["expected"]:
            half = halves[evalset.query_key(item)]
            questions.append(
                Question(item["query"], "memory", frozenset(item["expected"]), half, legs(item["query"]))
            )
    for item in data["questions"]:
        turns = frozenset((ids[session], turn) for group in item["evidence"] for session, turn in group)
        half = evalset.HALVES[hashlib.sha256(item["q"].encode("utf-8")).digest()[0] % 2]
        questions.append(Question(item["q"], "sessions", turns, half, legs(item["q"])))
    return questions, index, service


def reciprocal_rank(question: Question, weight: float) -> float:
    merged = merge(tuple(question.payloads), question.payloads, 10, turn_weight=weight)
    for rank, hit in enumerate(merged["results"], start=1):
        if hit["source"] != question.source:
            continue
        key = hit["id"] if hit["source"] == "memory" else (hit["sessionId"], hit["index"])
        if key in question.answers:
            return 1.0 / rank
    return 0.0


def scores(questions: list[Question], weight: float, half: str | None = None) -> dict[str, float]:
    """MRR of the memory queries, of the transcript questions, and their mean, on one half (None: all)."""
    out: dict[str, float] = {}
    for source in BOTH:
        chosen = [q for q in questions if q.source == source and (half is None or q.half == half)]
        out[source] = round(sum(reciprocal_rank(q, weight) for q in chosen) / max(1, len(chosen)), 4)
        out[f"{source}Questions"] = len(chosen)
    out["macro"] = round((out["memory"] + out["sessions"]) / 2, 4)
    return out


def tune(questions: list[Question]) -> tuple[float, dict[str, Any]]:
    """The weight with the best macro MRR on the tuning half (ties: the one nearest 1), and the figures of
    every weight on both halves."""
    table = {w: {h: scores(questions, w, h) for h in evalset.HALVES} for w in WEIGHTS}
    best = max(WEIGHTS, key=lambda w: (table[w]["tuning"]["macro"], -abs(w - 1.0)))
    return best, {str(w): row for w, row in table.items()}


def alone(questions: list[Question], half: str | None = None) -> dict[str, float]:
    """Each kind of question's MRR from its own leg alone (no merge): what merging costs each."""
    out: dict[str, float] = {}
    for source in BOTH:
        chosen = [q for q in questions if q.source == source and (half is None or q.half == half)]
        total = sum(
            reciprocal_rank(Question(q.query, q.source, q.answers, q.half, {source: q.payloads[source]}), 1.0)
            for q in chosen
        )
        out[source] = round(total / max(1, len(chosen)), 4)
    return out
