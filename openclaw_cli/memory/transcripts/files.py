"""Reading one session's files for the transcript index (memory/transcripts/index.py): the user and assistant
messages appended after a byte offset, the people who wrote them, and context.json's summary."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from openclaw_cli.memory.store.transcripts import Turn
from openclaw_cli.security.files import plain_chunk, read_document
from openclaw_cli.sessions.archive import is_archive_name, read_archive
from openclaw_cli.sessions.jsonl import parse_chunk
from openclaw_cli.sessions.layout import CONTEXT_FILENAME, iso, parse_time

ROLES = ("user", "assistant")
SUMMARY_ROLE = "summary"


def new_turns(
    path: Path, start: int, size: int, session_id: str, key: str
) -> tuple[list[Turn], set[str], int]:
    """The user and assistant messages in bytes [start, size) up to the last whole line, the people who
    wrote them, and the offset read to. `path` may be a compressed archive (sessions/archive.py): it takes
    no appends, so it is read whole (start 0) and its offsets are its own size."""
    if is_archive_name(path.name):
        data = read_archive(path) if start < size else b""
        plain, offset = data[: data.rfind(b"\n") + 1], size
    else:
        with path.open("rb") as handle:
            handle.seek(start)
            data = handle.read(size - start)
        end = data.rfind(b"\n") + 1  # a line being written (or torn by a crash) waits for its newline
        # Offsets are the file's raw bytes; the records are decrypted after (sealed in an encrypted home).
        plain, offset = plain_chunk(path, data[:end], starts_file=start == 0), start + end
    turns: list[Turn] = []
    people: set[str] = set()
    for message in parse_chunk(plain).messages:
        turn = message_turn(message, session_id, key)
        if turn is not None:
            turns.append(turn)
        if message.get("role") == "user" and isinstance(message.get("userId"), str):
            people.add(message["userId"])
    return turns, people, offset


def message_turn(message: dict[str, Any], session_id: str, key: str) -> Turn | None:
    role, text, idx = message.get("role"), message.get("content"), message.get("idx")
    if role not in ROLES or not isinstance(text, str) or not text.strip() or not isinstance(idx, int):
        return None  # tool traffic, system prompts and tool-call-only turns are not conversation
    moment = parse_time(message.get("ts"))
    sender = message.get("sender") or message.get("userId")
    return Turn(
        session_id,
        key,
        "message",
        idx,
        str(role),
        None if sender is None else str(sender),
        None if moment is None else iso(moment),
        text,
    )


def summary_turn(directory: Path, session_id: str, key: str, meta: dict[str, Any]) -> Turn | None:
    context = read_json(directory / CONTEXT_FILENAME)
    summary, checkpoint = context.get("summary"), context.get("summaryCheckpoint")
    if not isinstance(summary, str) or not summary.strip() or not isinstance(checkpoint, int):
        return None
    moment = parse_time(meta.get("lastActiveAt") or meta.get("updatedAt"))
    return Turn(
        session_id,
        key,
        "summary",
        checkpoint,
        SUMMARY_ROLE,
        None,
        None if moment is None else iso(moment),
        summary,
    )


def message_indexes(path: Path, upto: int | None = None) -> list[int]:
    """The idx of every user and assistant message in the file's first `upto` bytes (all when None)."""
    try:
        if is_archive_name(path.name):  # compressed whole (sessions/archive.py): indexed whole
            data = read_archive(path)
            data, upto = data[: data.rfind(b"\n") + 1], None
        else:
            data = path.read_bytes()
    except FileNotFoundError:
        return []
    data = data if upto is None else data[:upto]
    data = data[: data.rfind(b"\n") + 1]
    if not is_archive_name(path.name):
        data = plain_chunk(path, data, starts_file=True)
    found = [
        m
        for m in parse_chunk(data).messages
        if message_turn(m, "", "") is not None
    ]
    return sorted(int(m["idx"]) for m in found)


def read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(read_document(path))  # sealed in an encrypted home
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def mtime_ns(path: Path) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0
