"""Helpers for the agent, compaction and chat tests: a fake model with a real context window, settings
pointing at the fake server, and an in-process runtime driven like the gateway drives it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.agent.runtime import AgentRuntime
from openclaw_cli.agent.turn.requests import TurnRequest, TurnResult
from openclaw_cli.config.loading import Settings
from openclaw_cli.core.paths import Home
from tests.fake_openai import FAKE_API_KEY, FakeOpenAI, _error
from tests.memory_helpers import shared_model_cache

OVERFLOW_MESSAGE = (
    "This model's maximum context length is {limit} tokens. However, your messages resulted in {used} "
    "tokens. Please reduce the length of the messages."
)


@dataclass
class WindowedFakeOpenAI(FakeOpenAI):
    """The fake server, refusing the agent's chat requests (those offering tools) longer than
    `context_chars` as OpenAI does (HTTP 400 context_length_exceeded), so that the overflow path runs
    through real HTTP and the route's own error mapping (llm.route). Extraction and summary requests are exempt: the
    tests aim at the turn's own request."""

    context_chars: int | None = None
    overflows: int = 0

    def handle(self, path: str, body: Any, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        chat = path.rstrip("/").endswith("/chat/completions")
        if self.context_chars is not None and chat and isinstance(body, dict) and body.get("tools"):
            used = (
                len(json.dumps(body.get("messages", []), ensure_ascii=False)) if isinstance(body, dict) else 0
            )
            if used > self.context_chars:
                with self._lock:
                    self.overflows += 1
                    self.requests.append(self._recorded(path, body, headers))
                error = _error(400, OVERFLOW_MESSAGE.format(limit=self.context_chars, used=used))
                error["error"]["code"] = "context_length_exceeded"
                return 400, error
        return super().handle(path, body, headers)

    @staticmethod
    def _recorded(path: str, body: Any, headers: dict[str, str]) -> Any:
        from tests.fake_openai import Recorded

        return Recorded(path, body, headers)


def chat_settings(url: str | None, *, embed_url: str | None = None, **overrides: Any) -> Settings:
    """Settings with the chat model on the fake server (none when url is None). Embeddings come from
    the fake server too when `embed_url` is given (fast), else from the packaged local model."""
    llm: dict[str, Any] = {"maxRetries": 0, "timeoutSeconds": 10}
    if url is not None:
        llm.update(model="openai/fake-chat", apiBase=url)
    llm.update(overrides.pop("llm", {}))
    embedding: dict[str, Any] = {"modelCacheDir": str(shared_model_cache())}
    if embed_url is not None:
        embedding.update(provider="litellm", model="openai/text-embedding-3-small", apiBase=embed_url)
        embedding.update(dimensions=64, maxRetries=0)
    memory = {"embedding": embedding, **overrides.pop("memory", {})}
    return Settings(llm=llm, memory=memory, **overrides)


def config_env(url: str | None, *, embed_url: str | None = None) -> dict[str, str]:
    """The same settings as OPENCLAW_* variables, for a CLI process."""
    env = {"OPENCLAW_LLM__MAXRETRIES": "0", "OPENCLAW_LLM__TIMEOUTSECONDS": "10", "OPENAI_API_KEY": "sk-fake"}
    if url is not None:
        env.update(OPENCLAW_LLM__MODEL="openai/fake-chat", OPENCLAW_LLM__APIBASE=url)
    if embed_url is not None:
        prefix = "OPENCLAW_MEMORY__EMBEDDING__"
        env.update(
            {
                prefix + "PROVIDER": "litellm",
                prefix + "MODEL": "openai/text-embedding-3-small",
                prefix + "APIBASE": embed_url,
                prefix + "DIMENSIONS": "64",
                prefix + "MAXRETRIES": "0",
            }
        )
    return env


@dataclass
class Events:
    items: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def __call__(self, kind: str, payload: dict[str, Any]) -> None:
        self.items.append((kind, payload))

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [payload for k, payload in self.items if k == kind]

    def text(self) -> str:
        return "".join(p["text"] for p in self.of("delta"))


def turn(
    runtime: AgentRuntime, text: str, key: str = "agent:main:main", *, run_id: str = "r1", **fields: Any
) -> tuple[TurnResult, Events]:
    events = Events()
    if "user_id" not in fields:  # the person an entry point would resolve: the owner in the main session
        from openclaw_cli.identity.persons import for_key
        from openclaw_cli.sessions.keys import parse_key

        fields["user_id"] = for_key(runtime.settings, parse_key(key), sender=fields.get("sender")).person

    async def go() -> TurnResult:
        return await runtime.run_turn(
            TurnRequest("main", key, text, run_id, **fields), events, asyncio.Event()
        )

    return asyncio.run(go()), events


def runtime_for(home: Path, settings: Settings) -> AgentRuntime:
    return AgentRuntime(Home(home), settings)


def system_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    first = messages[0] if messages else {}
    return str(first.get("content") or "") if first.get("role") == "system" else ""


@dataclass
class ScriptedModel:
    """The fake model's brain for agent tests: the agent's own requests (they carry tools) are answered
    from `replies` in order; summary and extraction requests, which come from the same process at
    moments the test does not choose, are answered by what they ask for."""

    replies: list[Any] = field(default_factory=list)
    agent_requests: list[dict[str, Any]] = field(default_factory=list)
    summary_requests: list[dict[str, Any]] = field(default_factory=list)
    extraction_requests: list[dict[str, Any]] = field(default_factory=list)
    # Lines of an extraction transcript containing this marker become a memory (a fact to find later).
    fact_marker: str = "FACT"
    default_reply: str = "ok"

    def __call__(self, body: dict[str, Any]) -> Any:
        system = system_text(body)
        if "running summary of a conversation" in system:
            self.summary_requests.append(body)
            transcript = str(body["messages"][-1]["content"])
            return f"SUMMARY({transcript.count(chr(10) + '[')} lines)"
        if "extract long-term memories" in system:
            self.extraction_requests.append(body)
            return self._extraction(str(body["messages"][-1]["content"]))
        if "Two memories about the same user" in system:
            return '{"relation": "new"}'
        self.agent_requests.append(body)
        return self.replies.pop(0) if self.replies else self.default_reply

    def _extraction(self, transcript: str) -> str:
        import re

        items = []
        for line in transcript.splitlines():
            match = re.match(r"^\[(\d+)\] \S* user(?: \([^)]*\))?: (.*)$", line)
            if match and self.fact_marker in match.group(2):
                text = match.group(2).split(self.fact_marker, 1)[1].strip(" :")
                items.append(
                    {"category": "profile", "l0": f"User: {text}", "messages": [int(match.group(1))]}
                )
        return json.dumps({"memories": items})


def tool_call(name: str, arguments: dict[str, Any] | str, call_id: str = "call-1") -> dict[str, Any]:
    """An assistant message asking for one tool call (what a model sends)."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}],
    }


# Fixtures shared by the agent, compaction and chat tests (a test module re-exports the ones it uses).


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[WindowedFakeOpenAI]:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_API_KEY)
    server = WindowedFakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def model(fake: WindowedFakeOpenAI) -> ScriptedModel:
    brain = ScriptedModel()
    fake.respond_with(brain)
    return brain
