"""The WebSocket methods (and `gateway call`): each takes the params object and returns the payload.

Errors are FrameError (protocol codes) or OpenclawError, mapped to a code by `error_code`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import Conflict, InvalidInput, NotFound, OpenclawError, UsageError
from openclaw_cli.gateway.lanes.queues import Listener
from openclaw_cli.gateway.rpc import memory_reads
from openclaw_cli.gateway.rpc import protocol as p
from openclaw_cli.identity import claims
from openclaw_cli.identity import persons as identity
from openclaw_cli.identity.agent_config import for_agent
from openclaw_cli.sessions.keys import build_key, parse_key

if TYPE_CHECKING:
    from openclaw_cli.gateway.core import GatewayCore
    from openclaw_cli.memory.service import MemoryService

log = logging.getLogger("openclaw.gateway")
Method = Callable[["Methods", dict[str, Any], "Listener | None"], Awaitable[Any]]
MAX_TEXT = 1_000_000


def error_code(exc: OpenclawError) -> str:
    if isinstance(exc, p.FrameError):
        return exc.code
    if isinstance(exc, NotFound):
        return p.NOT_FOUND
    if isinstance(exc, Conflict):
        return p.CONFLICT
    if isinstance(exc, InvalidInput | UsageError):
        return p.INVALID_PARAMS
    return p.UNAVAILABLE


def _now() -> datetime:
    return datetime.now().astimezone()


class Methods:
    """Dispatch of one request; holds the warm memory services of the agents (one lock each)."""

    def __init__(self, core: GatewayCore) -> None:
        self.core = core
        self._memory: dict[str, tuple[MemoryService, threading.Lock]] = {}
        self._table: dict[str, Method] = {
            "health": Methods.health,
            "status": Methods.status,
            "sessions.list": Methods.sessions_list,
            "sessions.get": Methods.sessions_get,
            "sessions.reset": Methods.sessions_reset,
            "sessions.compact": Methods.sessions_compact,
            "chat.send": Methods.chat_send,
            "chat.history": Methods.chat_history,
            "chat.abort": Methods.chat_abort,
            "memory.search": Methods.memory_search,
            "memory.inject": Methods.memory_inject,
            "session.search": Methods.session_search,
            "memory.add": Methods.memory_add,
            "memory.delete": Methods.memory_delete,
            "memory.purge": Methods.memory_purge,
            "reflect.run": Methods.reflect_run,
            "channels.status": Methods.channels_status,
            "plugins.status": Methods.plugins_status,
        }

    def register(self, name: str, handler: Callable[[dict[str, Any]], Awaitable[Any]]) -> None:
        """A method another part of the gateway serves (the scheduler's cron.list and cron.run)."""

        async def call(_: Methods, params: dict[str, Any], listener: Listener | None) -> Any:
            return await handler(params)

        self._table[name] = call

    @property
    def names(self) -> list[str]:
        return ["connect", *self._table]

    async def call(self, method: str, params: dict[str, Any], listener: Listener | None = None) -> Any:
        handler = self._table.get(method)
        if handler is None:
            raise p.FrameError(
                p.UNKNOWN_METHOD, f"unknown method {method!r}", hint="see `openclaw gateway call --help`"
            )
        return await handler(self, params, listener)

    async def answer(
        self, request_id: str | None, method: str, params: dict[str, Any], listener: Listener | None = None
    ) -> dict[str, Any]:
        """The response frame of one call: its payload, or the error it raised. A bug is logged and
        answered as INTERNAL, never raised: one failing method must not drop a WebSocket connection, nor
        read as a refusal over HTTP."""
        try:
            payload = await self.call(method, params, listener)
        except OpenclawError as exc:
            return p.error_response(request_id, error_code(exc), exc.message, exc.hint)
        except Exception as exc:  # noqa: BLE001 - see above
            log.exception("method %s failed", method)
            return p.error_response(request_id, p.INTERNAL, f"{exc.__class__.__name__}: {exc}")
        return p.response(request_id, payload)

    def close(self) -> None:
        """Close the memory services (they are opened again, with the current settings, when next used)."""
        services = list(self._memory.values())
        self._memory.clear()
        for service, lock in services:
            with lock:
                service.close()

    # ------------------------------------------------------------------ helpers

    def _model_settings(self, agent_id: str) -> Any:
        """The settings `agent_id`'s model calls use: its own model and its auth profile's key."""
        from openclaw_cli.identity.auth_profiles import with_auth_profile

        return with_auth_profile(for_agent(self.core.settings, agent_id), self.core.home, agent_id)

    def _agent(self, params: dict[str, Any]) -> str:
        return self.core.agent_id(p.param_str(params, "agentId", required=False, max_length=128))

    def _key(self, params: dict[str, Any], agent_id: str, *, required: bool = False) -> str:
        text = p.param_str(params, "sessionKey", required=required, max_length=1024)
        key = build_key(parse_key(text)) if text else f"agent:{agent_id}:main"
        if parse_key(key).agent_id != agent_id:
            raise InvalidInput(f"session key {key} belongs to another agent than {agent_id}")
        return key

    def _store(self, agent_id: str) -> Any:
        from openclaw_cli.sessions.store import Durability, SessionStore

        return SessionStore(self.core.home, agent_id, Durability.from_settings(self.core.settings.session))

    def _memory_of(self, agent_id: str) -> tuple[MemoryService, threading.Lock]:
        from openclaw_cli.memory.service import MemoryService

        if agent_id not in self._memory:
            settings = self.core.settings
            memory = for_agent(settings, agent_id).memory
            service = MemoryService(
                self.core.home, agent_id, memory, warm=True, owner=identity.owner_id(settings)
            )
            self._memory[agent_id] = (service, threading.Lock())
        return self._memory[agent_id]

    async def with_memory(self, agent_id: str, work: Callable[[MemoryService], Any]) -> Any:
        service, lock = self._memory_of(agent_id)

        def locked() -> Any:
            with lock:
                return work(service)

        return await asyncio.to_thread(locked)

    # ------------------------------------------------------------------ methods

    async def health(self, params: dict[str, Any], listener: Listener | None) -> Any:
        return self.core.health()

    async def status(self, params: dict[str, Any], listener: Listener | None) -> Any:
        return self.core.status()

    async def channels_status(self, params: dict[str, Any], listener: Listener | None) -> Any:
        return {"channels": self.core.channel_status()}

    async def plugins_status(self, params: dict[str, Any], listener: Listener | None) -> Any:
        """The plugins as this gateway loaded them, with the errors counted since (plugins/isolation.py)."""
        host = self.core.plugins
        return host.status() if host is not None else {"plugins": [], "problems": []}

    async def sessions_list(self, params: dict[str, Any], listener: Listener | None) -> Any:
        from openclaw_cli.sessions.index import STATUSES, list_sessions

        agent_id = self._agent(params)
        status = p.param_str(params, "status", required=False, max_length=32)
        if status is not None and status not in STATUSES:
            raise InvalidInput(f"unknown status {status!r}", hint=f"use one of {', '.join(STATUSES)}")
        rows = await asyncio.to_thread(list_sessions, self.core.home.sessions_dir(agent_id), status)
        return {"agentId": agent_id, "sessions": rows}

    async def _read(self, params: dict[str, Any]) -> Any:
        agent_id = self._agent(params)
        target = p.param_str(params, "sessionId", required=False, max_length=256) or self._key(
            params, agent_id
        )
        store = self._store(agent_id)
        try:
            return await asyncio.to_thread(lambda: store.read_session(store.resolve(target)))
        finally:
            store.close()

    async def sessions_get(self, params: dict[str, Any], listener: Listener | None) -> Any:
        view = await self._read(params)
        tail = p.param_int(params, "tail", 0, 0, 1_000_000)
        messages = view.messages[-tail:] if tail else view.messages
        return {"meta": view.meta, "messages": messages, "problems": [x.to_dict() for x in view.problems]}

    async def sessions_reset(self, params: dict[str, Any], listener: Listener | None) -> Any:
        from openclaw_cli.sessions.lifecycle import ResetPolicy, SessionManager

        agent_id = self._agent(params)
        key = self._key(params, agent_id, required=True)
        store = self._store(agent_id)
        manager = SessionManager(store, ResetPolicy.from_settings(self.core.settings.session))
        try:
            meta, previous = await asyncio.to_thread(manager.reset, key, _now())
        finally:
            store.close()
        return {"sessionKey": key, "sessionId": meta["sessionId"], "previousSessionId": previous}

    async def sessions_compact(self, params: dict[str, Any], listener: Listener | None) -> Any:
        agent_id = self._agent(params)
        key = self._key(params, agent_id, required=True)
        try:
            return await self.core.runtime.compact(agent_id, key)
        except UsageError as exc:
            raise p.FrameError(p.UNAVAILABLE, exc.message, exc.hint) from exc

    async def chat_send(self, params: dict[str, Any], listener: Listener | None) -> Any:
        agent_id = self._agent(params)
        key = self._key(params, agent_id)
        text = p.param_str(params, "text", max_length=MAX_TEXT) or ""
        if not text.strip():
            raise InvalidInput("the message text is empty", hint="send some text")
        sender = p.param_str(params, "sender", required=False, max_length=256)
        who = self._person(params, key, sender=sender)
        # a DM session is its peer's, the main session the owner's: anyone else speaks in their own
        what = 'parameter "userId"' if params.get("userId") is not None else 'parameter "sender"'
        chosen = claims.speaker_session(self.core.settings, parse_key(key), who, what)
        key = build_key(chosen.key)
        turn = self.core.send(
            agent_id,
            key,
            text,
            sender=sender,
            user_id=who.person,
            mode=p.param_str(params, "queueMode", required=False, max_length=32),
            listener=listener,
        )
        if chosen.rerouted:
            await self.core.note_reroute(agent_id)
        return {
            "runId": turn.run_id,
            "sessionKey": key,
            "agentId": agent_id,
            "status": "accepted",
            "openclaw": who.public_dict(),
            **({"rerouted": claims.REROUTED} if chosen.rerouted else {}),
        }

    def _person(self, params: dict[str, Any], key: str, *, sender: str | None = None) -> identity.Identity:
        """Who speaks: `userId` (a person id), else the group `sender`, else the session key's peer; a
        claimed id goes through the rules every entry point shares (claims.claimed_person)."""
        return claims.speaker_identity(
            self.core.settings,
            parse_key(key),
            user=params.get("userId"),
            sender=sender,
            user_what='parameter "userId"',
            sender_what='parameter "sender"',
        )

    def _reader(self, params: dict[str, Any]) -> str | None:
        """The person a memory call acts for: `userId` (claimed as at every entry point, so never the
        owner's bare name), the owner for `asOwner: true` (the token holder, who sees every memory anyway,
        asking for the owner's own view: `openclaw chat`), else None, the operator's view of every memory."""
        user = params.get("userId")
        as_owner = p.param_bool(params, "asOwner")
        if user is not None and as_owner:
            raise InvalidInput('give "userId" or "asOwner", not both')
        if as_owner:
            return identity.owner_id(self.core.settings)
        if user is None:
            return None
        return claims.claimed_person(user, self.core.settings, 'parameter "userId"')

    async def chat_history(self, params: dict[str, Any], listener: Listener | None) -> Any:
        try:
            view = await self._read(params)
        except NotFound:
            return {"sessionId": None, "messages": []}
        limit = p.param_int(params, "limit", 200, 1, 100_000)
        return {"sessionId": view.meta.get("sessionId"), "messages": view.messages[-limit:]}

    async def chat_abort(self, params: dict[str, Any], listener: Listener | None) -> Any:
        run_id = p.param_str(params, "runId", required=False, max_length=128)
        session = None
        if run_id is None:
            agent_id = self._agent(params)
            session = (agent_id, self._key(params, agent_id, required=True))
        return {"aborted": self.core.lanes.abort(run_id, session)}

    async def memory_search(self, params: dict[str, Any], listener: Listener | None) -> Any:
        from openclaw_cli.memory.search.pipeline import MAX_K

        query = p.param_str(params, "query", max_length=MAX_TEXT) or ""
        k = p.param_int(params, "k", 10, 1, MAX_K)
        agent_id, person = self._agent(params), self._reader(params)
        expander = memory_reads.expander(params, self._model_settings(agent_id))
        service, lock = self._memory_of(agent_id)
        if person is None:  # the operator (the token's holder) looks at every memory, filtered as asked
            request = memory_reads.operator_request(params, query, k)
            result = await asyncio.to_thread(memory_reads.searched, service, lock, request, expander)
            return result.to_dict(request)

        from openclaw_cli.memory.inject import recall
        from openclaw_cli.memory.store.records import CATEGORIES

        kept = memory_reads.names(params, "categories", CATEGORIES)  # an MCP client's memory_search
        hits, warnings = await asyncio.to_thread(
            lambda: recall(service, query, k, person, None, expander, lock, categories=kept)
        )
        return {
            "query": query,
            "userId": person,
            "results": [hit.to_dict(False) for hit in hits],
            "warnings": warnings,
        }

    async def session_search(self, params: dict[str, Any], listener: Listener | None) -> Any:
        """Search the agent's transcripts (`openclaw session search` sends these when a gateway runs). With
        `userId` the call acts for that person, who finds only the sessions they took part in (the owner
        finds every one); without it, the operator's view, narrowed by `filterUserId`."""
        from openclaw_cli.gateway.rpc.session_search import transcript_request

        agent_id = self._agent(params)
        request = transcript_request(params, self._reader(params), identity.owner_id(self.core.settings))
        services = self.core.runtime.services(agent_id)
        result = await asyncio.to_thread(services.transcripts.search, request)
        return result.to_dict(request)

    async def memory_inject(self, params: dict[str, Any], listener: Listener | None) -> Any:
        """The memory block `openclaw memory inject` shows, for a `query` or a session's recent messages."""
        from openclaw_cli.memory.inject import build_memory_block, session_messages

        agent_id = self._agent(params)
        query = p.param_str(params, "query", required=False, max_length=MAX_TEXT)
        session = p.param_str(params, "session", required=False, max_length=1024)
        if (query is None) == (session is None):
            raise InvalidInput('give "query" or "session", not both or neither')
        person = self._reader(params) or identity.owner_id(self.core.settings)
        settings = self._model_settings(agent_id)
        expander = memory_reads.expander(params, settings)
        service, lock = self._memory_of(agent_id)

        def block() -> Any:
            messages = None
            if session is not None:
                store = self._store(agent_id)
                try:
                    messages = session_messages(store, session)
                finally:
                    store.close()
            built = build_memory_block(
                service,
                settings.memory.inject,
                query=query,
                messages=messages,
                user_id=person,
                record_hits=False,
                expander=expander,
                lock=lock,  # held for each search, never while the model answers
            )
            return built.to_dict()

        return await asyncio.to_thread(block)

    async def memory_add(self, params: dict[str, Any], listener: Listener | None) -> Any:
        """The write path `openclaw memory add` takes (dedup by meaning, a changed value replacing a profile
        fact with a history row): the answer says what was done and, when nothing new was stored, what the
        text matched and why (`action`, `reason`, `existingId`), never a bare record as if it were new."""
        from openclaw_cli.memory.store.records import validate_category, validate_scope
        from openclaw_cli.memory.writing.candidate import Candidate
        from openclaw_cli.memory.writing.write_path import write_memories

        scope = validate_scope(p.param_str(params, "scope", required=False, max_length=16) or "user")
        candidate = Candidate(
            p.param_str(params, "text", max_length=MAX_TEXT) or "",
            validate_category(p.param_str(params, "category", required=False, max_length=32) or "note"),
            p.param_str(params, "l1", required=False, max_length=MAX_TEXT),
            scope=scope,
            user_id=(self._reader(params) or identity.owner_id(self.core.settings))
            if scope == "user"
            else None,
            # a profile fact's attribute (`city`): a new value replaces the old one (the MCP memory_add)
            attribute=p.param_str(params, "attribute", required=False, max_length=64),
        )

        def write(service: MemoryService) -> Any:
            [outcome] = write_memories(service, [candidate])
            if outcome.action == "skipped":
                raise outcome.error or InvalidInput(outcome.reason)
            record = service.get(outcome.record_id) if outcome.record_id else None
            return outcome, record

        outcome, record = await self.with_memory(self._agent(params), write)
        self.core.wake_words()  # its words are warmed for the searches to come
        return outcome.added_dict(record)

    async def memory_delete(self, params: dict[str, Any], listener: Listener | None) -> Any:
        record_id = p.param_str(params, "id", max_length=256) or ""
        person = self._reader(params)

        def delete(service: MemoryService) -> Any:
            from openclaw_cli.agent.tools.builtin import may_touch

            if person is not None and not may_touch(service, record_id, person):
                raise NotFound(f"no memory with id {record_id!r} of {person}")
            return service.delete(record_id)

        record = await self.with_memory(self._agent(params), delete)
        self.core.wake_words()  # the emptied word tables are warmed again with the words of what is left
        return {"deleted": record.id}

    async def memory_purge(self, params: dict[str, Any], listener: Listener | None) -> Any:
        """Forget a person everywhere (`openclaw memory purge` sends it here when a gateway runs)."""
        from openclaw_cli.gateway.rpc.purge import purge

        return await purge(self.core, params, self.close)

    async def reflect_run(self, params: dict[str, Any], listener: Listener | None) -> Any:
        try:
            from openclaw_cli.memory.reflect.run import run_reflection  # type: ignore[import-not-found,unused-ignore]
        except ImportError as exc:
            raise p.FrameError(
                p.UNAVAILABLE, "reflection is not available in this build", hint="update openclaw"
            ) from exc
        dry_run = params.get("dryRun", False)
        if not isinstance(dry_run, bool):
            raise p.FrameError(p.INVALID_PARAMS, 'parameter "dryRun" must be true or false')
        category = p.param_str(params, "category", required=False, max_length=32)
        agent_id = self._agent(params)
        lock_dir = self.core.home.memory_dir(agent_id)  # the lock `openclaw reflect` takes too
        settings = self._model_settings(agent_id)  # the agent's own model, when it names one

        def reflect(service: MemoryService) -> Any:
            return run_reflection(service, settings, lock_dir=lock_dir, dry_run=dry_run, category=category)

        result = await self.with_memory(agent_id, reflect)
        return result.to_dict() if hasattr(result, "to_dict") else result
