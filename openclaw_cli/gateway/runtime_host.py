"""The agent runtime on its own event loop, in its own thread, away from the gateway's network loop.

A turn does blocking work between its awaits (session appends, an fsync every `fsyncIntervalMs`, up to
~12 ms here); on the network loop that would stall every connection's frames and events meanwhile. Here
the runtime owns one loop for all its turns (so whatever asyncio objects it keeps across turns live on
one loop), and the gateway talks to it only through thread-safe hand-offs: turns and compactions are
submitted with run_coroutine_threadsafe, events come back with call_soon_threadsafe (in order, before
the turn's result), and a cancel is forwarded to an Event the runtime waits on in its own loop.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any

from openclaw_cli.agent.runtime import AgentRuntime, EventSink, TurnRequest, TurnResult

if TYPE_CHECKING:
    from openclaw_cli.config import Settings


class RuntimeHost:
    def __init__(self, runtime: AgentRuntime) -> None:
        self.runtime = runtime
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="openclaw-runtime", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    async def run_turn(self, request: TurnRequest, emit: EventSink, cancel: asyncio.Event) -> TurnResult:
        here = asyncio.get_running_loop()
        inner = asyncio.Event()  # bound to the runtime's loop when the runtime first waits on it
        if cancel.is_set():
            inner.set()

        def emit_here(kind: str, payload: dict[str, Any]) -> None:
            here.call_soon_threadsafe(emit, kind, payload)

        forward = here.create_task(cancel.wait())
        forward.add_done_callback(lambda task: task.cancelled() or self.loop.call_soon_threadsafe(inner.set))
        try:
            future = asyncio.run_coroutine_threadsafe(
                self.runtime.run_turn(request, emit_here, inner), self.loop
            )
            return await asyncio.wrap_future(future)
        finally:
            forward.cancel()

    async def compact(self, agent_id: str, session_key: str) -> dict[str, Any]:
        future = asyncio.run_coroutine_threadsafe(self.runtime.compact(agent_id, session_key), self.loop)
        return await asyncio.wrap_future(future)

    def settings_changed(self, settings: Settings) -> None:
        self.loop.call_soon_threadsafe(self.runtime.settings_changed, settings)

    def close(self) -> None:
        """Close the runtime on its own thread, then stop that thread (blocking: call from a thread)."""

        async def closing() -> None:
            self.runtime.close()

        try:
            asyncio.run_coroutine_threadsafe(closing(), self.loop).result(timeout=30)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=10)
