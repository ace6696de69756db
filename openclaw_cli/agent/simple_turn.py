"""The smallest real turn (append, complete, append), until the full loop replaces it.

It exists so the gateway and the chat client have a working turn to drive; it has no memory, no
summaries and no streaming beyond one delta with the whole reply.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from openclaw_cli.agent.runtime import EventSink, TurnRequest, TurnResult
from openclaw_cli.errors import OpenclawError
from openclaw_cli.memory.records import utc_now
from openclaw_cli.sessions.lifecycle import ResetPolicy, SessionManager
from openclaw_cli.sessions.store import SessionStore
from openclaw_cli.sessions.writer import Durability

if TYPE_CHECKING:
    from openclaw_cli.agent.runtime import AgentRuntime

NO_MODEL = "No model is configured: set one with `openclaw config set llm.model openai/gpt-4o-mini`."


async def run_simple_turn(
    runtime: AgentRuntime, request: TurnRequest, emit: EventSink, cancel: asyncio.Event
) -> TurnResult:
    settings = runtime.settings
    manager = SessionManager(
        SessionStore(runtime.home, request.agent_id, Durability.from_settings(settings.session)),
        ResetPolicy.from_settings(settings.session),
    )
    appended = manager.append(request.session_key, "user", request.text, utc_now(), sender=request.sender)
    result = TurnResult(request.run_id, appended.session_id, "ok")
    if appended.new_session and appended.reason != "created":
        result.notices.append(f"A new session started ({appended.reason}).")
    model = settings.llm.model
    if model is None:
        result.notices.append(NO_MODEL)
        for notice in result.notices:
            emit("notice", {"text": notice})
        return result
    from openclaw_cli import llm

    history = [{"role": "user", "content": request.text}]
    try:
        reply = await asyncio.to_thread(
            llm.complete,
            model,
            history,
            settings.llm.api_base,
            max_retries=settings.llm.max_retries,
            timeout=settings.llm.timeout_seconds,
        )
    except OpenclawError as exc:
        result.status, result.error = "error", str(exc)
        return result
    if cancel.is_set():
        result.status = "aborted"
        return result
    emit("delta", {"text": reply})
    manager.append(request.session_key, "assistant", reply, utc_now())
    result.reply = reply
    return result
