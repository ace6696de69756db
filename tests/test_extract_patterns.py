"""Without a model: explicit English and Chinese patterns; "remember this" / 记住 written at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_cli.memory.extraction.patterns import PatternMemory, asks_to_remember, find_memories
from openclaw_cli.memory.extraction.state import read_state
from tests import fake_openai as fake_server
from tests.extract_support import World, chat_requests, memory, reply, settings_for, transcript_of

fake_openai = fake_server.fake_openai


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Remember that my locker code is 4411.",
            PatternMemory("profile", "User's locker code is 4411", None, True),
        ),
        (
            "Please remember: I prefer tea over coffee.",
            PatternMemory("preference", "User prefers tea over coffee", None, True),
        ),
        (
            "I really like dark mode in editors.",
            PatternMemory("preference", "User really likes dark mode in editors"),
        ),
        ("I hate meetings before 10am", PatternMemory("preference", "User hates meetings before 10am")),
        ("My name is Lin Wei.", PatternMemory("profile", "User's name is Lin Wei", "name")),
        ("记住我的生日是5月3日。", PatternMemory("profile", "用户的生日是5月3日", None, True)),
        ("我偏好安静的餐厅", PatternMemory("preference", "用户偏好安静的餐厅")),
        ("我不喜欢Java", PatternMemory("preference", "用户不喜欢Java")),
        ("我叫林伟。", PatternMemory("profile", "用户叫林伟", "name")),
        ("我是前端工程师", PatternMemory("profile", "用户是前端工程师")),
    ],
)
def test_each_explicit_pattern_gives_its_memory(text: str, expected: PatternMemory) -> None:
    assert find_memories(text) == [expected]


def test_chinese_clauses_are_separate_statements() -> None:
    assert [m.l0 for m in find_memories("我喜欢喝咖啡，我讨厌西兰花。")] == [
        "用户喜欢喝咖啡",
        "用户讨厌西兰花",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Do I like tea?",
        "I remember that we met.",
        "Do you remember my name?",
        "我记住了",
        "我喜欢吗",
        "我是说算了",
        "I would like a pizza",
    ],
)
def test_questions_and_lookalikes_are_not_memories(text: str) -> None:
    assert find_memories(text) == []


def test_asks_to_remember_only_for_requests() -> None:
    assert asks_to_remember("Remember this: the wifi password is on the fridge")
    assert asks_to_remember("请记住：我在杭州工作")
    assert not asks_to_remember("I like tea")


def test_without_a_model_patterns_still_produce_memories(tmp_path: Path) -> None:
    world = World(tmp_path / "home", settings_for(None))
    try:
        world.say("Hi! My name is Lin.")
        world.say("Hello Lin, I like helping.", role="assistant")  # the assistant's words are not the user's
        world.say("我喜欢喝咖啡，我讨厌西兰花。")
        world.say("What's the weather?")
        report = world.extraction.run(world.session_id)
        assert report.method == "patterns" and report.model_error is None
        by_l0 = {r.l0: r for r in world.records()}
        assert set(by_l0) == {"User's name is Lin", "用户喜欢喝咖啡", "用户讨厌西兰花"}
        assert by_l0["User's name is Lin"].attribute == "name"
        assert by_l0["用户讨厌西兰花"].l2 == "[2026-11-30T09:03:00.000Z] user: 我喜欢喝咖啡，我讨厌西兰花。"
        assert by_l0["用户讨厌西兰花"].source["extractedBy"] == "pattern"  # type: ignore[index]
        assert read_state(world.store.session_dir(world.session_id)).checkpoint == 4
    finally:
        world.close()


def test_remember_this_is_written_at_once_without_the_model(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    world = World(tmp_path / "home", settings_for(fake_openai.url))
    try:
        message = world.say("Remember that my locker code is 4411.")
        outcomes = world.extraction.remember_now(world.session_id, message)
        assert [(o.action, o.candidate.l0) for o in outcomes] == [("added", "User's locker code is 4411")]
        assert [r.l0 for r in world.records()] == ["User's locker code is 4411"]
        assert chat_requests(fake_openai) == []  # no model in the way of the reply

        # The next extraction does not extract that message again, but does see what follows it.
        world.say("I have a dentist appointment on Friday.")
        fake_openai.script_chat(reply(memory("event", "User has a dentist appointment on Friday", [1])))
        world.extraction.run(world.session_id)
        transcript = transcript_of(chat_requests(fake_openai)[0])
        assert "[0]" not in transcript and "[1]" in transcript
        assert len(world.records()) == 2
    finally:
        world.close()


def test_remember_this_in_chinese_and_pointing_at_the_previous_message(tmp_path: Path) -> None:
    world = World(tmp_path / "home", settings_for(None))
    try:
        message = world.say("记住，我对花生过敏")
        [outcome] = world.extraction.remember_now(world.session_id, message)
        assert outcome.candidate.l0 == "用户对花生过敏" and outcome.action == "added"

        world.say("The spare key is under the blue flower pot.")
        pointing = world.say("Remember this.")
        [outcome] = world.extraction.remember_now(world.session_id, pointing)
        assert outcome.candidate.l0 == "The spare key is under the blue flower pot"
        assert (
            outcome.candidate.l2
            and "blue flower pot" in outcome.candidate.l2
            and "Remember this." in outcome.candidate.l2
        )
    finally:
        world.close()


def test_remember_now_returns_nothing_for_an_ordinary_message(tmp_path: Path) -> None:
    world = World(tmp_path / "home", settings_for(None))
    try:
        message = world.say(
            "I like tea."
        )  # a preference, but not a request to remember: the extraction's job
        assert world.extraction.remember_now(world.session_id, message) == []
        assert (
            world.extraction.remember_now(
                world.session_id, {"role": "assistant", "content": "Remember that!"}
            )
            == []
        )
        assert world.records() == []
    finally:
        world.close()


def test_without_a_model_group_speakers_get_their_own_pattern_memories(tmp_path: Path) -> None:
    from tests.extract_support import GROUP_KEY

    world = World(tmp_path / "home", settings_for(None))
    try:
        world.say("I prefer mornings.", sender="ana", key=GROUP_KEY)
        world.say("我讨厌早起。", sender="bo", key=GROUP_KEY)
        report = world.extraction.run(world.session_id)
        assert report.method == "patterns"
        assert {r.l0: r.user_id for r in world.records()} == {
            "User prefers mornings": "ana",
            "用户讨厌早起": "bo",
        }
    finally:
        world.close()
