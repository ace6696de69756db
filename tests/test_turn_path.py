"""The turn path of issue 23: each turn times its stages and reports them; what protects no data (the
session's usage totals) is done after the reply, in order, and still done when the process closes."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.agent.after_turn import AfterTurn
from openclaw_cli.agent.runtime import AgentRuntime
from openclaw_cli.agent.token_memo import MEMO_SESSIONS, TokenMemo
from openclaw_cli.agent.turn.stages import server_timing, span
from openclaw_cli.core.paths import Home
from openclaw_cli.sessions.store import SessionStore
from tests import agent_helpers
from tests.agent_helpers import ScriptedModel, WindowedFakeOpenAI, chat_settings, turn
from tests.fake_openai import FakeOpenAI
from tests.gateway_helpers import (
    Gateway,
    chat_until_final,
    echo_server,
    gateway_without_extraction,
    request,
)

fake, model = agent_helpers.fake, agent_helpers.model

# What every answered turn times (agent/turn/loop.py, agent/turn/history.py, agent/runtime.py).
TURN_STAGES = {
    "session append",
    "session read",
    "token counting",
    "memory injection",
    "compaction check",
    "context assembly",
    "model call",
    "reply append",
    "extraction scheduling",
    "turn other",
    "thread hop",
}


def _meta(home: Path, session_id: str) -> dict[str, Any]:
    path = SessionStore(Home(home), "main").session_dir(session_id) / "meta.json"
    return dict(json.loads(path.read_bytes()))


# -- in-process ---------------------------------------------------------------------------------------


def test_a_turn_reports_the_milliseconds_of_its_stages(
    home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    runtime = AgentRuntime(Home(home), chat_settings(fake.url, embed_url=fake.url))
    try:
        model.replies.append("Timed.")
        result, _ = turn(runtime, "how long does this take?")
    finally:
        runtime.close()
    assert result.reply == "Timed."
    assert set(result.stages) >= TURN_STAGES, set(result.stages) ^ TURN_STAGES
    assert all(ms >= 0 for ms in result.stages.values()), result.stages
    # the fake model answers over real HTTP: the call is the one stage that cannot be free
    assert result.stages["model call"] > 0


def test_the_usage_totals_are_added_after_the_reply_and_before_close(
    home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    runtime = AgentRuntime(Home(home), chat_settings(fake.url, embed_url=fake.url))
    model.replies += ["One.", "Two."]
    try:
        first, _ = turn(runtime, "first question")
        runtime.services("main").after_turn.settle()
        settled = _meta(home, first.session_id)
        second, _ = turn(runtime, "second question")
    finally:
        runtime.close()  # right after the reply: what the turn left for later is done before it returns
    assert first.usage is not None and second.usage is not None
    assert settled["totalInputTokens"] == first.usage.prompt_tokens > 0
    closed = _meta(home, second.session_id)
    assert closed["totalInputTokens"] == first.usage.prompt_tokens + second.usage.prompt_tokens
    assert closed["totalOutputTokens"] == first.usage.completion_tokens + second.usage.completion_tokens


def test_the_session_read_serves_the_first_round_once(
    home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    """The memory query, the compaction check and the first prompt share one read, and that prompt
    still holds the message the turn just stored, after the earlier exchange."""
    runtime = AgentRuntime(Home(home), chat_settings(fake.url, embed_url=fake.url))
    model.replies += ["Earlier answer.", "Later answer."]
    try:
        turn(runtime, "an earlier question")
        turn(runtime, "a later question")
    finally:
        runtime.close()
    sent = [m["content"] for m in model.agent_requests[-1]["messages"] if m["role"] != "system"]
    assert sent == ["an earlier question", "Earlier answer.", "a later question"]


def test_after_turn_actions_run_in_order_and_a_failure_stops_none_after_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    after = AfterTurn()
    done: list[int] = []
    release = threading.Event()

    def broken() -> None:
        raise OSError("disk full")

    after.submit("waiting", release.wait)
    after.submit("first", lambda: done.append(1))
    after.submit("the totals", broken)
    after.submit("third", lambda: done.append(3))
    assert done == []  # the caller did not wait for any of it
    release.set()
    with caplog.at_level("WARNING", logger="openclaw.agent"):
        after.settle()
        after.close()
    assert done == [1, 3]
    assert "the totals failed after the turn: OSError: disk full" in caplog.text


def test_after_turn_close_without_work_is_quiet(caplog: pytest.LogCaptureFixture) -> None:
    """Quiet: with nothing submitted no worker thread is ever started, settle and close (twice: a runtime
    closes its retired services too) return without logging, and work handed over after the close runs
    on the caller's thread, since nothing is left to run it."""
    before = {t.ident for t in threading.enumerate()}
    after = AfterTurn()
    with caplog.at_level("DEBUG", logger="openclaw.agent"):
        after.settle()
        after.close()
        after.close()
    started = [t.name for t in threading.enumerate() if t.ident not in before]
    assert started == [] and caplog.records == []
    ran_on: list[str] = []
    after.submit("late", lambda: ran_on.append(threading.current_thread().name))
    assert ran_on == [threading.current_thread().name]


def test_a_span_counts_also_a_block_that_raises() -> None:
    stages: dict[str, float] = {}
    with pytest.raises(ValueError), span(stages, "failing step"):
        raise ValueError("no")
    with span(stages, "failing step"):
        pass
    assert set(stages) == {"failing step"} and stages["failing step"] >= 0
    assert server_timing({"session append": 1.25, "model call": 30.0}) == (
        "session-append;dur=1.250, model-call;dur=30.000"
    )


# -- through a gateway ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gw_fake() -> Iterator[FakeOpenAI]:
    with echo_server() as server:
        yield server


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory, gw_fake: FakeOpenAI) -> Iterator[Gateway]:
    with gateway_without_extraction(tmp_path_factory.mktemp("turn-path") / "home", gw_fake) as gw:
        yield gw


def _post(gw: Gateway, body: dict[str, Any]) -> tuple[http.client.HTTPResponse, str]:
    conn = http.client.HTTPConnection("127.0.0.1", gw.port, timeout=60)
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {gw.token}"}
    conn.request("POST", "/v1/chat/completions", json.dumps(body), headers)
    reply = conn.getresponse()
    text = reply.read().decode("utf-8")
    conn.close()
    return reply, text


def _names(timing: str) -> set[str]:
    return {entry.split(";dur=")[0].strip() for entry in timing.split(",")}


def test_v1_answers_with_a_server_timing_header(gateway: Gateway) -> None:
    body = {"model": "main", "user": "timing-ann", "messages": [{"role": "user", "content": "time me"}]}
    reply, text = _post(gateway, body)
    assert reply.status == 200 and json.loads(text)["choices"][0]["message"]["content"] == "echo: time me"
    names = _names(reply.getheader("Server-Timing") or "")
    wanted = {"request", "journal-accept", "lane-wait", "model-call", "journal-done"}
    assert wanted | {name.replace(" ", "-") for name in TURN_STAGES} <= names


def test_v1_stream_gives_the_timing_as_a_comment_clients_skip(gateway: Gateway) -> None:
    body = {
        "model": "main",
        "user": "timing-bo",
        "stream": True,
        "messages": [{"role": "user", "content": "hi"}],
    }
    reply, text = _post(gateway, body)
    assert reply.status == 200
    lines = [line for line in text.splitlines() if line]
    assert lines[-1] == "data: [DONE]"
    [comment] = [line for line in lines if line.startswith(":")]
    assert comment.startswith(": server-timing ") and "model-call;dur=" in comment
    assert lines.index(comment) == len(lines) - 2  # after the last chunk, before [DONE]
    import openai  # here: every xdist worker imports every test module, and openai takes ~0.7 s

    client = openai.OpenAI(base_url=gateway.http + "/v1", api_key=gateway.token, max_retries=0, timeout=60)
    chunks = list(client.chat.completions.create(**{**body, "user": "timing-cy"}))  # type: ignore[call-overload]
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "echo: hi"


def test_the_final_chat_event_carries_the_stages(gateway: Gateway) -> None:
    with gateway.ws() as conn:
        ack = request(conn, "chat.send", {"text": "staged", "sessionKey": "agent:main:direct:stages"})
        [*_, final] = chat_until_final(conn, {ack["payload"]["runId"]})
    assert final["state"] == "final" and final["text"] == "echo: staged"
    stages = final["timings"]["stages"]
    assert set(stages) >= TURN_STAGES
    assert sum(stages.values()) <= final["runMs"] + 1  # the stages split the run, they add nothing


def test_token_memo_gives_counts_back_only_for_unchanged_messages() -> None:
    memo = TokenMemo()
    counted = [
        {"idx": 0, "content": "my card is 4111", "tokens": 7},
        {"idx": 1, "content": "noted", "tokens": 2},
    ]
    memo.remember("s1", counted)
    # read again: message 0 was redacted since (a purge rewrites it in place), message 1 is as it was
    again = [
        {"idx": 0, "content": "[redacted]"},
        {"idx": 1, "content": "noted"},
        {"idx": 2, "content": "new"},
    ]
    memo.fill("s1", again)
    assert [m.get("tokens") for m in again] == [None, 2, None]
    other = [{"idx": 1, "content": "noted"}]
    memo.fill("s2", other)  # another session's message 1 is another message
    assert "tokens" not in other[0]


def test_token_memo_keeps_only_the_most_recent_sessions() -> None:
    memo = TokenMemo()
    for number in range(MEMO_SESSIONS + 1):
        memo.remember(f"s{number}", [{"idx": 0, "content": "hi", "tokens": 1}])
    oldest, newest = [{"idx": 0, "content": "hi"}], [{"idx": 0, "content": "hi"}]
    memo.fill("s0", oldest)
    memo.fill(f"s{MEMO_SESSIONS}", newest)
    assert "tokens" not in oldest[0] and newest[0]["tokens"] == 1


def test_after_close_an_action_runs_in_the_callers_thread() -> None:
    after = AfterTurn()
    after.close()
    before = set(threading.enumerate())
    ran_in: list[str] = []
    after.submit("late totals", lambda: ran_in.append(threading.current_thread().name))
    assert ran_in == [threading.current_thread().name]  # at once, and no worker left behind
    assert set(threading.enumerate()) <= before
