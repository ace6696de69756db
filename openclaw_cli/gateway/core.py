"""The gateway's state: settings, the agent runtime, lanes, the inbox journal. No HTTP here.

Everything runs on one asyncio event loop; blocking file and database work goes to threads. At start a
worker thread warms what a first turn needs (agent/warm.py: the model client, each agent's embedders and
searcher), and again after an applied config edit; the gateway is ready (/readyz) once the inbox is
recovered and the first warm-up is done. Turns sent earlier are accepted and run: they just pay for
what is not loaded yet.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import openclaw_cli
from openclaw_cli.agent.runtime import AgentRuntime
from openclaw_cli.agent.turn.commands import parse_command
from openclaw_cli.agent.turn.requests import TurnResult
from openclaw_cli.agent.turn.stages import span
from openclaw_cli.agent.warm import WarmReport, start_word_warmup, warm_runtime
from openclaw_cli.core.paths import validate_agent_id
from openclaw_cli.gateway.inbox import Inbox, Pending
from openclaw_cli.gateway.lanes.queues import QUEUE_MODES, LaneManager, Listener, Message, Turn
from openclaw_cli.gateway.lanes.run_limiter import RunLimiter
from openclaw_cli.memory.store.records import iso, utc_now
from openclaw_cli.sessions.keys import build_key, parse_key
from openclaw_cli.sessions.store import SessionStore, parse_time

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.core.paths import Home
    from openclaw_cli.memory.search.legs.word_warmup import WordWarmUp
    from openclaw_cli.plugins.host import PluginHost

log = logging.getLogger("openclaw.gateway")


@dataclass(frozen=True)
class GatewayOptions:
    host: str
    port: int
    token: str
    token_source: str  # flag, env, file, generated


class GatewayCore:
    def __init__(
        self,
        home: Home,
        settings: Settings,
        options: GatewayOptions,
        runtime_factory: Callable[[Home, Settings], AgentRuntime] = AgentRuntime,
    ) -> None:
        self.home = home
        self.settings = settings
        self.options = options
        self.runtime = runtime_factory(home, settings)
        self.inbox = Inbox(home.root / "gateway" / "inbox.jsonl", fsync=settings.session.fsync == "always")
        self.limiter = RunLimiter(settings.agents.max_concurrent)
        self.lanes = LaneManager(
            self.runtime.run_turn,
            self.limiter,
            debounce_ms=settings.gateway.queue.debounce_ms,
            on_turn_done=self._turn_done,
        )
        self.started_at = time.time()
        self.config_error: str | None = None  # the last rejected edit of openclaw.json
        self.config_loaded_at = time.time()
        self.turns_done = 0
        self.ready = False
        self.warm: WarmReport | None = None  # what the start-up warm-up loaded, once it is done
        self._warming: asyncio.Task[None] | None = None
        self.words: WordWarmUp | None = None  # the searched words' background warm-up, once ready
        self._stopping = threading.Event()  # the warm-up starts no further step once set
        # Counts of connections that owe a request head (gateway/http/limits.py), set by the server.
        self.connection_counts: Callable[[], dict[str, int]] = dict
        # What start() re-queued from the inbox, so a channel can send those turns' replies to their chats.
        self.requeued: list[tuple[Pending, Turn]] = []
        self.channel_status: Callable[[], list[dict[str, Any]]] = list  # set by the server (channel_host)
        self.plugins: PluginHost | None = None  # loaded by the server at start (use_plugins)

    def use_plugins(self, host: PluginHost) -> None:
        """The process's plugins: the turns' hooks and tools, the channels', routes' and status's."""
        self.plugins = host
        self.runtime.plugins = host

    # ------------------------------------------------------------------ life cycle

    async def start(self) -> list[str]:
        """Re-queue what an earlier process acknowledged but never stored; the run ids started."""
        pending = await asyncio.to_thread(self.inbox.pending)
        unstored = [entry for entry in pending if not await asyncio.to_thread(self._already_stored, entry)]
        await asyncio.to_thread(self.inbox.compact, unstored)
        run_ids = []
        for entry in unstored:
            message = Message(entry.text, entry.sender, entry.id)
            turn = self.lanes.submit(
                entry.agent_id, entry.session_key, message, "followup", user_id=entry.user_id
            )
            run_ids.append(turn.run_id)
            self.requeued.append((entry, turn))
        if run_ids:
            log.info("re-queued %d acknowledged message(s) from before a stop", len(run_ids))
        self._warming = asyncio.get_running_loop().create_task(self._warm_up())
        return run_ids

    async def _warm_up(self) -> None:
        """Load what a first turn needs off the event loop (/healthz answers meanwhile), then say ready."""
        agents = self.settings.agents
        ids = [entry.id for entry in agents.entries] or [agents.default]
        report = await asyncio.to_thread(warm_runtime, self.runtime, ids, self._stopping)
        for step, why in report.failed.items():
            log.warning("could not load %s at start (%s); the first turn will try again", step, why)
        log.info("ready: loaded %s in %.1f s", ", ".join(report.done) or "nothing", report.seconds)
        self.warm = report
        self.ready = True
        if self.words is None and not self._stopping.is_set():
            try:
                self.words = await asyncio.to_thread(
                    start_word_warmup, self.runtime, ids, self._busy, self._stopping
                )
            except Exception as exc:  # noqa: BLE001 - a cache's warm-up must not stop the gateway
                log.warning("could not start warming the searched words: %s", exc)

    def _busy(self) -> bool:
        """Whether a turn or a memory search runs or waits (read from the word warm-up's thread)."""
        from openclaw_cli.memory.search.legs.word_warmup import searches_running

        try:
            lanes = self.lanes.busy()
        except RuntimeError:  # the lanes changed while this thread counted them: busy, for now
            return True
        return bool(lanes["running"] or lanes["queued"] or searches_running())

    def wake_words(self) -> None:
        """Memories were added or purged: the word warm-up passes over the stores again."""
        if self.words is not None:
            self.words.wake.set()

    async def stop(self, grace_seconds: float = 10.0) -> None:
        """Let running turns finish (for up to `grace_seconds`), then close the runtime.

        Queued turns are not waited for: their messages stay in the inbox journal (not done) and are
        re-queued at the next start; a turn cut off mid-run has stored its user message already.
        """
        self.ready = False
        self._stopping.set()
        self.wake_words()  # its thread ends instead of sleeping until its next pass
        if self._warming is not None and not self._warming.done():
            # its thread cannot be stopped: let it finish before the runtime it fills is closed
            await asyncio.wait([self._warming], timeout=grace_seconds)
        running = self.lanes.running()
        if running:
            log.info("waiting for %d running turn(s) to finish", len(running))
            await asyncio.wait(running, timeout=grace_seconds)
        await asyncio.to_thread(self.runtime.close)
        self.inbox.close()

    def _already_stored(self, entry: Pending) -> bool:
        """Whether the turn stored the message before the process died (no `done` line yet).

        `/new TEXT` and `/reset TEXT` store only TEXT; a bare `/new` stores nothing, and is done once the
        key's current session was started after the command arrived (so it never runs twice)."""
        command = parse_command(entry.text)
        text = command.rest if command is not None and command.name in ("new", "reset") else entry.text
        store = SessionStore(self.home, entry.agent_id)
        try:
            session_id = store.current_session_id(entry.session_key)
            if session_id is None:
                return False
            accepted = parse_time(entry.accepted_at)
            if not text:
                created = parse_time(store.read_meta(session_id).get("createdAt"))
                return accepted is not None and created is not None and created >= accepted
            for message in reversed(store.read_messages(session_id).messages):
                ts = parse_time(message.get("ts"))
                if accepted is not None and ts is not None and ts < accepted:
                    break
                if message.get("role") == "user" and text in str(message.get("content", "")):
                    return True
            return False
        finally:
            store.close()

    # ------------------------------------------------------------------ settings

    async def apply_settings(self, settings: Settings) -> None:
        self.settings = settings
        self.lanes.debounce_ms = settings.gateway.queue.debounce_ms
        await self.limiter.resize(settings.agents.max_concurrent)
        self.runtime.settings_changed(settings)
        self.config_error = None
        self.config_loaded_at = time.time()
        if self._warming is not None and self._warming.done():
            # the rebuilt services (another model, another agent, other stores) load before they are asked
            self._warming = asyncio.get_running_loop().create_task(self._warm_up())

    # ------------------------------------------------------------------ messages

    def agent_id(self, given: str | None) -> str:
        return validate_agent_id(given or self.settings.agents.default)

    def send(
        self,
        agent_id: str,
        session_key: str,
        text: str,
        *,
        sender: str | None = None,
        user_id: str | None = None,
        mode: str | None = None,
        listener: Listener | None = None,
    ) -> Turn:
        """Journal the message, then queue it on its lane; the turn it joined (ack with its run id)."""
        key = build_key(parse_key(session_key))
        if parse_key(key).agent_id != agent_id:
            from openclaw_cli.core.errors import InvalidInput

            raise InvalidInput(f"session key {key} belongs to another agent than {agent_id}")
        chosen = mode or self.settings.gateway.queue.mode
        if chosen not in QUEUE_MODES:
            from openclaw_cli.core.errors import InvalidInput

            raise InvalidInput(f"unknown queue mode {chosen!r}", hint=f"use one of {', '.join(QUEUE_MODES)}")
        entry = self.inbox.accept(agent_id, key, text, sender, str(iso(utc_now())), user_id)
        message = Message(text, sender, entry.id)
        return self.lanes.submit(agent_id, key, message, chosen, listener=listener, user_id=user_id)

    async def note_reroute(self, agent_id: str) -> None:
        """Count a message kept out of the owner's main session, for `gateway status` and `doctor`."""
        from openclaw_cli.sessions.reroutes import record_reroute

        try:
            await asyncio.to_thread(record_reroute, self.home.root, agent_id, self.settings.session.dm_scope)
        except OSError as exc:  # a report: the message itself is already on its way
            log.warning("could not count a message kept out of the main session: %s", exc)

    def _turn_done(self, turn: Turn, result: TurnResult) -> None:
        self.turns_done += 1
        self.wake_words()  # the turn may have stored memories
        ids = [m.journal_id for m in turn.messages if m.journal_id is not None]
        try:
            with span(result.stages, "journal done"):
                self.inbox.done(ids)
        except OSError as exc:  # the messages are stored; re-queued at the next start only if not
            log.warning("could not mark messages done in the inbox journal: %s", exc)

    # ------------------------------------------------------------------ status

    def health(self) -> dict[str, Any]:
        return {
            "ok": True,
            "version": openclaw_cli.__version__,
            "ready": self.ready,
            "pid": os.getpid(),
            "uptimeSeconds": round(time.time() - self.started_at, 3),
        }

    def status(self) -> dict[str, Any]:
        from openclaw_cli.sessions.reroutes import read_reroutes

        return {
            **self.health(),
            "host": self.options.host,
            "port": self.options.port,
            "home": str(self.home.root),
            "defaultAgent": self.settings.agents.default,
            "agents": [entry.id for entry in self.settings.agents.entries] or [self.settings.agents.default],
            "maxConcurrent": self.limiter.limit,
            "queueMode": self.settings.gateway.queue.mode,
            "debounceMs": self.settings.gateway.queue.debounce_ms,
            "model": self.settings.llm.model,
            "turnsDone": self.turns_done,
            "warm": self.warm.to_dict() if self.warm is not None else None,
            "wordWarmUp": self.words.to_dict() if self.words is not None else None,
            "connections": self.connection_counts(),
            # messages sent to their speaker's own session because the main session is the owner's
            "dmScope": self.settings.session.dm_scope,
            "dmReroutes": read_reroutes(self.home.root),
            "config": {
                "loadedAt": datetime.fromtimestamp(self.config_loaded_at).astimezone().isoformat(),
                "error": self.config_error,
            },
            **self.lanes.busy(),
        }
