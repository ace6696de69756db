"""`session export` / `session import`: move a whole conversation (meta, summary and messages) between homes.

The export is JSON Lines: a meta line `{"type": "meta", ...meta.json, "context": {"summary",
"summaryCheckpoint"}}`, then one `{"type": "message", ...}` line per message, as messages.jsonl holds it.
The meta's `messageCount` tells a file cut short at a line boundary from a complete one.

Import checks the whole file first (nothing is written when a line is bad), then builds the session
directory under a hidden name and renames it into place, as `create_session` does, and adds it to the
index last. The session keeps its id (importing it twice is refused) and its key, re-targeted to the
importing agent. It becomes its key's current session unless that key already has one here: then it is
stored archived, so the conversation going on here is not displaced (`session list --status archived`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from openclaw_cli.core.errors import Conflict, InvalidInput
from openclaw_cli.core.fsutil import FILE_MODE, atomic_write_json, fsync_dir
from openclaw_cli.core.textcheck import HINT as TEXT_HINT
from openclaw_cli.core.textcheck import find_bad_text
from openclaw_cli.security.files import seal_new_lines
from openclaw_cli.sessions.ids import validate_session_id
from openclaw_cli.sessions.index import STATUSES
from openclaw_cli.sessions.keys import build_key, parse_key
from openclaw_cli.sessions.layout import (
    CONTEXT_FILENAME,
    MESSAGES_FILENAME,
    META_FILENAME,
    NEW_PREFIX,
    ROLES,
    iso,
)
from openclaw_cli.sessions.store import SessionStore
from openclaw_cli.sessions.writer import meta_counters

HINT = "nothing was imported; give a file written by `openclaw session export`"
# Derived from the messages on import, never taken from the file.
DERIVED = ("type", "context", "messagesBytes", "nextIdx", "messageCount", "lastActiveAt")


def export_lines(store: SessionStore, target: str) -> tuple[Iterator[dict[str, Any]], list[Any]]:
    """The export's lines for the session named by a key or id, and the damaged lines it skipped."""
    session_id = store.resolve(target)
    view = store.read_session(session_id)
    context = store.read_context(session_id)

    def lines() -> Iterator[dict[str, Any]]:
        yield {"type": "meta", **view.meta, "context": context}
        for message in view.messages:
            yield {"type": "message", **message}

    return lines(), view.problems


@dataclass(frozen=True)
class ParsedSession:
    meta: dict[str, Any]
    context: dict[str, Any]
    messages: list[dict[str, Any]]


def _line_object(raw: bytes, number: int) -> dict[str, Any]:
    try:
        value = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"line {number}: not valid UTF-8 (byte {exc.start})", hint=HINT) from exc
    except (ValueError, RecursionError) as exc:
        raise InvalidInput(f"line {number}: not valid JSON ({str(exc)[:80]})", hint=HINT) from exc
    if not isinstance(value, dict):
        raise InvalidInput(f"line {number}: expected a JSON object", hint=HINT)
    bad = find_bad_text(value)
    if bad is not None:
        raise InvalidInput(f"line {number}: {bad.describe()}", hint=f"{TEXT_HINT}; {HINT}")
    return value


def _message(value: dict[str, Any], number: int, previous: int) -> dict[str, Any]:
    if value.get("type") != "message":
        raise InvalidInput(f"line {number}: expected a message line (type 'message')", hint=HINT)
    idx, role = value.get("idx"), value.get("role")
    if not isinstance(idx, int) or isinstance(idx, bool) or idx <= previous:
        raise InvalidInput(f"line {number}: idx must be an integer above the previous message's", hint=HINT)
    if role not in ROLES:
        raise InvalidInput(f"line {number}: unknown role {role!r}", hint=f"use one of {', '.join(ROLES)}")
    if not isinstance(value.get("ts"), str):
        raise InvalidInput(f"line {number}: 'ts' must be a timestamp string", hint=HINT)
    return {k: v for k, v in value.items() if k != "type"}


def parse_export(raw_lines: Iterable[bytes]) -> ParsedSession:
    """Check a whole session export; the first problem is an InvalidInput naming its line."""
    numbered = [(n, raw) for n, raw in enumerate(raw_lines, start=1) if raw.strip()]
    if not numbered:
        raise InvalidInput("the input is empty", hint=HINT)
    first_number, first = numbered[0]
    meta = _line_object(first, first_number)
    if meta.get("type") != "meta":
        raise InvalidInput(f"line {first_number}: the first line must be the meta line", hint=HINT)
    validate_session_id(str(meta.get("sessionId")))
    if not isinstance(meta.get("sessionKey"), str):
        raise InvalidInput(f"line {first_number}: the meta line has no sessionKey", hint=HINT)
    parse_key(meta["sessionKey"])
    messages: list[dict[str, Any]] = []
    for number, raw in numbered[1:]:
        messages.append(_message(_line_object(raw, number), number, messages[-1]["idx"] if messages else -1))
    expected = meta.get("messageCount")
    if isinstance(expected, int) and len(messages) < expected:
        raise InvalidInput(
            f"the file holds {len(messages)} of the session's {expected} messages: it was cut short (truncated)",
            hint=HINT,
        )
    context = meta.get("context") if isinstance(meta.get("context"), dict) else {}
    return ParsedSession(meta, context or {}, messages)


@dataclass(frozen=True)
class ImportedSession:
    session_id: str
    session_key: str
    status: str
    messages: int
    displaced: bool  # the key already had a session here, so this one was stored archived

    def to_dict(self) -> dict[str, Any]:
        return {
            "sessionId": self.session_id,
            "sessionKey": self.session_key,
            "status": self.status,
            "messages": self.messages,
            "storedArchived": self.displaced,
        }


def _write_messages(path: Any, messages: list[dict[str, Any]]) -> int:
    data = b"".join(
        json.dumps(m, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n" for m in messages
    )
    data = seal_new_lines(path, data)  # sealed in an encrypted home; meta's messagesBytes counts these bytes
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_EXCL, FILE_MODE)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    return len(data)


def import_session(store: SessionStore, parsed: ParsedSession, now: datetime) -> ImportedSession:
    """Store a parsed export as a session of `store`'s agent (see the module doc for the rules)."""
    session_id = validate_session_id(parsed.meta["sessionId"])
    key = build_key(replace(parse_key(parsed.meta["sessionKey"]), agent_id=store.agent_id.lower()))
    store.ensure()
    with store.key_lock(key).hold():
        if store.session_dir(session_id).exists():
            raise Conflict(
                f"session {session_id} already exists here",
                hint="it was imported before; see `openclaw session show`",
            )
        displaced = store.current_session_id(key) is not None
        status = str(parsed.meta.get("status"))
        if displaced or status not in STATUSES:
            status = "archived"
        building = store.home.ensure(store.root / f"{NEW_PREFIX}{session_id}")
        size = _write_messages(building / MESSAGES_FILENAME, parsed.messages)
        meta = {k: v for k, v in parsed.meta.items() if k not in DERIVED}
        meta.update(sessionKey=key, agentId=store.agent_id, status=status, importedAt=iso(now))
        if status == "archived":
            meta.setdefault("archivedAt", iso(now))
        meta.update(meta_counters(parsed.messages), messagesBytes=size)
        context = {
            "summary": parsed.context.get("summary"),
            "summaryCheckpoint": parsed.context.get("summaryCheckpoint"),
        }
        atomic_write_json(building / CONTEXT_FILENAME, context)
        atomic_write_json(building / META_FILENAME, meta)
        os.rename(building, store.session_dir(session_id))
        fsync_dir(store.root)
        stamp = meta.get("lastActiveAt") or iso(now)

        def add(index: dict[str, Any]) -> None:
            if status == "archived":
                index["archived"][session_id] = {"sessionKey": key, "status": status, "updatedAt": stamp}
            else:
                index["sessions"][key] = {"sessionId": session_id, "status": status, "updatedAt": stamp}

        store.update_index(add)
    return ImportedSession(session_id, key, status, len(parsed.messages), displaced)
