"""Extraction through the model (the fake server over real HTTP): L0/L1/L2, checkpoint, flush, groups."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openclaw_cli.memory.extraction.state import read_state
from tests import fake_openai as fake_server
from tests.extract_support import (
    GROUP_KEY,
    World,
    chat_requests,
    memory,
    reply,
    responder_by_speaker,
    settings_for,
    transcript_of,
)

fake_openai = fake_server.fake_openai


@pytest.fixture
def world(tmp_path: Path, fake_openai):  # type: ignore[no-untyped-def]
    w = World(tmp_path / "home", settings_for(fake_openai.url))
    yield w
    w.close()


def test_model_memories_get_l0_l1_verbatim_l2_attribute_and_source(world: World, fake_openai) -> None:  # type: ignore[no-untyped-def]
    world.say("I just started a new job at Acme as a backend engineer.")
    world.say("Congratulations!", role="assistant")
    world.say("I prefer tea over coffee in the mornings.")
    fake_openai.script_chat(
        reply(
            memory(
                "profile",
                "User works at Acme as a backend engineer",
                [0],
                l1="Started recently.",
                attribute="Employer",
            ),
            memory("preference", "User prefers tea over coffee in the mornings", [2]),
        )
    )
    report = world.extraction.run(world.session_id)

    assert report.method == "model" and (report.start, report.end) == (0, 3)
    assert [o.action for o in report.outcomes] == ["added", "added"]
    records = {r.category: r for r in world.records()}
    job = records["profile"]
    assert job.l0 == "User works at Acme as a backend engineer" and job.l1 == "Started recently."
    assert job.attribute == "employer"
    assert (
        job.l2 == "[2026-11-30T09:01:00.000Z] user: I just started a new job at Acme as a backend engineer."
    )
    assert job.source == {"sessionId": world.session_id, "messages": [0], "extractedBy": "model"}
    assert job.created_at.isoformat().startswith("2026-11-30T09:01")
    assert records["preference"].attribute is None  # only profile facts have a key
    # The model saw every message as a numbered line with its timestamp and speaker.
    transcript = transcript_of(chat_requests(fake_openai)[0])
    assert "[0] 2026-11-30T09:01:00.000Z user: I just started" in transcript
    assert "[1] 2026-11-30T09:02:00.000Z assistant: Congratulations!" in transcript


def test_the_checkpoint_means_no_message_twice_and_none_skipped(world: World, fake_openai) -> None:  # type: ignore[no-untyped-def]
    world.say("I live in Hangzhou.")
    fake_openai.script_chat(reply(memory("profile", "User lives in Hangzhou", [0], attribute="city")))
    world.extraction.run(world.session_id)
    assert read_state(world.store.session_dir(world.session_id)).checkpoint == 1

    again = world.extraction.run(world.session_id)  # nothing new: no request, nothing written
    assert (again.start, again.end, again.outcomes) == (1, 1, []) and len(chat_requests(fake_openai)) == 1

    world.say("Ok.", role="assistant")
    world.say("I have a cat called Miso.")
    fake_openai.script_chat(reply(memory("profile", "User has a cat called Miso", [2])))
    later = world.extraction.run(world.session_id)
    assert (later.start, later.end) == (1, 3)
    transcript = transcript_of(chat_requests(fake_openai)[1])
    assert "[0]" not in transcript and "[1]" in transcript and "[2]" in transcript
    assert sorted(r.l0 for r in world.records()) == ["User has a cat called Miso", "User lives in Hangzhou"]


def test_flush_extracts_up_to_the_given_index_then_the_rest_later(world: World, fake_openai) -> None:  # type: ignore[no-untyped-def]
    for text in ("My name is Lin.", "I am learning Rust.", "I hate meetings before 10am."):
        world.say(text)
    fake_openai.script_chat(reply(memory("profile", "User's name is Lin", [0], attribute="name")))
    flushed = world.extraction.flush(world.session_id, upto=2)
    assert (flushed.start, flushed.end) == (0, 2)
    transcript = transcript_of(chat_requests(fake_openai)[0])
    assert "[1]" in transcript and "[2]" not in transcript

    fake_openai.script_chat(reply(memory("preference", "User hates meetings before 10am", [2])))
    rest = world.extraction.flush(world.session_id)
    assert (rest.start, rest.end) == (2, 3)
    assert "[2]" in transcript_of(chat_requests(fake_openai)[1])
    assert world.extraction.flush(world.session_id, upto=1).outcomes == []  # behind the checkpoint: nothing


def test_group_chats_get_one_extraction_per_speaker_into_their_own_memory(world: World, fake_openai) -> None:  # type: ignore[no-untyped-def]
    world.say("I'm vegetarian.", sender="ana", key=GROUP_KEY)
    world.say("I only eat fish on Fridays.", sender="bo", key=GROUP_KEY)
    world.say("Noted, both of you.", role="assistant", key=GROUP_KEY)
    fake_openai.respond_with(
        responder_by_speaker(
            {
                "ana": reply(memory("preference", "User is vegetarian", [0])),
                "bo": reply(memory("preference", "User eats fish only on Fridays", [1])),
            }
        )
    )
    report = world.extraction.run(world.session_id)

    assert len(chat_requests(fake_openai)) == 2
    owners = {r.l0: r.user_id for r in world.records()}
    assert owners == {"User is vegetarian": "ana", "User eats fish only on Fridays": "bo"}
    assert [o.action for o in report.outcomes] == ["added", "added"]


def test_a_dry_run_writes_nothing_and_keeps_the_checkpoint(world: World, fake_openai) -> None:  # type: ignore[no-untyped-def]
    world.say("I prefer dark mode.")
    fake_openai.script_chat(reply(memory("preference", "User prefers dark mode", [0])))
    report = world.extraction.run(world.session_id, dry_run=True)
    assert report.dry_run and [o.action for o in report.outcomes] == ["added"]
    assert world.records() == []
    assert read_state(world.store.session_dir(world.session_id)).checkpoint == 0


def test_the_judge_asks_the_model_and_keeps_the_candidate_when_it_cannot_answer(
    world: World, fake_openai
) -> None:  # type: ignore[no-untyped-def]
    from openclaw_cli.memory.writing.candidate import Candidate
    from openclaw_cli.memory.writing.llm_judge import LlmJudge

    world.say("I like tea.")
    fake_openai.script_chat(reply(memory("preference", "User likes tea", [0])))
    world.extraction.run(world.session_id)
    existing = world.records()[0]
    judge = LlmJudge(world.settings.llm, "openai/fake")
    candidate = Candidate(l0="User loves tea", category="preference")

    fake_openai.script_chat(json.dumps({"verdict": "same"}))
    assert judge(candidate, existing) == "same"
    body = chat_requests(fake_openai)[-1]
    assert "User likes tea" in transcript_of(body) and "User loves tea" in transcript_of(body)
    fake_openai.script_chat('{"verdict": "UPDATE"}')
    assert judge(candidate, existing) == "update"
    fake_openai.script_chat("I think they are the same.", '{"verdict": "maybe"}')  # two invalid replies
    assert judge(candidate, existing) == "different" and judge.last_error
    fake_openai.fail_next(1, status=500)
    assert judge(candidate, existing) == "different"


def test_the_checkpoint_file_is_private_and_damage_is_a_clear_error(world: World, fake_openai) -> None:  # type: ignore[no-untyped-def]
    from openclaw_cli.core.errors import StoreError
    from openclaw_cli.memory.extraction.state import state_path

    world.say("How are you?")
    fake_openai.script_chat(reply())
    world.extraction.run(world.session_id)
    path = state_path(world.store.session_dir(world.session_id))
    assert path.stat().st_mode & 0o777 == 0o600
    path.write_text('{"checkpoint": "soon"}')
    with pytest.raises(StoreError, match="damaged") as caught:
        world.extraction.run(world.session_id)
    assert caught.value.hint and "extraction.json" in caught.value.hint
