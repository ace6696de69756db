"""The interface the gateway and `openclaw chat` drive: one AgentRuntime per process, one call per turn.

A turn's events go to `emit(kind, payload)` as they happen: "delta" ({"text"}) for each piece of the
streamed reply, "notice" ({"text"}) for what the user should be told (a new session, a missing model),
"tool" ({"name", "arguments", "result"}) for a tool call. Cancelling sets `cancel`; the turn stops at the
next piece and reports status "aborted", keeping the user's message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from openclaw_cli.config import Settings
    from openclaw_cli.paths import Home

EventSink = Callable[[str, dict[str, Any]], None]
TurnStatus = Literal["ok", "error", "aborted"]


@dataclass(frozen=True)
class TurnRequest:
    agent_id: str
    session_key: str
    text: str
    run_id: str
    sender: str | None = None  # who spoke, in a group chat
    user_id: str | None = None  # whose long-term memory the turn reads and writes


@dataclass
class TurnResult:
    run_id: str
    session_id: str
    status: TurnStatus
    reply: str = ""
    error: str | None = None
    notices: list[str] = field(default_factory=list)

    def public_dict(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "sessionId": self.session_id,
            "status": self.status,
            "reply": self.reply,
            "error": self.error,
            "notices": self.notices,
        }


class AgentRuntime:
    """Owns the sessions and memory services of every agent in this process."""

    def __init__(self, home: Home, settings: Settings) -> None:
        self.home = home
        self.settings = settings

    async def run_turn(self, request: TurnRequest, emit: EventSink, cancel: asyncio.Event) -> TurnResult:
        """Store the user's message, answer it (streaming through `emit`), store the reply."""
        from openclaw_cli.agent.simple_turn import run_simple_turn

        return await run_simple_turn(self, request, emit, cancel)

    async def compact(self, agent_id: str, session_key: str) -> dict[str, Any]:
        """Summarise the session's older messages now (after a memory flush); returns what was done."""
        from openclaw_cli.errors import UsageError

        raise UsageError("compaction needs the full agent loop", hint="update openclaw")

    def settings_changed(self, settings: Settings) -> None:
        """A new valid configuration, applied from the next turn on."""
        self.settings = settings

    def close(self) -> None:
        """Flush and release everything the runtime holds."""
