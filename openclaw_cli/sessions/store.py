"""The session store of one agent: index, per-session meta.json / messages.jsonl / context.json, locks.

Locking discipline (all locks are files in `<sessions>/.locks/`):
  key-<hash>.lock   held by the lifecycle around "find or create the session of a key" and status changes;
  session-<id>.lock held around "read last idx + append" and every meta.json rewrite;
  index.lock        held around every read-modify-write of sessions.json.
meta.json is a checkpoint: its counters cover the first `messagesBytes` bytes of messages.jsonl, and a
reader adds whatever lies beyond. So an append does not rewrite meta.json (that would cost more than the
append); it is rewritten at most every `fsyncIntervalMs`, on status changes and when the process exits.
The file names, a fresh meta.json and the checkpoint arithmetic are layout.py's.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import shutil
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from openclaw_cli.core.errors import InvalidInput, NotFound, StoreError
from openclaw_cli.core.fsutil import FILE_MODE, atomic_write_json, ensure_private_dir, fsync_dir
from openclaw_cli.core.paths import Home, validate_agent_id
from openclaw_cli.security.files import read_document
from openclaw_cli.sessions import index as index_file
from openclaw_cli.sessions.archive import transcript_file
from openclaw_cli.sessions.ids import is_session_id, new_session_id, validate_session_id
from openclaw_cli.sessions.jsonl import ReadResult, read_messages
from openclaw_cli.sessions.keys import SessionKey, build_key, looks_like_key, parse_key
from openclaw_cli.sessions.layout import (
    CONTEXT_FILENAME,
    LOCKS_DIRNAME,
    MESSAGES_FILENAME,
    META_FILENAME,
    NEW_PREFIX,
    ROLES,
    iso,
    messages_size,
    new_meta,
    parse_time,
    reconcile_meta,
)
from openclaw_cli.sessions.locks import ProcessLock, forget_lock, lock_for
from openclaw_cli.sessions.meta_file import FIX_HINT, read_meta_file
from openclaw_cli.sessions.writer import Durability, SessionWriter, meta_counters


@dataclass
class SessionView:
    """A session as read from disk: meta (reconciled with the messages) and its messages."""

    meta: dict[str, Any]
    messages: list[dict[str, Any]]
    problems: list[Any]
    path: Path


class SessionStore:
    """Sessions of one agent under `home`. Thread-safe; safe across processes through file locks."""

    def __init__(self, home: Home, agent_id: str, durability: Durability | None = None) -> None:
        self.home = home
        self.agent_id = validate_agent_id(agent_id)
        self.root = home.sessions_dir(agent_id)
        self.index_path = self.root / index_file.INDEX_FILENAME
        self.locks_dir = self.root / LOCKS_DIRNAME
        self.durability = durability or Durability()
        self._writers: dict[str, SessionWriter] = {}
        self._writers_guard = threading.Lock()
        self._ensured = False
        self._index_cache: tuple[Any, dict[str, Any]] | None = None
        # Told the session id after each append and summary (the transcript index, memory/transcripts/index.py):
        # a listener must return at once; sessions/ knows nothing of what it does.
        self.listeners: list[Callable[[str], None]] = []
        _open_stores.add(self)

    # -- layout and locks -------------------------------------------------------------------------

    def ensure(self) -> None:
        """Create the sessions and locks directories (checked once per store, it is on every append)."""
        if self._ensured and self.locks_dir.is_dir():
            return
        self.home.ensure(self.root)
        ensure_private_dir(self.locks_dir)
        self._ensured = True

    def session_dir(self, session_id: str) -> Path:
        return self.home.session_dir(self.agent_id, validate_session_id(session_id))

    def key_lock(self, key: str) -> ProcessLock:
        self.ensure()
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
        return lock_for(self.locks_dir / f"key-{digest}.lock")

    def session_lock(self, session_id: str) -> ProcessLock:
        self.ensure()
        return lock_for(self.locks_dir / f"session-{validate_session_id(session_id)}.lock")

    def index_lock(self) -> ProcessLock:
        self.ensure()
        return lock_for(self.locks_dir / "index.lock")

    def check_key_agent(self, key: SessionKey) -> None:
        if key.agent_id != self.agent_id.lower():
            raise InvalidInput(
                f"session key belongs to agent {key.agent_id!r}, not {self.agent_id!r}",
                hint=f"pass --agent {key.agent_id}",
            )

    # -- index --------------------------------------------------------------------------------------

    def read_index(self) -> dict[str, Any]:
        """A fresh copy of the index, safe to change."""
        return index_file.read_index(self.index_path)

    def cached_index(self) -> dict[str, Any]:
        """The index, fully re-read only when its generation changed. Read-only: use update_index.

        Every update bumps `generation`, written near the start of the file, so checking freshness costs
        one small read. (File mtimes are too coarse for this: two updates can share a timestamp.)
        """
        try:
            with self.index_path.open("rb") as handle:
                head = handle.read(96)
        except FileNotFoundError:
            return index_file.empty_index()
        except OSError:
            return self.read_index()  # a directory or unreadable: read_index says so in one line
        generation = index_file.head_generation(head)
        cached = self._index_cache
        if generation is None or cached is None or cached[0] != generation:
            index = self.read_index()
            self._index_cache = (index.get("generation"), index)
            return index
        return cached[1]

    def write_index(self, index: dict[str, Any]) -> None:
        self.ensure()
        atomic_write_json(self.index_path, index, durable=self.durability.mode != "never")

    def update_index(self, change: Any) -> dict[str, Any]:
        """Apply `change(index)` under the index lock and replace the file atomically."""
        with self.index_lock().hold():
            index = self.read_index()
            change(index)
            index["generation"] = int(index.get("generation") or 0) + 1
            self.write_index(index)
            return index

    def current_session_id(self, key: str) -> str | None:
        entry = self.cached_index()["sessions"].get(key)
        return entry["sessionId"] if entry else None

    def resolve(self, key_or_id: str) -> str:
        """The session id named by a key (its current session) or by an id; NotFound otherwise."""
        if looks_like_key(key_or_id):
            parsed = parse_key(key_or_id)
            self.check_key_agent(parsed)
            key = build_key(parsed)
            found = self.current_session_id(key)
            if found is None:
                raise NotFound(f"no session for key {key}", hint="see `openclaw session list`")
            return found
        session_id = validate_session_id(key_or_id)
        if not (self.session_dir(session_id) / META_FILENAME).exists():
            raise NotFound(f"no session {session_id}", hint="see `openclaw session list`")
        return session_id

    # -- creating and changing sessions --------------------------------------------------------------

    def create_session(self, key: SessionKey, now: datetime, user_id: str | None = None) -> dict[str, Any]:
        """A new active session for `key`, which becomes the key's current session.

        The caller holds the key lock and has archived the previous session. Files first, index last:
        a crash in between leaves a directory that `doctor --fix` puts back into the index.
        """
        self.check_key_agent(key)
        self.ensure()
        session_id = new_session_id()
        # Built under a hidden name and renamed into place: a session directory always has its meta.json,
        # so `doctor --fix` never mistakes one being created for a damaged one.
        building = self.home.ensure(self.root / f"{NEW_PREFIX}{session_id}")
        fd = os.open(building / MESSAGES_FILENAME, os.O_CREAT | os.O_WRONLY, FILE_MODE)
        os.close(fd)
        meta = new_meta(session_id, key, now, user_id)
        durable = self.durability.mode != "never"
        atomic_write_json(
            building / CONTEXT_FILENAME, {"summary": None, "summaryCheckpoint": None}, durable=durable
        )
        atomic_write_json(building / META_FILENAME, meta, durable=durable)
        os.rename(building, self.session_dir(session_id))
        if durable:
            fsync_dir(self.root)
        text_key = build_key(key)

        def add(index: dict[str, Any]) -> None:
            index["sessions"][text_key] = {
                "sessionId": session_id,
                "status": "active",
                "updatedAt": meta["createdAt"],
            }

        self.update_index(add)
        return meta

    def set_status(self, session_id: str, status: str, now: datetime) -> dict[str, Any]:
        """Change a session's status in meta.json and in the index (archived sessions move aside)."""
        if status not in index_file.STATUSES:
            raise InvalidInput(
                f"unknown status {status!r}", hint=f"use one of {', '.join(index_file.STATUSES)}"
            )
        stamp = iso(now)
        writer = self.writer(session_id)
        meta = writer.update_meta(
            {"status": status, **({"archivedAt": stamp} if status == "archived" else {})}
        )
        key = meta.get("sessionKey")

        def change(index: dict[str, Any]) -> None:
            current = index["sessions"].get(key)
            is_current = current is not None and current.get("sessionId") == session_id
            if status == "archived":
                if is_current:
                    del index["sessions"][key]
                index["archived"][session_id] = {"sessionKey": key, "status": "archived", "updatedAt": stamp}
            elif is_current:
                current.update(status=status, updatedAt=stamp)

        self.update_index(change)
        return meta

    def delete(self, session_id: str) -> None:
        """Remove a session for good: its directory and its index entries."""
        directory = self.session_dir(session_id)
        if not directory.exists():
            raise NotFound(f"no session {session_id}", hint="see `openclaw session list`")

        def drop(index: dict[str, Any]) -> None:
            index["archived"].pop(session_id, None)
            for key, entry in list(index["sessions"].items()):
                if entry.get("sessionId") == session_id:
                    del index["sessions"][key]

        self.update_index(drop)
        self._drop_writer(session_id)
        shutil.rmtree(directory)
        lock_path = self.locks_dir / f"session-{session_id}.lock"
        forget_lock(lock_path)
        lock_path.unlink(missing_ok=True)

    # -- messages -----------------------------------------------------------------------------------

    def writer(self, session_id: str) -> SessionWriter:
        with self._writers_guard:
            writer = self._writers.get(session_id)
            if writer is None:
                directory = self.session_dir(session_id)
                if not (directory / META_FILENAME).exists():
                    raise NotFound(f"no session {session_id}", hint="see `openclaw session list`")
                writer = SessionWriter(directory, self.session_lock(session_id), self.durability)
                self._writers[session_id] = writer
            return writer

    def _drop_writer(self, session_id: str) -> None:
        with self._writers_guard:
            writer = self._writers.pop(session_id, None)
        if writer is not None:
            writer.close(flush=False)

    def release(self, session_id: str) -> None:
        """Flush and forget the in-process state of a session (it went dormant or was archived)."""
        with self._writers_guard:
            writer = self._writers.pop(session_id, None)
        if writer is not None:
            writer.close(flush=True)

    def append(
        self,
        session_id: str,
        role: str,
        content: str,
        now: datetime,
        *,
        sender: str | None = None,
        tool_calls: list[dict[str, Any]] | None = None,
        tool_call_id: str | None = None,
        user_id: str | None = None,
        anonymous: bool = False,
        model: str | None = None,
        tokens: int | None = None,
    ) -> dict[str, Any]:
        """Append one message; returns it as stored (with its idx and token count). An assistant message
        may say which `model` wrote it and the `tokens` the provider counted for it (seed 000 §2.2).

        A user message says whose it is: `userId` (the person, identity.py), or `anonymous` when the
        message carried no identity; extraction and purge read them (older messages have neither)."""
        if role not in ROLES:
            raise InvalidInput(f"unknown role {role!r}", hint=f"use one of {', '.join(ROLES)}")
        if not isinstance(content, str):
            raise InvalidInput("message content must be text")
        extra: dict[str, Any] = {}
        if tool_calls:
            extra["toolCalls"] = tool_calls
        if tool_call_id:
            extra["toolCallId"] = tool_call_id
        if sender:
            extra["sender"] = sender
        if user_id:
            extra["userId"] = user_id
        elif anonymous:
            extra["anonymous"] = True
        if model:
            extra["model"] = model
        if isinstance(tokens, int) and tokens >= 0:
            extra["tokens"] = tokens
        stored = self.writer(session_id).append(role, content, iso(now), extra)
        for listener in self.listeners:
            listener(session_id)
        return stored

    def read_session(self, session_id: str, *, count_tokens: bool = False) -> SessionView:
        """meta (brought up to date with the messages), all readable messages and the damaged lines.

        Appends do not count tokens; `count_tokens` counts them now (reading, never writing, the cache
        in tokens.json: a reading command changes nothing) and adds their sum as `historyTokens`. (The
        meta's token totals are what the model reported for the session's turns, not these counts.)"""
        directory = self.session_dir(session_id)
        meta = read_meta_file(directory / META_FILENAME)
        result = read_messages(directory / MESSAGES_FILENAME)
        if count_tokens:
            from openclaw_cli.sessions.budget.token_counts import fill_token_counts

            fill_token_counts(directory, result.messages, write_cache=False)
            meta["historyTokens"] = sum(int(m.get("tokens") or 0) for m in result.messages)
        meta.update(meta_counters(result.messages))
        meta["messagesBytes"] = messages_size(directory / MESSAGES_FILENAME)
        # The file named in warnings: the compressed archive of an archived session (sessions/archive.py).
        path = transcript_file(directory / MESSAGES_FILENAME)
        return SessionView(meta, result.messages, result.problems, path)

    def read_meta(self, session_id: str) -> dict[str, Any]:
        """meta.json with the counters of messages appended after its checkpoint added in."""
        directory = self.session_dir(session_id)
        meta = read_meta_file(directory / META_FILENAME)
        return reconcile_meta(meta, directory / MESSAGES_FILENAME)

    def read_messages(self, session_id: str) -> ReadResult:
        return read_messages(self.session_dir(session_id) / MESSAGES_FILENAME)

    # -- context.json -------------------------------------------------------------------------------

    def read_context(self, session_id: str) -> dict[str, Any]:
        path = self.session_dir(session_id) / CONTEXT_FILENAME
        try:
            value = json.loads(read_document(path))  # sealed in an encrypted home
        except FileNotFoundError:
            return {"summary": None, "summaryCheckpoint": None}
        except (OSError, ValueError) as exc:
            raise StoreError(f"{path}: damaged ({exc})", hint=FIX_HINT) from exc
        return value if isinstance(value, dict) else {"summary": None, "summaryCheckpoint": None}

    def write_summary(self, session_id: str, summary: str, checkpoint: int) -> None:
        """Record a summary of messages 0..checkpoint (messages.jsonl itself is never rewritten)."""
        directory = self.session_dir(session_id)
        atomic_write_json(directory / CONTEXT_FILENAME, {"summary": summary, "summaryCheckpoint": checkpoint})
        self.writer(session_id).update_meta({"summaryCheckpoint": checkpoint})
        for listener in self.listeners:
            listener(session_id)

    def session_ids_on_disk(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir() and is_session_id(p.name))

    def close(self) -> None:
        with self._writers_guard:
            writers = list(self._writers.values())
            self._writers.clear()
        for writer in writers:
            writer.close(flush=True)


_open_stores: weakref.WeakSet[SessionStore] = weakref.WeakSet()


@atexit.register
def _flush_all() -> None:
    # Appends between meta checkpoints are already in messages.jsonl; this only brings meta.json up to date.
    for store in list(_open_stores):
        with contextlib.suppress(OSError):
            store.close()


# Re-exported: callers import the session layout's names from here as well as from layout.py.
__all__ = [
    "CONTEXT_FILENAME",
    "LOCKS_DIRNAME",
    "MESSAGES_FILENAME",
    "META_FILENAME",
    "NEW_PREFIX",
    "ROLES",
    "Durability",
    "SessionStore",
    "SessionView",
    "iso",
    "new_meta",
    "parse_time",
    "read_meta_file",
    "reconcile_meta",
]
