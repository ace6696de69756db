"""The fake model server itself: what the other tests rely on it to do, through a real client."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

from tests import fake_openai as fake_server
from tests.fake_openai import FAKE_API_KEY, FakeOpenAI

if TYPE_CHECKING:
    from openai import OpenAI

fake_openai = fake_server.fake_openai

REPO = Path(__file__).resolve().parent.parent


def client(fake: FakeOpenAI) -> OpenAI:
    from openai import OpenAI  # here, not at the top: each xdist worker imports every test module (~1.2 s)

    return OpenAI(base_url=fake.url, api_key=FAKE_API_KEY, max_retries=0)


def test_streamed_reply_arrives_word_by_word_and_joins_to_the_scripted_text(fake_openai: FakeOpenAI) -> None:
    fake_openai.script_chat("the quick brown fox")
    stream = client(fake_openai).chat.completions.create(
        model="fake", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    pieces = [c.choices[0].delta.content for c in stream if c.choices and c.choices[0].delta.content]
    assert pieces == ["the ", "quick ", "brown ", "fox"]


def test_tool_call_reply_is_returned_whole_with_its_finish_reason(fake_openai: FakeOpenAI) -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "memory_search", "arguments": '{"q": "x"}'},
    }
    fake_openai.script_chat({"role": "assistant", "content": None, "tool_calls": [call]})
    answer = client(fake_openai).chat.completions.create(
        model="fake", messages=[{"role": "user", "content": "?"}]
    )
    choice = answer.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.tool_calls is not None
    assert choice.message.tool_calls[0].function.name == "memory_search"


def test_responder_sees_the_request_after_the_script_is_used_up(fake_openai: FakeOpenAI) -> None:
    fake_openai.script_chat("scripted")
    fake_openai.respond_with(lambda body: "echo: " + body["messages"][-1]["content"])
    api = client(fake_openai)
    texts = [
        api.chat.completions.create(model="fake", messages=[{"role": "user", "content": word}])
        .choices[0]
        .message.content
        for word in ("one", "two")
    ]
    assert texts == ["scripted", "echo: two"]


def test_delay_holds_every_answer(fake_openai: FakeOpenAI) -> None:
    fake_openai.delay = 0.3
    started = time.monotonic()
    client(fake_openai).chat.completions.create(model="fake", messages=[{"role": "user", "content": "hi"}])
    assert time.monotonic() - started >= 0.3


def test_standalone_server_prints_its_url_and_obeys_control_requests() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.fake_openai", "--reply", "standalone"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        from openai import OpenAI

        api = OpenAI(base_url=url, api_key=FAKE_API_KEY, max_retries=0)
        ask = [{"role": "user", "content": "hi"}]
        assert (
            api.chat.completions.create(model="fake", messages=ask).choices[0].message.content == "standalone"
        )
        control = urllib.request.Request(
            url.removesuffix("/v1") + "/control/script",
            data=json.dumps({"replies": ["steered"]}).encode(),
            headers={"Content-Type": "application/json"},
        )
        urllib.request.urlopen(control, timeout=5).read()
        assert api.chat.completions.create(model="fake", messages=ask).choices[0].message.content == "steered"
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_hold_keeps_chat_answers_back_until_released_in_arrival_order(fake_openai: FakeOpenAI) -> None:
    """What the tests that need a model call in flight rely on: nothing is answered before its release,
    a streamed reply has begun (its first word is out) while held, and embeddings are never held."""
    from concurrent.futures import ThreadPoolExecutor

    fake_openai.script_chat("first", "second words here")
    api = client(fake_openai)

    def plain() -> str:
        answer = api.chat.completions.create(model="fake", messages=[{"role": "user", "content": "a"}])
        return str(answer.choices[0].message.content)

    def streamed(seen: list[str]) -> str:
        stream = api.chat.completions.create(
            model="fake", messages=[{"role": "user", "content": "b"}], stream=True
        )
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                seen.append(chunk.choices[0].delta.content)
        return "".join(seen)

    seen: list[str] = []
    with fake_openai.holding() as hold, ThreadPoolExecutor(2) as pool:
        first = pool.submit(plain)
        assert hold.wait_arrived(1)
        second = pool.submit(streamed, seen)
        assert hold.wait_arrived(2)
        assert api.embeddings.create(model="e", input="not held").data  # answered meanwhile
        assert not first.done() and not second.done()
        hold.release()
        assert first.result(30) == "first"
        deadline = time.monotonic() + 30
        while not seen:  # the held stream's first word reached the client
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert seen == ["second "] and not second.done()
        hold.release()
        assert second.result(30) == "second words here"
    assert plain() == fake_openai.default_reply  # out of the block: no hold


def test_a_hold_for_some_requests_lets_the_others_through(fake_openai: FakeOpenAI) -> None:
    from concurrent.futures import ThreadPoolExecutor

    api = client(fake_openai)

    def ask(text: str) -> str:
        answer = api.chat.completions.create(model="fake", messages=[{"role": "user", "content": text}])
        return str(answer.choices[0].message.content)

    fake_openai.respond_with(lambda body: f"re: {fake_server.last_user_text(body)}")
    with fake_openai.holding(only=fake_server.asking("slow")) as hold, ThreadPoolExecutor(1) as pool:
        slow = pool.submit(ask, "slow")
        assert hold.wait_arrived(1)
        assert ask("quick") == "re: quick" and not slow.done()  # not held, not counted
        assert hold.arrived == 1
        hold.release()
        assert slow.result(30) == "re: slow"
