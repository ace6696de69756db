"""The steer queue modes for real: messages taken into a running turn (in process, like test_lanes).

A turn that calls a tool makes two model calls: a message steered during the first reaches the second,
in the same run. A message steered while the final reply streams has no model call left to join: it
runs next as a followup. steer-backlog steers and also answers the message again in a turn of its own.
The session file holds every message once, in order.

The moments are made, not waited for: the fake model holds its answers (FakeOpenAI.holding) while a
test sends, so a message "during the tool call" or "while the reply streams" arrives then whatever the
machine's load, where a sleeping fake model only made it likely.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.gateway.lanes.queues import Turn
from openclaw_cli.sessions.store import SessionStore
from tests.agent_helpers import tool_call
from tests.fake_openai import FAKE_API_KEY, FakeOpenAI, Hold, module_fake  # noqa: F401 (fixture)
from tests.test_lanes import KEY, Harness, _run, _settings, close_harnesses  # noqa: F401 (fixture)


class Script:
    """A fake-model responder: tool call first when asked, then `reply: <last user text>`; records bodies."""

    def __init__(self, *, tool_first: bool) -> None:
        self.tool_first = tool_first
        self.bodies: list[list[dict[str, Any]]] = []
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> str | dict[str, Any]:
        messages = body["messages"]
        with self._lock:
            self.bodies.append(messages)
        if self.tool_first and messages[-1]["role"] == "user" and len(self.bodies) == 1:
            return tool_call("memory_search", {"query": "weather"})
        return f"reply: {last_user(messages)}"

    def users_after_last_assistant(self, index: int) -> list[str]:
        """The user messages sent at the end of model call `index` (after the last assistant one)."""
        tail: list[str] = []
        for message in reversed(self.bodies[index]):
            if message["role"] == "assistant":
                break
            if message["role"] == "user":
                tail.insert(0, message["content"])
        return tail


def last_user(messages: list[dict[str, Any]]) -> str:
    return str([m for m in messages if m["role"] == "user"][-1]["content"])


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_API_KEY)


async def held(hold: Hold, calls: int) -> None:
    """Until the `calls`-th model call has reached the hold: it is under way, its answer held back."""
    assert await asyncio.to_thread(hold.wait_arrived, calls), f"model call {calls} never came"


async def reply_streaming(h: Harness, turn: Turn) -> None:
    """Until `turn`'s held reply has begun to reach its listener (a delta event): its last model call is
    out and answering, so the run has no model call left to take a steered message into."""
    deadline = time.monotonic() + 30
    while not any(e == "chat" and p["state"] == "delta" and p["runId"] == turn.run_id for e, p in h.events):
        assert time.monotonic() < deadline, "the reply never began to stream"
        await asyncio.sleep(0.01)


def stored(h: Harness) -> list[dict[str, Any]]:
    """The session file's messages, as stored (role, content, tool calls), in file order."""
    store = SessionStore(h.home, "main")
    session_id = store.current_session_id(KEY)
    assert session_id is not None
    return store.read_messages(session_id).messages


def finals(h: Harness) -> dict[str, dict[str, Any]]:
    return {p["runId"]: p for e, p in h.events if e == "chat" and p["state"] in ("final", "error", "aborted")}


def _second_message_during_a_tool_call(
    tmp_path: Path, fake: FakeOpenAI, script: Script, second: str, mode: str
) -> tuple[Harness, Turn, Turn]:
    """A run that calls a tool; `second` arrives in `mode` while the tool call is out (held)."""
    fake.respond_with(script)

    async def scenario() -> tuple[Harness, Turn, Turn]:
        with fake.holding() as hold:
            h = Harness(tmp_path, _settings(fake))
            running = h.send("what is the weather?", mode)
            await held(hold, 1)
            later = h.send(second, mode)
            hold.open()
            await h.lanes.wait_idle()
        return h, running, later

    return _run(scenario())


def test_steer_during_a_tool_call_reaches_the_next_model_call_of_the_same_run(
    tmp_path: Path, fake: FakeOpenAI, api_key: None
) -> None:
    script = Script(tool_first=True)
    h, running, steered = _second_message_during_a_tool_call(
        tmp_path, fake, script, "and answer in French", "steer"
    )
    assert steered is running  # acknowledged with the running turn's id: no turn of its own
    assert len(script.bodies) == 2
    second = script.bodies[1]
    assert [m["role"] for m in second[-4:]] == ["user", "assistant", "tool", "user"]
    assert second[-1]["content"] == "and answer in French"
    assert [(m["role"], m["content"]) for m in stored(h)] == [
        ("user", "what is the weather?"),
        ("assistant", ""),
        ("tool", stored(h)[2]["content"]),
        ("user", "and answer in French"),
        ("assistant", "reply: and answer in French"),
    ]
    assert list(finals(h)) == [running.run_id]
    assert finals(h)[running.run_id]["text"] == "reply: and answer in French"


def test_steer_while_the_final_reply_streams_runs_as_a_followup_in_order(
    tmp_path: Path, fake: FakeOpenAI, api_key: None
) -> None:
    script = Script(tool_first=False)
    fake.respond_with(lambda body: script(body) + " five six seven eight")

    async def scenario() -> tuple[Harness, Turn, list[Turn]]:
        with fake.holding() as hold:
            h = Harness(tmp_path, _settings(fake))
            running = h.send("a", "steer")
            await held(hold, 1)
            await reply_streaming(h, running)
            later = [h.send("b", "steer"), h.send("c", "steer"), h.send("d", "followup")]
            hold.open()
            await h.lanes.wait_idle()
        return h, running, later

    h, running, (b, c, d) = _run(scenario())
    assert b is c is running  # offered to the running turn, which could not take them any more
    assert len(script.bodies) == 3  # a; then b and c together in one followup; then d
    assert script.users_after_last_assistant(1) == ["b", "c"]
    assert last_user(script.bodies[2]) == "d"
    reply = " five six seven eight"
    assert [(m["role"], m["content"]) for m in stored(h)] == [
        ("user", "a"),
        ("assistant", "reply: a" + reply),
        ("user", "b"),
        ("user", "c"),
        ("assistant", "reply: c" + reply),
        ("user", "d"),
        ("assistant", "reply: d" + reply),
    ]
    runs = finals(h)
    followup = runs[running.run_id]["followupRunId"]
    assert list(runs) == [running.run_id, followup, d.run_id]


def test_steer_backlog_steers_into_the_run_and_answers_again_without_storing_twice(
    tmp_path: Path, fake: FakeOpenAI, api_key: None
) -> None:
    script = Script(tool_first=True)
    h, running, backlog = _second_message_during_a_tool_call(
        tmp_path, fake, script, "and tomorrow?", "steer-backlog"
    )
    assert backlog is not running  # acknowledged with the turn that answers it again
    assert len(script.bodies) == 3
    assert script.bodies[1][-1] == {"role": "user", "content": "and tomorrow?"}  # steered into the run
    assert script.bodies[2][-1] == {"role": "user", "content": "and tomorrow?"}  # asked again
    assert script.bodies[2][-2] == {"role": "assistant", "content": "reply: and tomorrow?"}
    assert [(m["role"], m["content"]) for m in stored(h) if m["role"] != "tool"] == [
        ("user", "what is the weather?"),
        ("assistant", ""),
        ("user", "and tomorrow?"),
        ("assistant", "reply: and tomorrow?"),
        ("assistant", "reply: and tomorrow?"),
    ]
    runs = finals(h)
    assert list(runs) == [running.run_id, backlog.run_id]
    assert "followupRunId" not in runs[running.run_id]


def test_steer_backlog_too_late_for_the_run_is_answered_once_by_its_own_turn(
    tmp_path: Path, fake: FakeOpenAI, api_key: None
) -> None:
    script = Script(tool_first=False)
    fake.respond_with(lambda body: script(body) + " five six seven eight")

    async def scenario() -> tuple[Harness, Turn, Turn]:
        with fake.holding() as hold:
            h = Harness(tmp_path, _settings(fake))
            running = h.send("a", "steer-backlog")
            await held(hold, 1)
            await reply_streaming(h, running)
            backlog = h.send("b", "steer-backlog")
            hold.open()
            await h.lanes.wait_idle()
        return h, running, backlog

    h, running, backlog = _run(scenario())
    assert len(script.bodies) == 2  # no third turn: the backlog turn is the followup
    assert [(m["role"], m["content"]) for m in stored(h)] == [
        ("user", "a"),
        ("assistant", "reply: a five six seven eight"),
        ("user", "b"),
        ("assistant", "reply: b five six seven eight"),
    ]
    assert list(finals(h)) == [running.run_id, backlog.run_id]


def test_session_file_holds_every_steered_message_once_in_order(
    tmp_path: Path, fake: FakeOpenAI, api_key: None
) -> None:
    script = Script(tool_first=True)
    fake.respond_with(script)
    sent = ["q", "s1", "s2", "s3", "s4", "s5"]
    # Which message arrives while which model call is held: the tool call (s1, taken by the next call),
    # the second call's stream (s2, too late for that run: a followup), that followup's call (s3,
    # steer-backlog: its own turn answers it), that turn's call (s4) and the followup s4 made (s5).
    # One message per call: two too late for the same run are a documented exception to the arrival
    # order (lanes.py: a steered leftover runs ahead of a backlog turn queued before it).
    during = {1: ["s1"], 2: ["s2"], 3: ["s3"], 4: ["s4"], 5: ["s5"]}

    async def scenario() -> Harness:
        with fake.holding() as hold:
            h = Harness(tmp_path, _settings(fake))
            h.send(sent[0], "steer")
            for call, texts in during.items():
                await held(hold, call)
                for text in texts:
                    h.send(text, "steer-backlog" if text == "s3" else "steer")
                hold.release()
            hold.open()
            await h.lanes.wait_idle()
        return h

    h = _run(scenario())
    users = [m["content"] for m in stored(h) if m["role"] == "user"]
    assert users == sent
    idxs = [m["idx"] for m in stored(h)]
    assert idxs == sorted(set(idxs))


def test_a_command_is_never_steered(tmp_path: Path, fake: FakeOpenAI, api_key: None) -> None:
    script = Script(tool_first=True)
    fake.respond_with(script)

    async def scenario() -> tuple[Turn, Turn]:
        with fake.holding() as hold:
            h = Harness(tmp_path, _settings(fake))
            running = h.send("what is the weather?", "steer")
            await held(hold, 1)  # the tool call is out: a steer could join the run now
            command = h.send("/compact", "steer")
            hold.open()
            await h.lanes.wait_idle()
        return running, command

    running, command = _run(scenario())
    assert command is not running
    assert all(m.get("content") != "/compact" for body in script.bodies for m in body)
    assert len(script.bodies) == 2  # the run and its tool round: the command ran on its own


def test_steered_too_late_into_an_aborted_run_is_stored_and_not_answered(
    tmp_path: Path, fake: FakeOpenAI, api_key: None
) -> None:
    script = Script(tool_first=False)
    fake.respond_with(lambda body: script(body) + " five six seven eight")

    async def scenario() -> tuple[Harness, Turn]:
        with fake.holding() as hold:
            h = Harness(tmp_path, _settings(fake))
            running = h.send("a", "steer")
            await held(hold, 1)
            await reply_streaming(h, running)
            h.send("b", "steer")
            h.lanes.abort(session=("main", KEY))
            hold.open()  # the run sees its abort at the next piece of the reply
            await h.lanes.wait_idle()
        return h, running

    h, running = _run(scenario())
    assert len(script.bodies) == 1  # the followup made for "b" shares the abort: no model call
    assert [(m["role"], m["content"]) for m in stored(h)] == [("user", "a"), ("user", "b")]
    runs = finals(h)
    assert [p["state"] for p in runs.values()] == ["aborted", "aborted"]
    assert runs[running.run_id]["followupRunId"] in runs
