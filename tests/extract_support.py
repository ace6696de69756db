"""Helpers for the extraction tests: real sessions on disk, real memory databases, the fake model server."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from openclaw_cli.config.loading import Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.extraction.run import ExtractionService
from openclaw_cli.memory.service import MemoryService
from openclaw_cli.memory.store.records import MemoryRecord
from openclaw_cli.sessions.lifecycle import ResetPolicy, SessionManager
from openclaw_cli.sessions.store import SessionStore
from openclaw_cli.sessions.writer import Durability
from tests.memory_helpers import with_shared_models

DM_KEY = "agent:main:telegram:direct:lin"
GROUP_KEY = "agent:main:telegram:bot1:group:g1"
T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def settings_for(
    url: str | None = None, *, retries: int = 0, timeout: float = 10, **extraction: Any
) -> Settings:
    """With `url`: the extraction model and the embedder are the fake server; without: no model at all
    (the local embedder, from the shared converted-model cache)."""
    memory: dict[str, Any] = {"extraction": extraction}
    llm: dict[str, Any] = {}
    if url:
        memory["embedding"] = {
            "provider": "litellm",
            "model": "openai/text-embedding-3-small",
            "apiBase": url,
            "dimensions": 64,
            "maxRetries": 0,
        }
        llm = {"model": "openai/fake", "apiBase": url, "maxRetries": retries, "timeoutSeconds": timeout}
    return with_shared_models(Settings(memory=memory, llm=llm))


class Clock:
    """A clock the test moves by hand (rate limits are measured in the injected time)."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


class World:
    """One home with a session store, a memory service and an extraction service over them."""

    def __init__(self, home: Path, settings: Settings, clock: Clock | None = None, **options: Any) -> None:
        self.home = Home(home)
        self.settings = settings
        self.clock = clock or Clock()
        self.store = SessionStore(self.home, "main", Durability("never"))
        self.sessions = SessionManager(self.store, ResetPolicy(at_hour=None))
        self.memory = MemoryService(self.home, "main", settings.memory)
        self.extraction = ExtractionService(
            self.home, "main", settings, self.memory, self.store, clock=self.clock, **options
        )
        self._minute = 0

    def say(
        self, content: str, *, role: str = "user", sender: str | None = None, key: str = DM_KEY
    ) -> dict[str, Any]:
        """Append a message a minute after the previous one; returns it as stored (with idx and ts)."""
        self._minute += 1
        result = self.sessions.append(key, role, content, T0 + timedelta(minutes=self._minute), sender=sender)
        self.session_id = result.session_id
        return result.message

    def records(self) -> list[MemoryRecord]:
        return self.memory.list_records()

    def close(self) -> None:
        self.extraction.close()
        self.memory.close()
        self.store.close()


def reply(*memories: dict[str, Any]) -> str:
    """The extraction model's JSON answer holding `memories`."""
    return json.dumps({"memories": list(memories)}, ensure_ascii=False)


def memory(category: str, l0: str, messages: list[int], **extra: Any) -> dict[str, Any]:
    return {"category": category, "l0": l0, "messages": messages, **extra}


def chat_requests(fake: Any) -> list[dict[str, Any]]:
    return [r.body for r in fake.requests_to("/chat/completions")]


def transcript_of(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def responder_by_speaker(replies: dict[str, str]) -> Callable[[dict[str, Any]], str]:
    """A reply chosen by the speaker the system prompt names (group chats: one request per speaker)."""

    def respond(body: dict[str, Any]) -> str:
        system = str(body["messages"][0]["content"])
        for speaker, text in replies.items():
            if f"'{speaker}'" in system:
                return text
        return reply()

    return respond
