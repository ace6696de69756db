"""Helpers for the agent, compaction and chat tests: a fake model with a real context window, settings
pointing at the fake server, and an in-process runtime driven like the gateway drives it."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openclaw_cli.agent.runtime import AgentRuntime, TurnRequest, TurnResult
from openclaw_cli.config import Settings
from openclaw_cli.paths import Home
from tests.fake_openai import FakeOpenAI, _error
from tests.memory_helpers import shared_model_cache

OVERFLOW_MESSAGE = (
    "This model's maximum context length is {limit} tokens. However, your messages resulted in {used} "
    "tokens. Please reduce the length of the messages."
)


@dataclass
class WindowedFakeOpenAI(FakeOpenAI):
    """The fake server, refusing chat requests longer than `context_chars` as OpenAI does (HTTP 400
    context_length_exceeded), so that the overflow path runs through real HTTP and litellm's own
    error mapping."""

    context_chars: int | None = None
    overflows: int = 0

    def handle(self, path: str, body: Any, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if self.context_chars is not None and path.rstrip("/").endswith("/chat/completions"):
            used = len(json.dumps(body.get("messages", []), ensure_ascii=False)) if isinstance(body, dict) else 0
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


def chat_settings(url: str | None, **overrides: Any) -> Settings:
    """Settings with the chat model on the fake server (none when url is None) and the shared models."""
    llm: dict[str, Any] = {"maxRetries": 0, "timeoutSeconds": 10}
    if url is not None:
        llm.update(model="openai/fake-chat", apiBase=url)
    llm.update(overrides.pop("llm", {}))
    memory = {"embedding": {"modelCacheDir": str(shared_model_cache())}, **overrides.pop("memory", {})}
    return Settings(llm=llm, memory=memory, **overrides)


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

    async def go() -> TurnResult:
        return await runtime.run_turn(
            TurnRequest("main", key, text, run_id, **fields), events, asyncio.Event()
        )

    return asyncio.run(go()), events


def runtime_for(home: Path, settings: Settings) -> AgentRuntime:
    return AgentRuntime(Home(home), settings)
