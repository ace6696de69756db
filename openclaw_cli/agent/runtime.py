"""The interface the gateway and `openclaw chat` drive: one AgentRuntime per process, one call per turn.

A turn's events go to `emit(kind, payload)` as they happen: "delta" ({"text"}) for each piece of the
streamed reply, "notice" ({"text"}) for what the user should be told (a new session, a missing model),
"tool" ({"name", "arguments", "result"}) for a tool call. Cancelling sets `cancel`; the turn stops at the
next piece and reports status "aborted", keeping the user's message. `request.steering` (optional)
lets more user messages into the running turn: each is stored and sent before the turn's next model call
(agent/turn/steering.py).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from openclaw_cli.agent.turn.requests import EventSink, TurnRequest, TurnResult
from openclaw_cli.agent.turn.stages import add

if TYPE_CHECKING:
    from openclaw_cli.agent.compaction import CompactionResult
    from openclaw_cli.agent.services import AgentServices
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.core.paths import Home
    from openclaw_cli.plugins.host import PluginHost


class AgentRuntime:
    """Owns the sessions and memory services of every agent in this process."""

    def __init__(
        self,
        home: Home,
        settings: Settings,
        *,
        clock: Callable[[], datetime] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.home = home
        self.settings = settings
        self.env = dict(env or {})  # the process's environment, given by the edge: skills' gating
        # Local time, aware: the daily reset hour is local (sessions/lifecycle.py).
        self.clock = clock or (lambda: datetime.now().astimezone())
        self._agents: dict[str, AgentServices] = {}
        self._retired: list[AgentServices] = []
        self._guard = threading.Lock()
        self._plugins: PluginHost | None = None  # given by the gateway, else loaded at the first turn

    @property
    def plugins(self) -> PluginHost:
        """This process's plugins: the host given (the gateway's), else loaded once from the settings."""
        if self._plugins is None:
            from openclaw_cli.plugins.wiring import start_plugins

            self._plugins = start_plugins(self.settings, self.home.root)
        return self._plugins

    @plugins.setter
    def plugins(self, host: PluginHost) -> None:
        self._plugins = host

    def services(self, agent_id: str) -> AgentServices:
        """The agent's services, built on first use (nothing heavy is imported before a turn needs it)."""
        from openclaw_cli.agent.services import AgentServices
        from openclaw_cli.core.paths import validate_agent_id
        from openclaw_cli.identity.auth_profiles import profile_signature

        agent_id = validate_agent_id(agent_id)
        with self._guard:
            services = self._agents.get(agent_id)
            if services is not None and services.auth_signature != profile_signature(self.home, agent_id):
                # `openclaw auth set|remove` (or a chmod) since they were built: rebuilt with the new key,
                # the old ones closed with the runtime, as after a config change
                self._retired.append(services)
                services = None
            if services is None:
                services = AgentServices(self.home, agent_id, self.settings, self.env)
                services.plugins = self.plugins
                services.skills.plugin_dirs = tuple(self.plugins.skill_dirs())  # the plugins' skills, last
                self._agents[agent_id] = services
            return services

    async def run_turn(self, request: TurnRequest, emit: EventSink, cancel: asyncio.Event) -> TurnResult:
        """Store the user's message, answer it (streaming through `emit`), store the reply.

        The turn blocks on files, SQLite and HTTP, so it runs in a worker thread; its events are handed
        back to this event loop, in order, before the result is returned.
        """
        from openclaw_cli.agent.turn.loop import run_turn

        loop = asyncio.get_running_loop()
        services = self.services(request.agent_id)
        settings = services.settings  # the agent's own (its model, its workspace)

        def sink(kind: str, payload: dict[str, Any]) -> None:
            loop.call_soon_threadsafe(emit, kind, payload)

        def in_thread() -> tuple[TurnResult, float]:
            started = time.perf_counter()
            result = run_turn(services, settings, request, sink, cancel, self.clock)
            return result, time.perf_counter() - started

        handed = time.perf_counter()
        result, ran = await asyncio.to_thread(in_thread)
        stages = result.stages
        # what no named stage covers (parsing the command, building the system text...)
        add(stages, "turn other", ran * 1000 - sum(stages.values()))
        # the hand-over to the worker thread and back (a busy event loop or a full pool shows here)
        add(stages, "thread hop", (time.perf_counter() - handed - ran) * 1000)
        return result

    async def compact(self, agent_id: str, session_key: str) -> dict[str, Any]:
        """Summarise the session's older messages now (after a memory flush); returns what was done."""
        return (await asyncio.to_thread(self.compact_now, agent_id, session_key)).to_dict()

    def compact_now(self, agent_id: str, session_key: str) -> CompactionResult:
        """compact() for callers without an event loop (`openclaw session compact`)."""
        from openclaw_cli.agent.summarise import compact

        services = self.services(agent_id)
        session_id = services.sessions.resolve(session_key)
        return compact(services, services.settings, session_id, self.clock(), force=True)

    def settle_extraction(self) -> None:
        """Finish every pending background extraction now (AgentServices.settle_extraction)."""
        with self._guard:
            current = [*self._retired, *self._agents.values()]
        for services in current:
            services.settle_extraction()

    def release_sessions(self, agent_id: str, session_ids: list[str]) -> None:
        """Drop what this process holds open of sessions another step deleted or rewrote (a purge)."""
        with self._guard:
            current = [s for s in [*self._retired, *self._agents.values()] if s.agent_id == agent_id]
        for services in current:
            for session_id in session_ids:
                services.sessions.release(session_id)

    def settings_changed(self, settings: Settings) -> None:
        """A new valid configuration, applied from the next turn on (services are rebuilt with it)."""
        with self._guard:
            # A turn may still be running on the old services: they are closed with the runtime.
            self._retired.extend(self._agents.values())
            self._agents = {}
            self.settings = settings

    def close(self) -> None:
        """Flush and release everything the runtime holds (pending extractions finish first)."""
        with self._guard:
            old = [*self._retired, *self._agents.values()]
            self._agents, self._retired = {}, []
        for services in old:
            services.close()
