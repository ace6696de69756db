"""Bad model replies and failures: each case of the issue, through real HTTP to the fake server."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.core.errors import StoreError
from openclaw_cli.memory.extraction.prompt import MAX_CHUNK_CHARS, SYSTEM_PROMPT
from openclaw_cli.memory.extraction.state import read_state
from tests import fake_openai as fake_server
from tests.extract_support import World, chat_requests, memory, reply, settings_for, transcript_of

fake_openai = fake_server.fake_openai


def make_world(tmp_path: Path, url: str, **llm: Any) -> World:
    return World(tmp_path / "home", settings_for(url, **llm))


@pytest.fixture
def world(tmp_path: Path, fake_openai):  # type: ignore[no-untyped-def]
    w = make_world(tmp_path, fake_openai.url)
    yield w
    w.close()


def test_a_prose_reply_gets_one_corrective_retry_then_patterns(world: World, fake_openai) -> None:  # type: ignore[no-untyped-def]
    world.say("I prefer window seats.")
    fake_openai.script_chat("Sure! The user likes window seats.", "The user prefers window seats, I think.")
    report = world.extraction.run(world.session_id)

    requests = chat_requests(fake_openai)
    assert len(requests) == 2  # one retry, not more
    assert "not valid" in requests[1]["messages"][-1]["content"]
    assert report.method == "patterns" and report.model_failed
    assert report.model_error and "no JSON object" in report.model_error
    assert [r.l0 for r in world.records()] == ["User prefers window seats"]


def test_a_prose_reply_followed_by_valid_json_uses_the_model(world: World, fake_openai) -> None:  # type: ignore[no-untyped-def]
    world.say("I prefer window seats.")
    fake_openai.script_chat(
        "Here you go!", reply(memory("preference", "User prefers window seats on flights", [0]))
    )
    report = world.extraction.run(world.session_id)
    assert report.method == "model" and not report.model_failed
    assert [r.l0 for r in world.records()] == ["User prefers window seats on flights"]


def test_truncated_json_falls_back_to_patterns(world: World, fake_openai) -> None:  # type: ignore[no-untyped-def]
    world.say("我叫林伟。")
    cut = '{"memories": [{"category": "profile", "l0": "用户叫林'
    fake_openai.script_chat(cut, cut)
    report = world.extraction.run(world.session_id)
    assert report.method == "patterns" and report.model_error
    assert [r.l0 for r in world.records()] == ["用户叫林伟"]


def test_an_unknown_category_is_skipped_and_reported(world: World, fake_openai) -> None:  # type: ignore[no-untyped-def]
    world.say("I collect stamps and I prefer aisle seats.")
    fake_openai.script_chat(
        reply(
            memory("hobby", "User collects stamps", [0]),
            memory("Preferences", "User prefers aisle seats", [0]),  # a plural the model meant well
        )
    )
    report = world.extraction.run(world.session_id)
    actions = [(o.action, o.candidate.category, o.reason) for o in report.outcomes]
    assert ("skipped", "hobby", "unknown category 'hobby'") in actions
    assert [(a, c) for a, c, _ in actions if a == "added"] == [("added", "preference")]
    assert [r.l0 for r in world.records()] == ["User prefers aisle seats"]


def test_an_empty_list_writes_nothing_and_moves_the_checkpoint(world: World, fake_openai) -> None:  # type: ignore[no-untyped-def]
    world.say("How are you?")
    fake_openai.script_chat(reply())
    report = world.extraction.run(world.session_id)
    assert report.method == "model" and report.outcomes == [] and world.records() == []
    assert read_state(world.store.session_dir(world.session_id)).checkpoint == 1


def test_message_ids_the_model_made_up_are_ignored_and_reported(world: World, fake_openai) -> None:  # type: ignore[no-untyped-def]
    world.say("I moved to Berlin last month.")
    fake_openai.script_chat(reply(memory("event", "User moved to Berlin", [0, 99, -3])))
    report = world.extraction.run(world.session_id)
    assert any("made up" in note and "99" in note and "-3" in note for note in report.notes)
    [record] = world.records()
    assert record.source["messages"] == [0]  # type: ignore[index]
    assert record.l2 == "[2026-11-30T09:01:00.000Z] user: I moved to Berlin last month."


def test_a_timeout_is_retried_then_patterns_are_used(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    world = make_world(tmp_path, fake_openai.url, retries=1, timeout=0.5)
    try:
        world.say("I love jazz.")

        def slow(body: dict[str, Any]) -> str:
            time.sleep(2)
            return reply()

        fake_openai.respond_with(slow)
        start = time.monotonic()
        report = world.extraction.run(world.session_id)
        took = time.monotonic() - start
        assert len(chat_requests(fake_openai)) == 2  # the first try and one retry
        assert report.model_error and "after 2 attempts" in report.model_error
        assert report.method == "patterns" and [r.l0 for r in world.records()] == ["User loves jazz"]
        assert took < 5, took
    finally:
        world.close()


@pytest.mark.parametrize("status", [429, 500])
def test_http_429_and_500_are_retried_with_backoff(tmp_path: Path, fake_openai, status: int) -> None:  # type: ignore[no-untyped-def]
    world = make_world(tmp_path, fake_openai.url, retries=2)
    try:
        world.say("I live in Lisbon.")
        fake_openai.fail_next(2, status=status)
        fake_openai.script_chat(reply(memory("profile", "User lives in Lisbon", [0], attribute="city")))
        report = world.extraction.run(world.session_id)
        assert len(chat_requests(fake_openai)) == 3 and report.method == "model"
        assert [r.l0 for r in world.records()] == ["User lives in Lisbon"]
    finally:
        world.close()


def test_a_failing_model_is_reported_once_not_once_per_message(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    world = make_world(tmp_path, fake_openai.url, retries=0)
    try:
        for text in ("I like tea.", "I like cake.", "I like rain."):
            world.say(text)
        fake_openai.fail_next(1, status=500)
        first = world.extraction.run(world.session_id)
        assert first.model_error and "HTTP 500" in first.model_error
        assert len(chat_requests(fake_openai)) == 1  # not one request (nor one error) per message
        assert len(world.records()) == 3

        world.say("I like snow.")
        fake_openai.fail_next(1, status=500)
        second = world.extraction.run(world.session_id)
        assert second.model_failed and second.model_error is None  # the same streak: not reported again

        world.say("I like sun.")
        fake_openai.script_chat(reply())
        assert world.extraction.run(world.session_id).method == "model"
        world.say("I like wind.")
        fake_openai.fail_next(1, status=500)
        assert world.extraction.run(world.session_id).model_error  # a new streak is reported again
    finally:
        world.close()


def test_a_100000_character_message_is_bounded_for_the_model_and_in_l2(world: World, fake_openai) -> None:  # type: ignore[no-untyped-def]
    huge = "I prefer tea. " + "lorem ipsum " * 8340 + " My name is Lin."
    assert len(huge) > 100_000
    world.say(huge)
    fake_openai.script_chat(reply(memory("preference", "User prefers tea", [0])))
    report = world.extraction.run(world.session_id)

    transcript = transcript_of(chat_requests(fake_openai)[0])
    assert len(transcript) < MAX_CHUNK_CHARS and "characters omitted" in transcript
    assert "I prefer tea" in transcript and "My name is Lin" in transcript  # head and tail both kept
    [record] = world.records()
    assert record.l2 and len(record.l2) <= world.settings.memory.max_text_chars
    assert report.method == "model"


def test_long_conversations_are_split_into_bounded_requests(world: World, fake_openai) -> None:  # type: ignore[no-untyped-def]
    for n in range(6):
        world.say(f"Note {n}: " + "x" * 9000)
    fake_openai.respond_with(lambda body: reply())
    world.extraction.run(world.session_id)
    requests = chat_requests(fake_openai)
    assert len(requests) == 2
    assert all(len(transcript_of(r)) <= MAX_CHUNK_CHARS for r in requests)
    seen = "".join(transcript_of(r) for r in requests)
    assert all(f"[{n}]" in seen for n in range(6))
    assert requests[0]["messages"][0]["content"] == SYSTEM_PROMPT.format(subject="the user")


def test_a_100000_character_message_without_a_model_still_yields_its_patterns(tmp_path: Path) -> None:
    world = World(tmp_path / "home", settings_for(None))
    try:
        world.say("lorem ipsum " * 9000 + ". I prefer tea. " + "lorem ipsum " * 9000)
        world.extraction.run(world.session_id)
        [record] = world.records()
        assert (
            record.l0 == "User prefers tea" and len(record.l2 or "") <= world.settings.memory.max_text_chars
        )
    finally:
        world.close()


def test_the_checkpoint_stays_when_memories_cannot_be_written(tmp_path: Path) -> None:
    world = World(tmp_path / "home", settings_for(None))
    try:
        world.say("I prefer tea.")
        db = world.home.memory_db("main")
        db.parent.mkdir(parents=True, exist_ok=True)
        db.write_bytes(b"this is not a database " * 100)
        with pytest.raises(StoreError):
            world.extraction.run(world.session_id)
        assert read_state(world.store.session_dir(world.session_id)).checkpoint == 0
        db.unlink()
        world.memory.close()
        assert [o.action for o in world.extraction.run(world.session_id).outcomes] == ["added"]
    finally:
        world.close()
