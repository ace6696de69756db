"""What one session's directory holds and how its meta.json is kept: the file names, the meta.json of a fresh
session, and the reconciling of meta's checkpointed counters with the messages appended after it.

Plain functions on paths and dicts, no locks: store.py (which re-exports these names) and the doctor checks
and import in check.py and portability.py build on them.
"""

from __future__ import annotations

import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openclaw_cli.core.errors import StoreError
from openclaw_cli.security.files import plain_chunk
from openclaw_cli.sessions.archive import is_compressed
from openclaw_cli.sessions.jsonl import parse_chunk, read_messages
from openclaw_cli.sessions.keys import SessionKey, build_key
from openclaw_cli.sessions.writer import meta_counters

ROLES = ("user", "assistant", "system", "tool")
META_FILENAME = "meta.json"
MESSAGES_FILENAME = "messages.jsonl"
CONTEXT_FILENAME = "context.json"
LOCKS_DIRNAME = ".locks"
NEW_PREFIX = ".new-"  # a session directory being built (see create_session)


def iso(moment: datetime) -> str:
    """UTC timestamp with milliseconds and a Z, as in seed 000 §2.1."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def new_meta(session_id: str, key: SessionKey, now: datetime, user_id: str | None = None) -> dict[str, Any]:
    """meta.json of a fresh session (seed 000 §2.1 fields, plus the checkpoint offsets). `userId` is the
    person a direct session is with (identity.py), the bare peer id when nobody resolved it."""
    stamp = iso(now)
    return {
        "sessionId": session_id,
        "sessionKey": build_key(key),
        "agentId": key.agent_id,
        "channel": key.channel,
        "chatId": key.peer_id,
        "userId": (user_id or key.peer_id) if key.kind == "direct" else None,
        "createdAt": stamp,
        "lastActiveAt": stamp,
        "messageCount": 0,
        "totalInputTokens": 0,
        "totalOutputTokens": 0,
        "totalCost": 0.0,
        "status": "active",
        "model": None,
        "summaryCheckpoint": None,
        "nextIdx": 0,
        "messagesBytes": 0,
    }


def reconcile_meta(meta: dict[str, Any], messages_path: Path) -> dict[str, Any]:
    """Add the messages beyond meta's checkpoint to its counters (reads only the new bytes)."""
    offset = meta.get("messagesBytes")
    if is_compressed(messages_path):  # archived whole: meta was checkpointed to its end (sessions/archive.py)
        if not isinstance(offset, int):
            meta.update(meta_counters(read_messages(messages_path).messages))
        return meta
    size = messages_size(messages_path)
    if not isinstance(offset, int) or offset > size or offset < 0:
        result = read_messages(messages_path)
        meta.update(meta_counters(result.messages))
        meta["messagesBytes"] = size
        return meta
    if offset == size:
        return meta
    with messages_path.open("rb") as handle:
        handle.seek(offset)
        result = parse_chunk(plain_chunk(messages_path, handle.read(size - offset), starts_file=offset == 0))
    merged = meta_counters(result.messages, base=meta)
    meta.update(merged)
    meta["messagesBytes"] = size
    return meta


def messages_size(path: Path) -> int:
    """Size of messages.jsonl; StoreError when it is not a regular file (never read a directory's size)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return 0
    if not stat.S_ISREG(info.st_mode):
        raise StoreError(f"{path}: not a regular file", hint="move it away, then run `openclaw doctor`")
    return info.st_size
