"""llm.py over real HTTP: failing fast when nobody listens, retries, and structured (JSON) replies.

The transport tests run on both routes (llm.route): an `openai/` model through the openai package, and a
model of another provider through litellm (`hosted_vllm/`, litellm's OpenAI-compatible server provider)."""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest
from pydantic import BaseModel

from openclaw_cli.llm import calls as llm
from openclaw_cli.llm import stream as llm_stream
from tests import fake_openai as fake_server

fake_openai = fake_server.fake_openai
ASK = [{"role": "user", "content": "answer in JSON"}]
ROUTES = pytest.mark.parametrize("provider", ["openai", "hosted_vllm"])


class Answer(BaseModel):
    verdict: str
    score: int


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture(scope="module", autouse=True)
def clients_loaded() -> None:
    # Importing litellm, and its first call's provider code, take seconds: the timings below are about
    # the calls. Preloading both routes loads what their first calls would.
    llm.preload("hosted_vllm/fake")
    llm.preload("openai/fake")


@ROUTES
def test_a_refused_completion_fails_fast_and_says_connection_refused(provider: str) -> None:
    start = time.monotonic()
    with pytest.raises(llm.ModelUnavailable, match="connection refused") as caught:
        llm.complete_json(f"{provider}/fake", ASK, Answer, closed_port_url(), api_key="sk-x", max_retries=5)
    assert time.monotonic() - start < 3
    assert "HTTP 500" not in caught.value.message


@ROUTES
def test_a_refused_embedding_fails_fast_and_says_connection_refused(provider: str) -> None:
    start = time.monotonic()
    with pytest.raises(llm.ModelUnavailable, match="connection refused"):
        llm.embed(
            f"{provider}/text-embedding-3-small", ["tea"], closed_port_url(), api_key="sk-x", max_retries=5
        )
    assert time.monotonic() - start < 3


@ROUTES
def test_a_timeout_is_retried_then_reported_as_a_timeout(fake_openai, provider: str) -> None:  # type: ignore[no-untyped-def]
    fake_openai.delay = 1.5
    start = time.monotonic()
    with pytest.raises(llm.ModelUnavailable, match="after 2 attempts") as caught:
        llm.complete(f"{provider}/fake", ASK, fake_openai.url, max_retries=1, base_delay=0.1, timeout=0.3)
    assert time.monotonic() - start < 3
    assert "Timeout" in caught.value.message or "timed out" in caught.value.message.lower()


@ROUTES
@pytest.mark.parametrize("status", [429, 500, 503])
def test_transient_statuses_are_retried_then_answered(fake_openai, provider: str, status: int) -> None:  # type: ignore[no-untyped-def]
    fake_openai.fail_next(2, status=status)
    fake_openai.script_chat('{"verdict": "same", "score": 3}')
    assert llm.complete_json(
        f"{provider}/fake", ASK, Answer, fake_openai.url, max_retries=2, base_delay=0.05
    ) == Answer(verdict="same", score=3)
    assert len(fake_openai.requests_to("/chat/completions")) == 3


@ROUTES
def test_a_bad_key_is_not_retried(fake_openai, provider: str) -> None:  # type: ignore[no-untyped-def]
    fake_openai.fail_next(1, status=401)
    with pytest.raises(llm.ModelUnavailable, match="401"):
        llm.complete(f"{provider}/fake", ASK, fake_openai.url, max_retries=3, base_delay=0.05)
    assert len(fake_openai.requests_to("/chat/completions")) == 1


@pytest.mark.parametrize(
    "text",
    [
        '{"verdict": "same", "score": 3}',
        '```json\n{"verdict": "same", "score": 3}\n```',
        'Here it is: {"verdict": "same", "score": 3} — hope that helps.',
    ],
)
def test_json_is_found_bare_fenced_or_inside_prose(fake_openai, text: str) -> None:  # type: ignore[no-untyped-def]
    fake_openai.script_chat(text)
    assert llm.complete_json("openai/fake", ASK, Answer, fake_openai.url) == Answer(verdict="same", score=3)


def test_an_invalid_reply_gets_one_corrective_retry(fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.script_chat('{"verdict": "same", "score": "high"}', '{"verdict": "same", "score": 7}')
    assert llm.complete_json("openai/fake", ASK, Answer, fake_openai.url).score == 7
    second: dict[str, Any] = fake_openai.requests_to("/chat/completions")[1].body
    assert second["messages"][-2] == {"role": "assistant", "content": '{"verdict": "same", "score": "high"}'}
    assert "score" in second["messages"][-1]["content"] and "JSON only" in second["messages"][-1]["content"]


@pytest.mark.parametrize(
    ("first", "second", "why"),
    [
        ("I cannot answer that.", "Still prose.", "no JSON object"),
        ('{"verdict": "same", "sco', '{"verdict": "sa', "does not fit"),
        ('{"verdict": "same"}', '{"score": 1}', "does not fit"),
    ],
)
def test_two_invalid_replies_raise_invalid_reply(fake_openai, first: str, second: str, why: str) -> None:  # type: ignore[no-untyped-def]
    fake_openai.script_chat(first, second)
    with pytest.raises(llm.InvalidReply, match=why):
        llm.complete_json("openai/fake", ASK, Answer, fake_openai.url)
    assert len(fake_openai.requests_to("/chat/completions")) == 2


@ROUTES
def test_a_stream_left_early_hangs_up_at_once(fake_openai, provider: str) -> None:  # type: ignore[no-untyped-def]
    """A cancelled turn stops reading the stream; its HTTP response must be closed right there. Left to
    the garbage collector, it was closed inside httpx's connection pool with the pool's lock held, and
    every later request of the process waited for that lock forever (seen as a hung test run)."""
    import gc

    fake_openai.script_chat(" ".join(f"word{n}" for n in range(40)))
    fake_openai.chunk_delay = 0.05  # 2 s for the whole answer
    gc.disable()  # only an explicit close may end the connection early, never a collection
    try:
        pieces = llm_stream.complete_stream(
            f"{provider}/fake", ASK, fake_openai.url, api_key=fake_server.FAKE_API_KEY
        )
        assert next(pieces).text
        pieces.close()
        deadline = time.monotonic() + 1.0
        while fake_openai.broken_streams == 0 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        gc.enable()
    assert fake_openai.broken_streams == 1
