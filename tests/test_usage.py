"""The model's real token counts: collected by the turn over every model call, returned by /v1 (the
official openai client reads them), sent in the WebSocket final event, and added to meta.json."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from openclaw_cli.agent.runtime import AgentRuntime
from openclaw_cli.core.paths import Home
from openclaw_cli.sessions.store import SessionStore
from tests import agent_helpers
from tests.agent_helpers import ScriptedModel, WindowedFakeOpenAI, chat_settings, tool_call, turn
from tests.fake_openai import FakeOpenAI
from tests.gateway_helpers import (
    Gateway,
    echo_server,
    gateway_without_extraction,
    request,
)

fake, model = agent_helpers.fake, agent_helpers.model


@pytest.fixture(scope="module")
def gw_fake() -> Iterator[FakeOpenAI]:
    with echo_server() as server:
        yield server


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory, gw_fake: FakeOpenAI) -> Iterator[Gateway]:
    with gateway_without_extraction(tmp_path_factory.mktemp("usage") / "home", gw_fake) as gw:
        yield gw


if TYPE_CHECKING:
    import openai


def _client(gw: Gateway) -> openai.OpenAI:
    import openai  # here: every xdist worker imports every test module, and openai takes ~0.7 s

    return openai.OpenAI(base_url=gw.http + "/v1", api_key=gw.token, max_retries=0, timeout=60)


def _agent_usages(server: FakeOpenAI, text: str) -> list[dict[str, int]]:
    """What the fake reported for the agent calls (they offer tools) whose last message is `text`."""
    return [
        usage
        for body, usage in server.usages
        if body.get("tools") and body["messages"][-1].get("content") == text
    ]


def _turn_usage(server: FakeOpenAI, text: str) -> dict[str, int]:
    """What a turn asking `text` should count: its one agent call and the model's expansion of its weak
    memory query, when the turn asked for one (memory.queryExpansion)."""
    [agent] = _agent_usages(server, text)
    expanded = [usage for query, usage in server.expansion_usages if query == text]
    return {
        name: agent[name] + sum(usage[name] for usage in expanded)
        for name in ("prompt_tokens", "completion_tokens")
    }


def _meta_of_user(gw: Gateway, user_text: str) -> dict[str, Any]:
    """meta.json, as on disk, of the session holding `user_text`."""
    store = SessionStore(Home(gw.home), "main")
    for session_id in store.session_ids_on_disk():
        directory = store.session_dir(session_id)
        if json.dumps(user_text) in (directory / "messages.jsonl").read_text(encoding="utf-8"):
            return dict(json.loads((directory / "meta.json").read_bytes()))
    raise AssertionError(f"no session holds {user_text!r}")


def _meta_with_totals(gw: Gateway, user_text: str, input_tokens: int) -> dict[str, Any]:
    """meta.json once its input total is `input_tokens`: a turn adds its usage after its reply
    (agent/after_turn.py), so the reply may arrive a few milliseconds before the totals."""
    deadline = time.monotonic() + 10
    while True:
        meta = _meta_of_user(gw, user_text)
        if meta.get("totalInputTokens") == input_tokens or time.monotonic() > deadline:
            return meta
        time.sleep(0.01)


def test_v1_usage_is_what_the_model_reported_and_adds_to_meta(gateway: Gateway, gw_fake: FakeOpenAI) -> None:
    client = _client(gateway)
    first = client.chat.completions.create(
        model="main", messages=[{"role": "user", "content": "count my tokens"}], user="usage-ann"
    )
    reported = _turn_usage(gw_fake, "count my tokens")
    assert first.choices[0].message.content == "echo: count my tokens"
    assert first.usage is not None and first.usage.prompt_tokens > 0
    assert first.usage.prompt_tokens == reported["prompt_tokens"]
    assert first.usage.completion_tokens == reported["completion_tokens"] > 0
    assert first.usage.total_tokens == reported["prompt_tokens"] + reported["completion_tokens"]
    before = _meta_with_totals(gateway, "count my tokens", reported["prompt_tokens"])
    assert (before["totalInputTokens"], before["totalOutputTokens"]) == (
        reported["prompt_tokens"],
        reported["completion_tokens"],
    )

    second = client.chat.completions.create(
        model="main", messages=[{"role": "user", "content": "and once more"}], user="usage-ann"
    )
    again = _turn_usage(gw_fake, "and once more")
    assert second.usage is not None and second.usage.prompt_tokens == again["prompt_tokens"]
    [first_call] = _agent_usages(gw_fake, "count my tokens")
    [second_call] = _agent_usages(gw_fake, "and once more")
    assert second_call["prompt_tokens"] > first_call["prompt_tokens"]  # the history grew
    after = _meta_with_totals(gateway, "and once more", before["totalInputTokens"] + again["prompt_tokens"])
    assert after["sessionId"] == before["sessionId"]
    assert after["totalInputTokens"] == before["totalInputTokens"] + again["prompt_tokens"]
    assert after["totalOutputTokens"] == before["totalOutputTokens"] + again["completion_tokens"]
    assert after["totalCost"] == 0  # litellm has no price for "openai/fake": nothing is made up


def test_a_stream_ends_with_the_usage_chunk_when_asked(gateway: Gateway, gw_fake: FakeOpenAI) -> None:
    client = _client(gateway)
    chunks = list(
        client.chat.completions.create(
            model="main",
            messages=[{"role": "user", "content": "stream and count"}],
            user="usage-bob",
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    reported = _turn_usage(gw_fake, "stream and count")
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "echo: stream and count"
    last = chunks[-1]
    assert last.choices == [] and last.usage is not None
    assert (last.usage.prompt_tokens, last.usage.completion_tokens) == (
        reported["prompt_tokens"],
        reported["completion_tokens"],
    )
    assert all(c.usage is None for c in chunks[:-1])

    plain = list(
        client.chat.completions.create(
            model="main",
            messages=[{"role": "user", "content": "no usage asked"}],
            user="usage-bob",
            stream=True,
        )
    )
    assert all(c.usage is None and c.choices for c in plain)


def test_the_websocket_final_event_carries_the_usage(gateway: Gateway, gw_fake: FakeOpenAI) -> None:
    key = "agent:main:direct:usage-cy"
    with gateway.ws() as conn:
        ack = request(conn, "chat.send", {"text": "usage over ws", "sessionKey": key})
        run = ack["payload"]["runId"]
        final: dict[str, Any] = {}
        while not final:
            frame = json.loads(conn.recv(timeout=60))
            payload = frame.get("payload") or {}
            if frame.get("event") == "chat" and payload.get("runId") == run and payload["state"] == "final":
                final = payload
    reported = _turn_usage(gw_fake, "usage over ws")
    assert final["usage"] == {
        "inputTokens": reported["prompt_tokens"],
        "outputTokens": reported["completion_tokens"],
        "cost": None,
    }


# -- in-process: every model call of a turn, and the price ---------------------------------------------


def test_a_turn_sums_the_usage_of_its_tool_rounds(
    home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    runtime = AgentRuntime(Home(home), chat_settings(fake.url, embed_url=fake.url))
    try:
        model.replies += [tool_call("memory_search", {"query": "tea"}), "Nothing about tea yet."]
        result, _ = turn(runtime, "what tea do I like?")
    finally:
        runtime.close()
    calls = [usage for body, usage in fake.usages if body.get("tools")]
    assert len(calls) == 2 and result.reply == "Nothing about tea yet."
    # The model's expansions of the turn's weak memory queries (injection, the tool) count too.
    calls += [usage for _, usage in fake.expansion_usages]
    assert result.usage is not None
    assert result.usage.prompt_tokens == sum(u["prompt_tokens"] for u in calls)
    assert result.usage.completion_tokens == sum(u["completion_tokens"] for u in calls)
    assert result.usage.cost is None
    assert all(
        body["stream_options"] == {"include_usage": True} for body, _ in fake.usages if body.get("tools")
    )
    store = SessionStore(Home(home), "main")
    meta = json.loads((store.session_dir(result.session_id) / "meta.json").read_bytes())
    assert meta["totalInputTokens"] == result.usage.prompt_tokens
    assert meta["totalOutputTokens"] == result.usage.completion_tokens


def test_each_reply_line_says_its_model_and_tokens_and_meta_the_latest_model(
    home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    """Seed 000 §2.1-2.2: meta.json's `model` is the model actually used (it was always null), and each
    assistant line carries its `tokens`: what the provider counted for the call that wrote it."""
    settings = chat_settings(fake.url, embed_url=fake.url, llm={"model": "openai/line-model"})
    runtime = AgentRuntime(Home(home), settings)
    try:
        model.replies += [tool_call("memory_search", {"query": "tea"}), "Nothing about tea yet."]
        result, _ = turn(runtime, "which tea do I like?")
    finally:
        runtime.close()
    store = SessionStore(Home(home), "main")
    view = store.read_session(result.session_id)
    replies = [m for m in view.messages if m["role"] == "assistant"]
    calls = [usage for body, usage in fake.usages if body.get("tools")]
    assert len(replies) == len(calls) == 2
    assert [m["model"] for m in replies] == ["openai/line-model"] * 2
    assert [m["tokens"] for m in replies] == [usage["completion_tokens"] for usage in calls]
    assert all("tokens" not in m and "model" not in m for m in view.messages if m["role"] == "user")
    meta = json.loads((store.session_dir(result.session_id) / "meta.json").read_bytes())
    assert meta["model"] == "openai/line-model"


def test_a_priced_model_gets_a_cost(home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel) -> None:
    """litellm knows gpt-4o-mini's price (its packaged cost map): the fake answers under that name."""
    settings = chat_settings(fake.url, embed_url=fake.url, llm={"model": "openai/gpt-4o-mini"})
    runtime = AgentRuntime(Home(home), settings)
    try:
        model.replies.append("A priced answer.")
        result, _ = turn(runtime, "how much did this cost?")
    finally:
        runtime.close()
    assert result.usage is not None and result.usage.cost is not None
    # priced per token: a cent buys far more tokens than these, and more tokens cost more
    assert 0 < result.usage.cost < 0.01
    assert result.usage.cost > result.usage.prompt_tokens * 1e-9
    meta = json.loads(
        (SessionStore(Home(home), "main").session_dir(result.session_id) / "meta.json").read_bytes()
    )
    assert meta["totalCost"] == pytest.approx(result.usage.cost)
