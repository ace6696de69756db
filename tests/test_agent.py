"""The agent loop, in-process: real session files, real memory databases, the fake model over HTTP."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.agent.runtime import AgentRuntime
from openclaw_cli.agent.turn.requests import TurnRequest
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.search.pipeline import SearchRequest
from openclaw_cli.sessions.store import SessionStore
from tests import agent_helpers
from tests.agent_helpers import (
    Events,
    ScriptedModel,
    WindowedFakeOpenAI,
    chat_settings,
    tool_call,
    turn,
)
from tests.fake_openai import FAKE_API_KEY

KEY = "agent:main:main"

# The fake model server that enforces a context window, and the scripted model behind it (agent_helpers).
fake, model = agent_helpers.fake, agent_helpers.model


def make_runtime(home: Path, fake: WindowedFakeOpenAI | None, **overrides: Any) -> AgentRuntime:
    url = fake.url if fake is not None else None
    embed = overrides.pop("embed_url", url)
    return AgentRuntime(Home(home), chat_settings(url, embed_url=embed, **overrides))


@pytest.fixture
def runtime(home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel) -> Iterator[AgentRuntime]:
    rt = make_runtime(home, fake)
    try:
        yield rt
    finally:
        rt.close()


def stored(home: Path, key: str = KEY) -> list[dict[str, Any]]:
    store = SessionStore(Home(home), "main")
    return store.read_messages(store.resolve(key)).messages


def test_a_turn_streams_the_reply_and_stores_both_messages(runtime, model, home, fake):
    model.replies.append("Tea is a fine drink, Alice.")
    result, events = turn(runtime, "hello, I'm Alice")
    assert result.status == "ok"
    assert len(events.of("delta")) == 6  # the fake streams word by word
    assert events.text() == result.reply == "Tea is a fine drink, Alice."
    assert [(m["role"], m["content"]) for m in stored(home)] == [
        ("user", "hello, I'm Alice"),
        ("assistant", "Tea is a fine drink, Alice."),
    ]
    request = fake.requests_to("/chat/completions")[0].body
    assert request["stream"] is True
    assert {tool["function"]["name"] for tool in request["tools"]} == {
        "memory_search",
        "memory_add",
        "memory_forget",
        "memory_note",
        "session_search",
    }


def test_events_reach_the_callers_event_loop_thread(runtime, model):
    seen: list[str] = []
    caller = threading.current_thread().name

    def emit(kind: str, payload: dict[str, Any]) -> None:
        seen.append(threading.current_thread().name)

    async def go() -> Any:
        return await runtime.run_turn(
            TurnRequest("main", KEY, "hi", "r1", user_id="default"), emit, asyncio.Event()
        )

    asyncio.run(go())
    assert seen and set(seen) == {caller}


def test_the_prompt_holds_workspace_files_and_memories_and_records_the_hit(runtime, model, home):
    workspace = Home(home).ensure(Home(home).workspace_dir("main"))
    (workspace / "SOUL.md").write_text("Speak like a cheerful pirate.\n")
    services = runtime.services("main")
    record, _ = services.memory.add(NewMemory(l0="User's favourite tea is sencha", category="preference"))
    result, _ = turn(runtime, "which tea is my favourite tea?")
    system = model.agent_requests[0]["messages"][0]["content"]
    assert "Speak like a cheerful pirate." in system
    assert "favourite tea is sencha" in system
    assert result.memory_ids == [record.id]
    assert services.memory.get(record.id).fsrs.reps == 1  # recalled: an FSRS review


def test_history_window_keeps_tool_pairs_and_drops_the_oldest(home, fake, model):
    rt = make_runtime(home, fake, llm={"contextTokens": 1400})
    try:
        model.replies += [tool_call("memory_search", {"query": "x"}), "found nothing"]
        turn(rt, "look something up")
        for n in range(12):
            model.replies.append(f"answer {n} " + "words " * 30)
            turn(rt, f"question {n} " + "padding " * 30)
    finally:
        rt.close()
    sent = model.agent_requests[-1]["messages"]
    assert len(stored(home)) == 28
    assert len(sent) - 1 < 27  # the window dropped the oldest messages
    assert sent[1]["role"] == "user"  # the history sent starts at a question
    for position, message in enumerate(sent):
        if message["role"] == "tool":
            assert sent[position - 1].get("tool_calls"), "a tool result is never sent without its call"


def test_old_tool_results_are_cut_for_the_model_but_kept_whole_on_disk(runtime, model, home):
    services = runtime.services("main")
    for n in range(4):
        services.memory.add(NewMemory(l0=f"User note number {n}: " + "long detail " * 20))
    model.replies += [
        tool_call("memory_search", {"query": "User note number long detail", "limit": 4}),
        "there are notes",
    ]
    turn(runtime, "what notes?")
    model.replies.append("fine")
    turn(runtime, "thanks")
    tool_on_disk = next(m for m in stored(home) if m["role"] == "tool")
    assert len(tool_on_disk["content"]) > 400
    sent_tool = next(m for m in model.agent_requests[-1]["messages"] if m["role"] == "tool")
    assert "older tool result cut" in sent_tool["content"]
    assert len(sent_tool["content"]) < 300


def test_memory_add_tool_stores_a_memory(runtime, model, home):
    model.replies += [
        tool_call("memory_add", {"text": "User is allergic to peanuts", "category": "profile"}),
        "Noted.",
    ]
    result, events = turn(runtime, "I'm allergic to peanuts")
    assert result.reply == "Noted."
    [tool_event] = events.of("tool")
    memory = runtime.services("main").memory
    assert memory.get(tool_event["result"]["id"]).l0 == "User is allergic to peanuts"
    roles = [m["role"] for m in stored(home)]
    assert roles == ["user", "assistant", "tool", "assistant"]
    # The second request carries the call and its result, in the OpenAI format.
    second = model.agent_requests[1]["messages"]
    assert second[-2]["tool_calls"][0]["function"]["name"] == "memory_add"
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == "call-1"


def test_memory_search_and_forget_tools(runtime, model):
    memory = runtime.services("main").memory
    record, _ = memory.add(NewMemory(l0="User lives in Lisbon", category="profile"))
    model.replies += [tool_call("memory_search", {"query": "Lisbon"}), "You live in Lisbon."]
    _, events = turn(runtime, "where do I live?")
    assert [hit["id"] for hit in events.of("tool")[0]["result"]["results"]] == [record.id]
    model.replies += [tool_call("memory_forget", {"id": record.id}), "Forgotten."]
    _, events = turn(runtime, "forget where I live")
    assert events.of("tool")[0]["result"]["deleted"] == record.id
    assert memory.search(SearchRequest(query="Lisbon")).hits == []


@pytest.mark.parametrize(
    ("name", "arguments", "error"),
    [
        ("memory_add", "{not json", "not valid JSON"),
        ("memory_add", "[1, 2]", "must be a JSON object"),
        ("memory_add", {"text": ""}, "invalid arguments (text"),
        ("memory_search", {"query": "x", "limit": 500}, "invalid arguments (limit"),
        ("memory_forget", {"id": "../../etc/passwd"}, "invalid"),
        ("memory_forget", {"id": "mem-does-not-exist"}, "no memory with id"),
        ("shell_exec", {"cmd": "ls"}, "unknown tool"),
        ("memory_add", {"text": "lives in \ud800"}, "'text' holds a lone surrogate"),
    ],
    ids=[
        "bad-json",
        "not-an-object",
        "empty-text",
        "limit-too-big",
        "path-like-id",
        "unknown-id",
        "unknown-tool",
        "lone-surrogate",
    ],
)
def test_a_bad_tool_call_is_answered_with_an_error_and_the_turn_goes_on(
    runtime, model, name, arguments, error
):
    model.replies += [tool_call(name, arguments), "Sorry about that."]
    result, events = turn(runtime, "do something")
    assert result.status == "ok" and result.reply == "Sorry about that."
    assert error in events.of("tool")[0]["result"]["error"]
    sent_result = json.loads(model.agent_requests[1]["messages"][-1]["content"])
    assert error in sent_result["error"]


def test_a_model_that_only_calls_tools_gets_a_clear_error(runtime, model, home):
    model.replies += [tool_call("memory_search", {"query": "x"}, f"c{n}") for n in range(4)]
    result, _ = turn(runtime, "loop forever")
    assert result.status == "error"
    assert "kept calling tools" in (result.error or "")
    assert stored(home)[0]["content"] == "loop forever"


@pytest.mark.parametrize("command", ["/new", "/reset", "/NEW"])
def test_new_and_reset_start_an_empty_session(runtime, model, home, command):
    turn(runtime, "first conversation")
    store = SessionStore(Home(home), "main")
    old = store.resolve(KEY)
    result, events = turn(runtime, command)
    assert result.session_id != old and result.user_message_idx is None
    assert "Started a new session" in events.of("notice")[0]["text"]
    assert store.read_meta(old)["status"] == "archived"
    assert stored(home) == []  # the command is not a message
    assert len(model.agent_requests) == 1  # a bare command is not sent to the model


def test_after_new_the_model_never_sees_the_command(runtime, model, home, fake):
    turn(runtime, "old topic")
    turn(runtime, "/new")
    model.replies += ["Hi!", "Still here."]
    turn(runtime, "hello")
    turn(runtime, "and again")
    sent = [m for body in model.agent_requests[1:] for m in body["messages"] if m["role"] != "system"]
    assert [m["content"] for m in sent] == ["hello", "hello", "Hi!", "and again"]
    assert "/new" not in json.dumps(sent)
    store = SessionStore(Home(home), "main")
    lines = (store.session_dir(store.resolve(KEY)) / "messages.jsonl").read_text(encoding="utf-8")
    assert "/new" not in lines
    assert [m["content"] for m in stored(home)] == ["hello", "Hi!", "and again", "Still here."]


def test_new_with_text_answers_the_text_in_the_new_session(runtime, model, home):
    turn(runtime, "old topic")
    model.replies.append("Hello again.")
    result, _ = turn(runtime, "/new let's talk about tea")
    assert result.reply == "Hello again." and result.user_message_idx == 0
    assert [m["content"] for m in stored(home)] == ["let's talk about tea", "Hello again."]
    last = model.agent_requests[-1]["messages"]
    assert [(m["role"], m["content"]) for m in last[1:]] == [("user", "let's talk about tea")]


def test_new_collected_with_a_message_starts_the_session_with_it(runtime, model, home):
    """In collect mode `/new` and the message after it may arrive as one turn, joined by a blank line."""
    turn(runtime, "old topic")
    model.replies.append("Fresh start.")
    result, events = turn(runtime, "/new\n\nwhat about coffee?")
    assert "Started a new session" in events.of("notice")[0]["text"]
    assert [m["content"] for m in stored(home)] == ["what about coffee?", "Fresh start."]


def test_new_flushes_the_old_session_to_memory_first(runtime, model, home):
    turn(runtime, "FACT my sister is called Ines")
    turn(runtime, "/new")
    texts = [r.l0 for r in runtime.services("main").memory.list_records()]
    assert "User: my sister is called Ines" in texts


def test_a_daily_reset_tells_the_user_and_keeps_the_message(home, fake, model):
    clock = [datetime(2026, 3, 1, 10, 0).astimezone()]
    rt = AgentRuntime(Home(home), chat_settings(fake.url, embed_url=fake.url), clock=lambda: clock[0])
    try:
        turn(rt, "FACT yesterday I adopted a cat")
        clock[0] += timedelta(days=1)
        result, events = turn(rt, "today's message")
        texts = [r.l0 for r in rt.services("main").memory.list_records()]
    finally:
        rt.close()
    assert "daily-reset" in events.of("notice")[0]["text"]
    assert [m["content"] for m in stored(home)][0] == "today's message"
    assert "User: yesterday I adopted a cat" in texts  # the archived session was flushed first


def test_a_model_error_is_reported_the_message_kept_and_the_next_turn_works(runtime, model, fake, home):
    fake.fail_next(1, status=500, endpoint="/chat/completions")
    result, _ = turn(runtime, "are you there?")
    assert result.status == "error"
    assert "The model did not answer" in (result.error or "") and "HTTP 500" in (result.error or "")
    assert [m["content"] for m in stored(home)] == ["are you there?"]
    model.replies.append("Yes, now I am.")
    result, _ = turn(runtime, "hello?")
    assert result.status == "ok" and result.reply == "Yes, now I am."


def test_a_model_timeout_is_reported_and_the_message_kept(home, fake, model):
    rt = make_runtime(home, fake, llm={"timeoutSeconds": 0.5}, embed_url=None)
    fake.delay = 2.0
    try:
        result, _ = turn(rt, "slow question")
    finally:
        fake.delay = 0.0
        rt.close()
    assert result.status == "error"
    assert "Timeout" in (result.error or "") or "timed out" in (result.error or "").lower()
    assert [m["content"] for m in stored(home)] == ["slow question"]


def test_a_refused_connection_fails_fast_with_a_clear_message(home, monkeypatch):
    import socket
    import time

    monkeypatch.setenv("OPENAI_API_KEY", FAKE_API_KEY)

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    rt = AgentRuntime(Home(home), chat_settings(f"http://127.0.0.1:{port}/v1", llm={"maxRetries": 3}))
    started = time.monotonic()
    try:
        result, _ = turn(rt, "anyone?")
    finally:
        rt.close()
    assert time.monotonic() - started < 10  # not retried: nobody is listening
    assert result.status == "error" and "connection refused" in (result.error or "")
    assert [m["content"] for m in stored(home)] == ["anyone?"]


def test_without_a_model_the_user_is_told_and_remember_this_still_works(home):
    rt = AgentRuntime(Home(home), chat_settings(None))
    try:
        result, events = turn(rt, "remember that my favourite colour is teal")
        records = rt.services("main").memory.list_records()
    finally:
        rt.close()
    notices = [n["text"] for n in events.of("notice")]
    assert any("No model is configured" in n and "openclaw config set llm.model" in n for n in notices)
    assert any("Saved to memory" in n for n in notices)
    assert result.status == "ok" and result.reply == ""
    assert [m["content"] for m in stored(home)] == ["remember that my favourite colour is teal"]
    assert any("teal" in r.l0 for r in records)


def test_cancel_aborts_the_turn_and_keeps_the_users_message(runtime, model, fake, home):
    model.replies.append("one two three four five six seven eight nine ten")
    fake.chunk_delay = 0.2
    events = Events()
    cancel = asyncio.Event()

    def emit(kind: str, payload: dict[str, Any]) -> None:
        events(kind, payload)
        if kind == "delta":
            cancel.set()

    async def go() -> Any:
        return await runtime.run_turn(
            TurnRequest("main", KEY, "count to ten", "r1", user_id="default"), emit, cancel
        )

    result = asyncio.run(go())
    fake.chunk_delay = 0.0
    assert result.status == "aborted"
    assert len(events.of("delta")) < 10
    assert [m["content"] for m in stored(home)] == ["count to ten"]


def test_extraction_is_scheduled_after_a_turn(home, fake, model):
    rt = make_runtime(home, fake, memory={"extraction": {"coalesceSeconds": 0}})
    try:
        turn(rt, "FACT I work as a glassblower")
        extraction = rt.services("main").extraction
        assert extraction.wait_idle(30)
        texts = [r.l0 for r in rt.services("main").memory.list_records()]
    finally:
        rt.close()
    assert "User: I work as a glassblower" in texts
    assert model.extraction_requests


def test_group_chat_messages_carry_the_sender_to_the_model(runtime, model, home):
    key = "agent:main:telegram:default:group:42"
    turn(runtime, "hi all", key, sender="bob")
    assert model.agent_requests[0]["messages"][-1]["content"] == "[bob] hi all"
    assert stored(home, key)[0]["sender"] == "bob"


def test_settings_changed_applies_from_the_next_turn(runtime, model, fake):
    turn(runtime, "before")
    runtime.settings_changed(chat_settings(fake.url, embed_url=fake.url, llm={"model": "openai/other-model"}))
    turn(runtime, "after")
    models = [r.body["model"] for r in fake.requests_to("/chat/completions") if r.body.get("tools")]
    assert models[-2:] == ["fake-chat", "other-model"]


def test_the_message_being_answered_is_sent_even_past_the_budget(home, fake, model):
    workspace = Home(home).ensure(Home(home).workspace_dir("main"))
    (workspace / "AGENTS.md").write_text("Rules. " * 1500)  # alone more than the whole window
    rt = make_runtime(home, fake, llm={"contextTokens": 512})
    try:
        model.replies.append("Still answered.")
        result, _ = turn(rt, "the question")
    finally:
        rt.close()
    assert result.reply == "Still answered."
    assert model.agent_requests[-1]["messages"][-1] == {"role": "user", "content": "the question"}


def test_a_direct_chat_does_not_name_its_one_speaker(runtime, model):
    turn(runtime, "hi", "agent:main:telegram:default:direct:42", sender="42")
    assert model.agent_requests[0]["messages"][-1]["content"] == "hi"
