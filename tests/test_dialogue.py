"""Where a memory was said (dialogue.place_of) and what its neighbours get from it (lent_relevance)."""

from __future__ import annotations

from typing import Any

import pytest

from openclaw_cli.memory.search.context_stages.dialogue import Place, Shares, lent_relevance, place_of

SHARES = Shares()


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ({"sessionId": "s-1", "messages": [4]}, Place("s-1", 4, 4)),
        ('{"sessionId": "s-1", "messages": [7, 3, 5]}', Place("s-1", 3, 7)),
        (None, None),
        ("not json", None),
        ('["a list"]', None),
        ({"path": "MEMORY.md", "startLine": 1}, None),  # a workspace note, not a conversation
        ({"sessionId": "s-1", "messages": []}, None),
        ({"sessionId": "s-1", "messages": ["4"]}, None),
        ({"sessionId": 12, "messages": [4]}, None),
    ],
)
def test_place_of_reads_only_a_session_and_message_indexes(source: Any, expected: Place | None) -> None:
    assert place_of(source) == expected


def _session(*indexes: int) -> list[tuple[int, Place]]:
    return [(100 + i, Place("s", i, i)) for i in indexes]


def test_after_a_question_the_answer_gets_the_largest_share() -> None:
    lent = lent_relevance(Place("s", 5, 5), 0.8, True, _session(3, 4, 5, 6, 7, 8), SHARES)
    assert lent == {
        103: pytest.approx(SHARES.before * 0.8),
        104: pytest.approx(SHARES.before * 0.8),
        106: pytest.approx(SHARES.after_question * 0.8),
        107: pytest.approx(SHARES.after_question * 0.8),
    }
    assert 105 not in lent and 108 not in lent  # itself, and three messages away


def test_after_a_statement_the_next_memories_get_less() -> None:
    lent = lent_relevance(Place("s", 5, 5), 1.0, False, _session(6), SHARES)
    assert lent == {106: pytest.approx(SHARES.after_statement)}
    assert SHARES.after_statement < SHARES.after_question  # a reply to a statement is often just "OK"


def test_a_memory_spanning_messages_lends_from_its_ends() -> None:
    # Extracted from messages 3-6: 7 and 8 follow it, 1 and 2 precede it, 4 overlaps and gets nothing.
    lent = lent_relevance(Place("s", 3, 6), 1.0, False, _session(1, 2, 4, 7, 8, 9), SHARES)
    assert set(lent) == {101, 102, 107, 108}
