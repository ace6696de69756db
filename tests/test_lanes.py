"""Lanes and queue modes, in process: the real AgentRuntime and session files, the fake model server.

Each queue-mode test starts a turn that is still waiting for the (slow) model, sends more messages to
the same session, and checks which model calls were made and what the session holds afterwards.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.agent.runtime import AgentRuntime
from openclaw_cli.agent.turn.requests import TurnResult
from openclaw_cli.config.loading import Settings, validate_settings
from openclaw_cli.core.paths import Home
from openclaw_cli.gateway.lanes.queues import LaneManager, Message, Turn
from openclaw_cli.gateway.lanes.run_limiter import RunLimiter
from openclaw_cli.sessions.store import SessionStore
from tests.fake_openai import FAKE_API_KEY, FakeOpenAI, module_fake  # noqa: F401 (fixture)
from tests.memory_helpers import with_shared_models

KEY = "agent:main:direct:lane"


class SlowEcho:
    """A fake-model responder: `echo: TEXT` after `seconds`, counting calls running at once."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.active = 0
        self.peak = 0
        self.prompts: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str:
        text = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        with self._lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
            self.prompts.append(text)
        time.sleep(self.seconds)
        with self._lock:
            self.active -= 1
        return f"echo: {text}"


@pytest.fixture
def model(fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> SlowEcho:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_API_KEY)
    responder = SlowEcho(0.4)
    fake.respond_with(responder)
    return responder


def _settings(fake: FakeOpenAI) -> Settings:
    settings = validate_settings(
        {
            "llm": {"model": "openai/fake", "apiBase": fake.url, "maxRetries": 0},
            "session": {"reset": {"atHour": None}},
        },
        {},
        Path("openclaw.json"),
    )
    return with_shared_models(settings)  # the run's converted models, not a conversion in each test's home


class Harness:
    # Every harness a test made, closed after it (close_harnesses): a runtime left open keeps its transcript
    # indexer, extraction and after-turn threads loading models and embedding in the worker during the
    # tests that follow, and they die mid-call when the interpreter exits.
    made: list[Harness] = []

    def __init__(self, home: Path, settings: Settings, limit: int = 4, debounce_ms: int = 150) -> None:
        self.home = Home(home)
        self.runtime = AgentRuntime(self.home, settings)
        Harness.made.append(self)
        self.limiter = RunLimiter(limit)
        self.lanes = LaneManager(self.runtime.run_turn, self.limiter, debounce_ms=debounce_ms)
        self.events: list[tuple[str, dict[str, Any]]] = []

    def send(
        self, text: str, mode: str, key: str = KEY, sender: str | None = None, user_id: str | None = "default"
    ) -> Turn:
        return self.lanes.submit(
            "main",
            key,
            Message(text, sender),
            mode,
            listener=lambda e, p: self.events.append((e, p)),
            user_id=user_id,
        )

    async def started(self, turn: Turn) -> None:
        """Wait until `turn` has started (its model call is under way)."""
        while not turn.started:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)

    def history(self, key: str = KEY) -> list[tuple[str, str]]:
        store = SessionStore(self.home, "main")
        session_id = store.current_session_id(key)
        assert session_id is not None
        return [(m["role"], m["content"]) for m in store.read_messages(session_id).messages]


@pytest.fixture(autouse=True)
def close_harnesses() -> Iterator[None]:
    yield
    while Harness.made:
        Harness.made.pop().runtime.close()


def _run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def test_collect_starts_a_message_to_an_idle_session_at_once(
    tmp_path: Path, fake: FakeOpenAI, model: SlowEcho
) -> None:
    """No debounce on an idle lane: with debounceMs 30 s the turn still starts before the debounce could
    have passed, and what arrived in the same instant (before it started) rides along."""

    async def scenario() -> list[Turn]:
        h = Harness(tmp_path, _settings(fake), debounce_ms=30_000)
        turns = [h.send(text, "collect") for text in ("a", "b")]
        await h.lanes.wait_idle()
        return turns

    turns = _run(scenario())
    assert turns[0] is turns[1]
    assert turns[0].started_at - turns[0].created_at < 30
    assert model.prompts == ["a\n\nb"]


def test_collect_merges_a_burst_during_a_run_into_one_turn_after_the_debounce(
    tmp_path: Path, fake: FakeOpenAI, model: SlowEcho
) -> None:
    async def scenario() -> list[Turn]:
        h = Harness(tmp_path, _settings(fake))
        first = h.send("a", "collect")
        await h.started(first)
        turns = [h.send(text, "collect") for text in ("b", "c")]
        await asyncio.sleep(0.08)  # within debounceMs of the last one
        turns.append(h.send("d", "collect"))
        await h.lanes.wait_idle()
        assert h.history()[2:] == [("user", "b\n\nc\n\nd"), ("assistant", "echo: b\n\nc\n\nd")]
        return [first, *turns]

    first, *turns = _run(scenario())
    assert len({t.run_id for t in turns}) == 1 and turns[0] is not first
    # it waited for the run before it, and for debounceMs after the last message that joined it
    assert turns[0].started_at >= first.ended_at
    assert turns[0].started_at >= turns[0].messages[-1].received_at + 0.15
    assert model.prompts == ["a", "b\n\nc\n\nd"]


def test_collect_never_merges_two_persons_messages_into_one_turn(
    tmp_path: Path, fake: FakeOpenAI, model: SlowEcho
) -> None:
    """A turn reads and writes one person's memory: in a group, bob's message is a turn of its own."""
    group = "agent:main:telegram:default:group:g1"

    async def scenario() -> list[Turn]:
        h = Harness(tmp_path, _settings(fake))
        turns = [
            h.send("a1", "collect", group, sender="1", user_id="telegram:1"),
            h.send("a2", "collect", group, sender="1", user_id="telegram:1"),
            h.send("b1", "collect", group, sender="2", user_id="telegram:2"),
        ]
        await h.lanes.wait_idle()
        store = SessionStore(h.home, "main")
        session_id = store.current_session_id(group)
        assert session_id is not None
        users = [(m["content"], m.get("userId")) for m in store.read_messages(session_id).messages]
        assert ("a1\n\na2", "telegram:1") in users and ("b1", "telegram:2") in users
        return turns

    turns = _run(scenario())
    assert turns[0].run_id == turns[1].run_id != turns[2].run_id
    assert [t.user_id for t in turns] == ["telegram:1", "telegram:1", "telegram:2"]


def test_collect_gathers_what_arrives_during_a_run_into_one_followup(
    tmp_path: Path, fake: FakeOpenAI, model: SlowEcho
) -> None:
    async def scenario() -> None:
        h = Harness(tmp_path, _settings(fake))
        first = h.send("first", "collect")
        await h.started(first)
        later = [h.send(text, "collect") for text in ("second", "third")]
        assert later[0] is later[1] is not first
        await h.lanes.wait_idle()

    _run(scenario())
    assert model.prompts == ["first", "second\n\nthird"]


@pytest.mark.parametrize("mode", ["followup", "queue"])
def test_followup_and_queue_run_each_message_as_its_own_turn_in_order(
    tmp_path: Path, fake: FakeOpenAI, model: SlowEcho, mode: str
) -> None:
    async def scenario() -> list[tuple[str, str]]:
        h = Harness(tmp_path, _settings(fake))
        first = h.send("one", mode)
        await h.started(first)
        turns = [h.send(text, mode) for text in ("two", "three")]
        assert len({first.run_id, *(t.run_id for t in turns)}) == 3
        await h.lanes.wait_idle()
        return h.history()

    history = _run(scenario())
    assert model.prompts == ["one", "two", "three"]
    assert history == [
        pair for t in ("one", "two", "three") for pair in (("user", t), ("assistant", f"echo: {t}"))
    ]


def test_steer_reaches_a_turn_waiting_for_a_global_slot(
    tmp_path: Path, fake: FakeOpenAI, model: SlowEcho
) -> None:
    async def scenario() -> list[tuple[str, str]]:
        h = Harness(tmp_path, _settings(fake), limit=1)
        busy = h.send("other session", "steer", key="agent:main:direct:other")
        await h.started(busy)
        queued = h.send("first", "steer")
        assert h.send("correction", "steer") is queued
        await h.lanes.wait_idle()
        return h.history()

    history = _run(scenario())
    # one model call for the waiting turn, which sent both messages, each stored as the user's
    assert model.prompts == ["other session", "correction"]
    assert history == [("user", "first"), ("user", "correction"), ("assistant", "echo: correction")]


def test_interrupt_cancels_the_running_turn_and_keeps_its_message(
    tmp_path: Path, fake: FakeOpenAI, model: SlowEcho
) -> None:
    async def scenario() -> tuple[TurnResult, TurnResult, list[tuple[str, str]]]:
        h = Harness(tmp_path, _settings(fake))
        first = h.send("long question", "interrupt")
        await h.started(first)
        second = h.send("never mind, this instead", "interrupt")
        results = await asyncio.gather(first.done, second.done)
        return results[0], results[1], h.history()

    first, second, history = _run(scenario())
    assert (first.status, second.status) == ("aborted", "ok")
    assert history == [
        ("user", "long question"),
        ("user", "never mind, this instead"),
        ("assistant", "echo: never mind, this instead"),
    ]


def test_one_run_at_a_time_per_session_and_a_global_cap(
    tmp_path: Path, fake: FakeOpenAI, model: SlowEcho
) -> None:
    model.seconds = 0.3

    async def scenario() -> Harness:
        h = Harness(tmp_path, _settings(fake), limit=2)
        for session in range(4):
            for n in range(2):
                h.send(f"s{session}m{n}", "followup", key=f"agent:main:direct:p{session}")
        await asyncio.sleep(0.1)
        assert h.lanes.busy()["running"] <= 2
        await h.lanes.wait_idle()
        return h

    h = _run(scenario())
    assert model.peak == 2
    for session in range(4):
        key = f"agent:main:direct:p{session}"
        assert [c for role, c in h.history(key) if role == "user"] == [f"s{session}m0", f"s{session}m1"]
    finals = [p for e, p in h.events if e == "chat" and p["state"] == "final"]
    assert len(finals) == 8


def test_the_global_cap_can_change_while_runs_hold_it() -> None:
    async def scenario() -> list[int]:
        limiter = RunLimiter(1)
        await limiter.acquire()
        waiter = asyncio.create_task(limiter.acquire())
        await asyncio.sleep(0.05)
        seen = [int(waiter.done())]
        await limiter.resize(2)
        await asyncio.wait_for(waiter, 1)
        seen.append(limiter.active)
        return seen

    assert asyncio.run(scenario()) == [0, 2]


def test_abort_by_session_cancels_running_and_queued(
    tmp_path: Path, fake: FakeOpenAI, model: SlowEcho
) -> None:
    async def scenario() -> list[str]:
        h = Harness(tmp_path, _settings(fake))
        first = h.send("a", "followup")
        await h.started(first)
        second = h.send("b", "followup")
        assert set(h.lanes.abort(session=("main", KEY))) == {first.run_id, second.run_id}
        results = await asyncio.gather(first.done, second.done)
        return [r.status for r in results]

    assert _run(scenario()) == ["aborted", "aborted"]


def test_unknown_queue_mode_is_refused(tmp_path: Path, fake: FakeOpenAI) -> None:
    async def scenario() -> None:
        h = Harness(tmp_path, _settings(fake))
        with pytest.raises(ValueError, match="unknown queue mode"):
            h.send("x", "shout")

    asyncio.run(scenario())


def test_collect_in_a_group_says_who_said_what(tmp_path: Path, fake: FakeOpenAI, model: SlowEcho) -> None:
    group = "agent:main:slack:acme:group:c1"

    async def scenario() -> None:
        h = Harness(tmp_path, _settings(fake))
        h.send("lunch?", "collect", key=group, sender="ann")
        h.send("yes", "collect", key=group, sender="bob")
        await h.lanes.wait_idle()

    _run(scenario())
    assert model.prompts == ["ann: lunch?\n\nbob: yes"]
