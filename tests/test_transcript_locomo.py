"""The LoCoMo-like eval of transcript search (tests/locomo_eval.py) holds its floor on the held-out half, and
the speaker cue it was tuned with behaves as it says: a sender's name in a question is searched as who said
it, and never raises a score (transcripts/speakers.py). benchmarks/test_bench_locomo_like.py prints
every figure per kind on both halves."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from openclaw_cli.memory.store.transcripts import Turn, TurnFilter
from openclaw_cli.memory.transcripts.search import TranscriptRequest
from openclaw_cli.memory.transcripts.speakers import (
    lower_cosines,
    name_free_share,
    plain_terms,
    speaker_cue,
    weigh,
)
from tests.locomo_eval import FIXTURE, load, write_home
from tests.transcript_eval import evaluate
from tests.transcript_helpers import repaired_index

# Measured on the held-out half: recall@10 0.622 with the speaker cue, 0.349 without it (the tuning half:
# 0.720 and 0.349). Below the goal of 0.75, so this holds what was measured, with a margin for a
# small change of the embedder's numbers, not the goal.
HELD_OUT_FLOOR = 0.58


@pytest.fixture(scope="module")
def held_out(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[Any, dict[str, Any], dict[str, str]]]:
    home = tmp_path_factory.mktemp("locomo-like") / "home"
    data = load("heldout")
    ids = write_home(home, data)
    with repaired_index(home) as index:
        yield index, data, ids


def test_the_data_is_split_by_conversation_and_names_real_turns() -> None:
    import json

    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    turns = {s["id"]: len(s["turns"]) for s in data["sessions"]}
    parts: dict[str, set[str]] = {}
    for session in data["sessions"]:
        parts.setdefault(session["conversation"], set()).add(session["part"])
    assert all(len(p) == 1 for p in parts.values()), parts
    assert len(data["questions"]) >= 200 and len(parts) >= 4
    for question in data["questions"]:
        for group in question["evidence"]:
            assert all(0 <= turn < turns[session] for session, turn in group), question
        if question["kind"] == "multi":
            assert len({s for group in question["evidence"] for s, _ in group}) >= 2, question


def test_held_out_recall_at_10_holds_its_floor(held_out: Any) -> None:
    figures = evaluate(*held_out)
    assert figures["overall"]["recall@10"] >= HELD_OUT_FLOOR, figures


def test_a_named_speaker_finds_their_own_words_not_turns_addressed_to_them(held_out: Any) -> None:
    index, data, ids = held_out
    hits = index.search(
        TranscriptRequest("What pastry has Marcus been practising on weekends?", 10, TurnFilter())
    ).hits
    assert hits and hits[0].turn.sender == "Marcus", [h.turn.text for h in hits[:3]]
    assert "croissants" in " ".join(h.turn.text for h in hits[:3])


def test_nonsense_with_a_name_still_finds_nothing(held_out: Any) -> None:
    index, _, _ = held_out
    assert index.search(TranscriptRequest("xyzzy plugh", 10, TurnFilter())).hits == []
    assert index.search(TranscriptRequest("Hannah xyzzy plugh frobnicate", 10, TurnFilter())).hits == []


def test_speaker_cue_takes_names_out_and_leaves_common_words() -> None:
    cue = speaker_cue("When did Jonas's dog run away from Priya?", ["Jonas", "Priya", "Will"])
    assert cue.names == {"jonas", "priya"} and cue.query == "When did dog run away from ?"
    assert speaker_cue("Will it rain?", ["Will"]).names == frozenset()  # a stopword is never a name
    assert speaker_cue("陈浩的咖啡店叫什么名字？", ["陈浩"]).query == "的咖啡店叫什么名字？"
    assert speaker_cue("Jonas", ["Jonas"]).query == "Jonas"  # nothing else to search: as typed
    assert speaker_cue("Where is Priya Sharma?", ["Priya Sharma"]).names == {"priya sharma"}


@dataclass
class _Cand:
    rowid: int
    relevance: float


def _turn(session: str, index: int, sender: str | None, text: str = "x") -> tuple[Turn, str]:
    return Turn(session, "agent:main:main", "message", index, "user", sender, None, text), "en"


def test_weigh_prefers_the_named_speaker_then_their_sessions() -> None:
    turns = {1: _turn("a", 0, "Jonas"), 2: _turn("a", 1, "Priya"), 3: _turn("b", 0, "Lin")}
    cands = [_Cand(1, 1.0), _Cand(2, 1.0), _Cand(3, 1.0)]
    weigh(cands, turns, frozenset({"jonas"}))
    assert [round(c.relevance, 3) for c in cands] == [1.0, 0.8, 0.2]


def test_a_name_stops_being_credited_but_never_raises_a_score() -> None:
    cue = speaker_cue("What race is Jonas preparing for?", ["Jonas"])
    terms = ["race", "jona", "prepar"]
    plain = plain_terms(terms, cue)
    assert plain == ["race", "prepar"]
    # Over the plain terms a turn holding both scores 1.0 x 0.5 (their share times the strongest's weight);
    # over all three, holding no name, (1.0 / 2.0) x 1.0: the same 0.5.
    weights = {"race": 0.5, "jona": 1.0, "prepar": 0.5}
    assert name_free_share(terms, plain, weights) == 1.0
    # With a name as common as the rest, the name's weight is missing from the share: 2/3 of it.
    assert name_free_share(terms, plain, dict.fromkeys(terms, 0.5)) == 2 / 3
    assert name_free_share(terms, terms, weights) == 1.0
    assert lower_cosines({1: (0.4, 0.7)}, {1: (0.6, 0.5)}) == {1: (0.4, 0.5)}
