"""Cost of extraction's local work: the explicit patterns and the bounded transcript, on ordinary turns
and on a 100,000-character paste (which must stay cheap: it runs inside "remember this" and fallbacks).

Run: pytest benchmarks/test_bench_extract.py --benchmark-only -n 0 -p no:randomly
"""

from __future__ import annotations

from typing import Any

from openclaw_cli.memory.extraction.patterns import find_memories
from openclaw_cli.memory.extraction.prompt import MAX_CHUNK_CHARS, chunks, extraction_messages

TURNS = [
    "Remember that my locker code is 4411.",
    "I really like dark mode in every editor.",
    "Can you check the build logs for the failing test?",
    "我喜欢喝咖啡，我讨厌西兰花。",
    "记住：我住在杭州市西湖区。",
    "What time is the meeting tomorrow?",
    "My name is Lin Wei and I work on the billing service.",
    "上次故障是因为迁移没有放在事务里执行。",
]
HUGE = ("lorem ipsum dolor sit amet, " * 1800) + "I prefer tea. " + ("consectetur adipiscing elit. " * 1800)


def _messages(texts: list[str]) -> list[dict[str, Any]]:
    return [
        {"idx": i, "role": "user", "content": text, "ts": "2026-11-30T09:00:00.000Z"}
        for i, text in enumerate(texts)
    ]


def test_patterns_on_ordinary_turns(benchmark: Any) -> None:
    found = benchmark(lambda: sum(len(find_memories(text)) for text in TURNS))
    assert found >= 6
    benchmark.extra_info["messages_per_call"] = len(TURNS)


def test_patterns_on_a_100000_character_message(benchmark: Any) -> None:
    assert len(HUGE) > 100_000
    found = benchmark(find_memories, HUGE)
    assert [m.l0 for m in found] == ["User prefers tea"]


def test_bounded_transcript_of_a_100000_character_message(benchmark: Any) -> None:
    messages = _messages([HUGE] * 3)

    def build() -> int:
        return sum(len(extraction_messages(chunk, None)[-1]["content"]) for chunk in chunks(messages))

    size = benchmark(build)
    assert size < 3 * MAX_CHUNK_CHARS
    benchmark.extra_info["prompt_chars_for_300k_input"] = size


def test_note_turn_while_the_model_is_busy(benchmark: Any, tmp_path: Any, monkeypatch: Any) -> None:
    """What an agent turn pays to schedule its extraction while an earlier one waits on the model (held
    by the fake, so every timed call meets a run in flight). The tests check that it never waits for
    the model (tests/test_extract_schedule.py); how little it costs is measured here, not asserted."""
    from tests.extract_support import World, memory, reply, settings_for
    from tests.fake_openai import FAKE_API_KEY, FakeOpenAI

    monkeypatch.setenv("OPENAI_API_KEY", FAKE_API_KEY)
    fake = FakeOpenAI().start()
    fake.respond_with(lambda body: reply(memory("preference", "User likes tea", [0])))
    world = World(tmp_path / "home", settings_for(fake.url, coalesceSeconds=0))
    try:
        world.say("I like tea.")
        with fake.holding() as hold:
            world.extraction.note_turn(world.session_id)
            assert hold.wait_arrived(1)
            benchmark(world.extraction.note_turn, world.session_id)
        assert world.extraction.wait_idle(60)
    finally:
        world.close()
        fake.stop()
