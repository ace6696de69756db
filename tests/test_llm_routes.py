"""Which way a model is called (llm.route): `openai/` models through the openai package, without litellm
(seconds of import, ~10 ms of CPU a call); reasoning models and other providers through litellm. What a
caller gets must not depend on the way: the same prices, errors, overflow and vectors."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_cli.llm import calls as llm
from openclaw_cli.llm import openai_models as llm_openai
from openclaw_cli.llm import stream as llm_stream
from openclaw_cli.llm.errors import ContextOverflow
from tests import fake_openai as fake_server
from tests.agent_helpers import config_env
from tests.import_trace import traced

fake_openai = fake_server.fake_openai
ASK = [{"role": "user", "content": "hello"}]


@pytest.mark.parametrize(
    ("model", "direct"),
    [
        ("openai/gpt-4o-mini", True),
        ("openai/qwen2.5-7b-instruct", True),  # a local OpenAI-compatible server's model
        ("openai/o3-mini", False),  # reasoning models refuse temperature 0; litellm rewrites it
        ("openai/gpt-5-mini", False),
        ("hosted_vllm/qwen2.5", False),
        ("anthropic/claude-3-5-haiku", False),
        ("gpt-4o-mini", False),  # no provider named: litellm decides
    ],
)
def test_openai_models_are_called_directly_and_the_rest_through_litellm(model: str, direct: bool) -> None:
    assert llm_openai.handles(model) is direct


def test_a_chat_with_an_openai_model_never_imports_litellm(home: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.script_chat("Hello from the direct route.")
    env = config_env(fake_openai.url, embed_url=fake_openai.url)
    proc, modules = traced(home, "chat", "--local", env=env, input="hi there\n")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Hello from the direct route." in proc.stdout
    imported = {name.split(".")[0] for name in modules}
    assert "openai" in imported and "litellm" not in imported


def test_prices_are_litellms_for_every_openai_chat_model_it_lists() -> None:
    litellm = llm.client()
    listed = [
        name
        for name, entry in llm_openai._prices().items()
        if isinstance(entry, dict)
        and entry.get("litellm_provider") == "openai"
        and entry.get("mode") == "chat"
        and "/" not in name
        and llm_openai.handles(f"openai/{name}")
    ]
    assert len(listed) > 20  # gpt-4o, gpt-4.1, gpt-3.5 families at least
    for name in listed:
        for prompt, completion in ((1, 1), (1234, 567), (100_000, 4_000)):
            theirs = sum(
                litellm.cost_per_token(
                    model=f"openai/{name}", prompt_tokens=prompt, completion_tokens=completion
                )
            )
            ours = llm_openai.price(f"openai/{name}", prompt, completion)
            assert ours == pytest.approx(theirs, rel=1e-12, abs=1e-15), (name, prompt, completion)


def test_a_model_the_map_does_not_list_has_no_price() -> None:
    assert llm_openai.price("openai/my-local-model", 100, 10) is None


def test_a_streamed_call_is_priced_without_litellm(fake_openai) -> None:  # type: ignore[no-untyped-def]
    pieces = list(llm_stream.complete_stream("openai/gpt-4o-mini", ASK, fake_openai.url))
    usage = pieces[-1].usage
    assert usage is not None and usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.cost == pytest.approx(usage.prompt_tokens * 1.5e-7 + usage.completion_tokens * 6e-7)


@pytest.mark.parametrize(
    "message",
    [
        "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.",
        "the request exceeds the available context size, try increasing it",  # llama.cpp
        "prompt is too long: 9000 tokens > 8192 maximum",
    ],
)
@pytest.mark.parametrize("provider", ["openai", "hosted_vllm"])
def test_an_overflow_said_only_in_words_is_an_overflow(fake_openai, provider: str, message: str) -> None:  # type: ignore[no-untyped-def]
    fake_openai.fail_next(1, status=400, message=message)
    with pytest.raises(ContextOverflow):
        list(llm_stream.complete_stream(f"{provider}/fake", ASK, fake_openai.url, max_retries=2))
    assert len(fake_openai.requests_to("/chat/completions")) == 1  # not retried


def test_another_bad_request_is_not_an_overflow(fake_openai) -> None:  # type: ignore[no-untyped-def]
    fake_openai.fail_next(1, status=400, message="unknown parameter: frobnicate")
    with pytest.raises(llm.ModelUnavailable, match="HTTP 400: unknown parameter") as caught:
        list(llm_stream.complete_stream("openai/fake", ASK, fake_openai.url, max_retries=2))
    assert not isinstance(caught.value, ContextOverflow)


def test_without_a_key_the_call_says_so_once_and_sends_nothing(fake_openai, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("OPENAI_API_KEY")
    # A server beyond loopback (TEST-NET-1, never reached): one on loopback gets a placeholder key.
    with pytest.raises(llm.ModelUnavailable, match="no API key: set .*llm.apiKey") as caught:
        llm.complete("openai/fake", ASK, "http://192.0.2.1/v1", max_retries=3, base_delay=5)
    assert "after" not in caught.value.message  # not retried
    assert fake_openai.requests == []


def test_without_a_key_a_server_on_loopback_gets_a_placeholder(fake_openai, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("OPENAI_API_KEY")
    assert llm.complete("openai/fake", ASK, fake_openai.url) == fake_openai.default_reply
    headers = {name.lower(): value for name, value in fake_openai.requests[-1].headers.items()}
    assert headers["authorization"] == f"Bearer {llm_openai.LOCAL_PLACEHOLDER_KEY}"


@pytest.mark.parametrize(
    ("api_base", "local"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://127.9.9.9/v1", True),
        ("http://192.168.1.5:8080/v1", False),
        ("https://api.openai.com/v1", False),
        ("http://localhost.example.com/v1", False),
        (None, False),
        ("not a url", False),
    ],
)
def test_which_addresses_are_on_loopback(api_base: str | None, local: bool) -> None:
    assert llm_openai.on_loopback(api_base) is local


def test_embeddings_arrive_as_the_server_sent_them(fake_openai) -> None:  # type: ignore[no-untyped-def]
    vectors = llm.embed("openai/text-embedding-3-small", ["green tea", "black coffee"], fake_openai.url)
    dims = fake_openai.dimensions
    assert vectors == [
        fake_server.hashed_vector("green tea", dims),
        fake_server.hashed_vector("black coffee", dims),
    ]
    assert [r.body["encoding_format"] for r in fake_openai.requests_to("/embeddings")] == ["float"]


def test_a_client_is_kept_per_address_and_key(fake_openai, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    first = llm_openai.client(fake_openai.url, None, 10.0)
    assert llm_openai.client(fake_openai.url, None, 10.0) is first
    monkeypatch.setenv("OPENAI_API_KEY", "sk-another-key")
    assert llm_openai.client(fake_openai.url, None, 10.0) is not first
    assert llm.complete("openai/fake", ASK, fake_openai.url) == fake_openai.default_reply
    headers = {name.lower(): value for name, value in fake_openai.requests[-1].headers.items()}
    assert headers["authorization"] == "Bearer sk-another-key"


def test_the_request_body_is_what_the_packages_own_create_would_send(fake_openai) -> None:  # type: ignore[no-untyped-def]
    """llm_openai posts the body as it is, skipping create()'s walk through the type annotations; the
    server must see the same request either way."""
    tool = {
        "type": "function",
        "function": {
            "name": "memory_search",
            "description": "search memories",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    }
    history = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "what tea do I like? 你喜欢什么茶"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "memory_search", "arguments": '{"query": "tea"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "sencha"},
    ]
    fields = {"messages": history, "tools": [tool], "temperature": 0}
    for stream in (False, True):
        extra = {"stream": True, "stream_options": {"include_usage": True}} if stream else {}
        answer = llm_openai.completion(
            model="openai/fake", timeout=10.0, api_base=fake_openai.url, **fields, **extra
        )
        if stream:
            list(answer)
        created = llm_openai.client(fake_openai.url, None, 10.0).chat.completions.create(
            model="fake", **fields, **extra
        )
        if stream:
            list(created)
        ours, theirs = fake_openai.requests_to("/chat/completions")[-2:]
        assert ours.body == theirs.body
