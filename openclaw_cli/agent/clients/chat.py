"""What `openclaw chat` talks to: the same calls whether the turn runs in this process or in a gateway.

`ChatBackend` is the terminal's view of an agent: send a message (events stream back through a
callback), compact, search/add/forget memories, status, and `preload` (start loading, in a background
thread, what the first reply needs, while the user types it). `LocalChat` runs AgentRuntime in-process;
`openclaw_cli.agent.clients.gateway.GatewayChat` speaks the gateway's WebSocket protocol.
"""

from __future__ import annotations

import asyncio
import itertools
import signal
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from openclaw_cli.agent.runtime import AgentRuntime
from openclaw_cli.agent.turn.requests import EventSink, TurnRequest

if TYPE_CHECKING:
    from openclaw_cli.agent.warm import WarmReport
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.core.paths import Home

MEMORY_RESULTS = 8


class ChatBackend(Protocol):
    mode: str  # "in-process" or "gateway <url>"

    def send(self, text: str, on_event: EventSink) -> dict[str, Any]: ...
    def compact(self) -> dict[str, Any]: ...
    def memory_search(self, query: str) -> list[dict[str, Any]]: ...
    def session_search(self, query: str) -> list[dict[str, Any]]: ...
    def remember(self, text: str) -> dict[str, Any]: ...
    def forget(self, record_id: str) -> dict[str, Any]: ...
    def status(self) -> dict[str, Any]: ...
    def preload(self) -> None: ...
    def close(self) -> None: ...


class LocalChat:
    """The agent loop in this process. Ctrl-C during a reply aborts the turn (the message is kept)."""

    mode = "in-process"

    def __init__(
        self,
        home: Home,
        settings: Settings,
        agent_id: str,
        session_key: str,
        *,
        user_id: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.runtime = AgentRuntime(home, settings, env=env)
        self.settings = settings
        self.agent_id = agent_id
        self.session_key = session_key
        self.user_id = user_id  # the person typing (identity.py); None: nobody known
        self._runs = itertools.count(1)
        self._warm: WarmReport | None = None
        self._warming: threading.Thread | None = None
        self._closing = threading.Event()  # the preload starts no further step once the chat ends

    def preload(self) -> None:
        """Load the model client, the embedders and the agent's stores in a background thread (the first
        reply would otherwise wait seconds for them). A turn sent meanwhile waits only for what it uses."""
        if self._warming is None:
            self._warming = threading.Thread(target=self._warm_up, name="chat-preload", daemon=True)
            self._warming.start()

    def _warm_up(self) -> None:
        from openclaw_cli.agent.warm import warm_runtime

        self._warm = warm_runtime(self.runtime, [self.agent_id], self._closing)

    def send(self, text: str, on_event: EventSink) -> dict[str, Any]:
        request = TurnRequest(
            self.agent_id, self.session_key, text, f"local-{next(self._runs)}", user_id=self.user_id
        )
        return asyncio.run(self._send(request, on_event))

    async def _send(self, request: TurnRequest, on_event: EventSink) -> dict[str, Any]:
        cancel = asyncio.Event()
        loop = asyncio.get_running_loop()
        interruptible = threading.current_thread() is threading.main_thread()
        if interruptible:
            loop.add_signal_handler(signal.SIGINT, cancel.set)
        try:
            result = await self.runtime.run_turn(request, on_event, cancel)
        finally:
            if interruptible:
                loop.remove_signal_handler(signal.SIGINT)
        return result.public_dict()

    def compact(self) -> dict[str, Any]:
        return self.runtime.compact_now(self.agent_id, self.session_key).to_dict()

    def memory_search(self, query: str) -> list[dict[str, Any]]:
        from openclaw_cli.memory.inject import recall

        services = self.runtime.services(self.agent_id)
        with services.memory_lock:
            hits, _warnings = recall(services.memory, query, MEMORY_RESULTS, self.user_id)
        return [hit.to_dict(False) for hit in hits]

    def session_search(self, query: str) -> list[dict[str, Any]]:
        services = self.runtime.services(self.agent_id)
        return list(services.search_transcripts(query, MEMORY_RESULTS, self.user_id)["results"])

    def remember(self, text: str) -> dict[str, Any]:
        from openclaw_cli.core.errors import InvalidInput
        from openclaw_cli.identity.persons import ANONYMOUS_REASON
        from openclaw_cli.memory.writing.candidate import Candidate
        from openclaw_cli.memory.writing.write_path import write_memories

        if self.user_id is None:
            raise InvalidInput(f"not remembered: {ANONYMOUS_REASON}", hint="start the chat with --user")
        services = self.runtime.services(self.agent_id)
        # Through the write path: a changed value is kept, and a repeat says which memory it repeats.
        candidate = Candidate(l0=text, category="note", user_id=self.user_id, source={"kind": "chat-command"})
        with services.memory_lock:
            [outcome] = write_memories(services.memory, [candidate])
        if outcome.action == "skipped":
            raise outcome.error or InvalidInput(f"not remembered: {outcome.reason}")
        return {
            "id": outcome.record_id,
            "l0": text,
            "category": "note",
            "action": outcome.action,
            "reason": outcome.reason,
        }

    def forget(self, record_id: str) -> dict[str, Any]:
        from openclaw_cli.agent.tools.builtin import may_touch
        from openclaw_cli.core.errors import NotFound
        from openclaw_cli.memory.store.records import validate_record_id

        services = self.runtime.services(self.agent_id)
        with services.memory_lock:
            if not may_touch(services.memory, validate_record_id(record_id), self.user_id):
                raise NotFound(f"no memory with id {record_id!r} of yours")
            record = services.memory.delete(validate_record_id(record_id))
        return {"id": record.id, "l0": record.l0}

    def status(self) -> dict[str, Any]:
        from openclaw_cli.agent.compaction import saved_summary
        from openclaw_cli.core.errors import NotFound

        services = self.runtime.services(self.agent_id)
        out: dict[str, Any] = {
            "mode": self.mode,
            "agentId": self.agent_id,
            "sessionKey": self.session_key,
            "model": services.settings.llm.model,  # the agent's own model when it names one
            "contextTokens": services.settings.llm.context_tokens,
            "preloaded": _preloaded(self._warm, self._warming),
        }
        try:
            session_id = services.sessions.resolve(self.session_key)
        except NotFound:
            return {**out, "sessionId": None, "messageCount": 0}
        meta = services.sessions.read_meta(session_id)
        summary, checkpoint = saved_summary(services.sessions, session_id)
        return {
            **out,
            "sessionId": session_id,
            "messageCount": meta.get("messageCount"),
            "status": meta.get("status"),
            "summaryCheckpoint": checkpoint,
            "hasSummary": summary is not None,
        }

    def close(self) -> None:
        self._closing.set()
        self.runtime.close()


def _preloaded(report: WarmReport | None, thread: threading.Thread | None) -> str:
    """What the background preload has loaded, for /status."""
    if report is None:
        return "loading" if thread is not None else "not started"
    failed = "".join(f"; {step} failed: {why}" for step, why in report.failed.items())
    return f"{', '.join(report.done)} in {report.seconds:.1f} s{failed}"
