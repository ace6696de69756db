"""The conversational eval of transcript search holds its floor: recall@10 on turn-level evidence of at
least the issue's goal (0.75) overall, in English and Chinese (benchmarks/test_bench_transcripts.py reports
every figure per kind)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from openclaw_cli.memory.store.transcripts import TurnFilter
from openclaw_cli.memory.transcripts.search import TranscriptRequest
from tests.transcript_eval import evaluate, load, write_home
from tests.transcript_helpers import repaired_index


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, dict[str, dict[str, float]]]]:
    home = tmp_path_factory.mktemp("transcript-eval") / "home"
    data = load()
    ids = write_home(home, data)
    with repaired_index(home) as index:
        yield index, evaluate(index, data, ids)


def test_every_question_names_evidence_that_exists() -> None:
    data = load()
    turns = {session["id"]: len(session["turns"]) for session in data["sessions"]}
    kinds = {question["kind"] for question in data["questions"]}
    assert kinds == {"single", "across", "when", "cross"}
    for question in data["questions"]:
        for group in question["evidence"]:
            assert all(0 <= turn < turns[session] for session, turn in group), question
        if question["kind"] == "across":
            assert len({session for group in question["evidence"] for session, _ in group}) >= 2


def test_recall_at_10_meets_the_goal(scored: Any) -> None:
    _, figures = scored
    assert figures["overall"]["recall@10"] >= 0.75, figures
    assert figures["overall"]["mrr"] >= 0.55, figures


def test_each_kind_finds_most_of_its_evidence(scored: Any) -> None:
    _, figures = scored
    assert all(figures[kind]["recall@10"] >= 0.6 for kind in ("single", "across", "when", "cross")), figures


def test_nonsense_finds_nothing_among_the_eval_sessions(scored: Any) -> None:
    index, _ = scored
    for query in ("xyzzy plugh frobnicate", "qwzx vbnm", "嘎嘣脆咔嚓"):
        assert index.search(TranscriptRequest(query, 10, TurnFilter())).hits == [], query
