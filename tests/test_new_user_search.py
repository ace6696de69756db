"""What a new user found wrong on a small store (issue 22), each fixed at its cause: a neighbour in the
conversation shown for its share alone, meaning alone below the unmatched floor, and a topic query
scored down for naming nobody. Real databases and the default local models."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.search.pipeline import SearchRequest
from openclaw_cli.memory.service import MemoryService
from tests.memory_helpers import service_for

# One conversation, turn by turn, as extraction stores it: each memory keeps where it was said.
CONVERSATION = [
    "User's name is Sam",
    "Prefers dark mode in every editor",
    "I'm allergic to peanuts",
    "I use VS Code with the Vim plugin",
    "我女儿在学钢琴",
    "Lives in Shanghai",
    "Assistant: What is your tailnet called?",
    "User: Sure, it'll be linhome.",
    "我每天跑步五公里",
]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryService]:
    svc = service_for(Path(tmp_path_factory.mktemp("newuser")))
    for index, text in enumerate(CONVERSATION, start=1):
        svc.add(NewMemory(l0=text, source={"sessionId": "s-1", "messages": [index]}))
    yield svc
    svc.close()


def _scores(service: MemoryService, query: str) -> dict[str, float]:
    return {hit.record.l0: hit.candidate.score for hit in service.search(SearchRequest(query)).hits}


def test_dark_mode_does_not_bring_the_turn_said_before_it(service: MemoryService) -> None:
    """ "User's name is Sam" was said just before the dark-mode memory: a 0.3 share of its relevance
    made it a result at 0.30, although it says nothing about dark mode."""
    found = _scores(service, "dark mode")
    assert list(found) == ["Prefers dark mode in every editor"]


def test_an_editor_question_in_chinese_does_not_bring_peanuts(service: MemoryService) -> None:
    """No memory holds a word of 我用什么编辑器: meaning alone must reach the unmatched floor, for every
    result (peanuts had 0.47, all of it the cross-language bonus on an unrelated sentence)."""
    found = _scores(service, "我用什么编辑器")
    assert "I'm allergic to peanuts" not in found and "User's name is Sam" not in found
    assert "I use VS Code with the Vim plugin" in found


def test_an_exact_match_is_not_scored_down_for_naming_the_daughter(service: MemoryService) -> None:
    """钢琴 names nobody: it asks about a topic, and the daughter's piano is that topic (it scored 0.30
    as a memory about someone the query does not name)."""
    result = service.search(SearchRequest("钢琴", explain=True))
    first = result.hits[0]
    assert first.record.l0 == "我女儿在学钢琴"
    assert first.candidate.score > 0.9 and "otherPerson" not in first.candidate.context


def test_the_answer_to_a_question_still_joins_for_its_share(service: MemoryService) -> None:
    """The one neighbour that joins without relevance of its own: what was said after a hit that asks."""
    result = service.search(SearchRequest("what is the tailnet called", explain=True))
    answer = next(hit for hit in result.hits if hit.record.l0 == "User: Sure, it'll be linhome.")
    assert answer.candidate.context["dialogue"] > 0
