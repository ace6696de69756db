"""Inbound media under home/media/ (seed 003 §7): size-capped, typed from the bytes, generated names, a TTL.

A download is streamed into a private temporary file and abandoned as soon as it passes `media.maxBytes`,
so a large file never lands whole. Its type comes from its first bytes (the sender's file name and declared
type are not trusted); its name is generated (`<uuid>.<ext>`), never the sender's. index.jsonl says whose
each file is, so `memory purge --user` can delete a person's files and `session sweep` the expired ones.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openclaw_cli.core.fsutil import FILE_MODE, atomic_write_bytes, ensure_private_dir
from openclaw_cli.security.files import append_record, read_lines, seal_new_lines
from openclaw_cli.security.records import seal_document
from openclaw_cli.security.unlocked import key_for

INDEX = "index.jsonl"
# (magic bytes, offset, mime, extension), most specific first
SIGNATURES: tuple[tuple[bytes, int, str, str], ...] = (
    (b"%PDF-", 0, "application/pdf", "pdf"),
    (b"\xff\xd8\xff", 0, "image/jpeg", "jpg"),
    (b"\x89PNG\r\n\x1a\n", 0, "image/png", "png"),
    (b"GIF8", 0, "image/gif", "gif"),
    (b"WEBP", 8, "image/webp", "webp"),
    (b"OggS", 0, "audio/ogg", "ogg"),
    (b"ID3", 0, "audio/mpeg", "mp3"),
    (b"ftyp", 4, "video/mp4", "mp4"),
    (b"PK\x03\x04", 0, "application/zip", "zip"),
)


class TooLarge(Exception):
    """The download passed the size cap and was abandoned."""


@dataclass(frozen=True)
class Saved:
    name: str
    mime: str
    size: int


def sniff(head: bytes) -> tuple[str, str]:
    """(mime, extension) from the first bytes; text when they decode as UTF-8, else octet-stream."""
    for magic, offset, mime, ext in SIGNATURES:
        if head[offset : offset + len(magic)] == magic:
            return mime, ext
    try:
        head[:512].decode("utf-8")
    except UnicodeDecodeError:
        return "application/octet-stream", "bin"
    return "text/plain", "txt"


async def save_stream(media_root: Path, chunks: AsyncIterator[bytes], max_bytes: int) -> Saved:
    """Write the streamed bytes to a new file under `media_root`; TooLarge past `max_bytes` (nothing kept)."""
    ensure_private_dir(media_root)
    temp = media_root / f".{uuid.uuid4().hex}.part"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    # In an encrypted home the file is sealed whole (security/records.py): held in memory (at most
    # max_bytes) so that no plain byte of it reaches the disk.
    key = key_for(media_root)
    held: list[bytes] = []
    size, head = 0, b""
    try:
        async for chunk in chunks:
            size += len(chunk)
            if size > max_bytes:
                raise TooLarge(f"larger than {max_bytes} bytes")
            if len(head) < 64:
                head += chunk[: 64 - len(head)]
            if key is None:
                os.write(fd, chunk)
            else:
                held.append(chunk)
        if key is not None:
            os.write(fd, seal_document(b"".join(held), key))
    except BaseException:
        os.close(fd)
        temp.unlink(missing_ok=True)
        raise
    os.close(fd)
    mime, ext = sniff(head)
    name = f"{uuid.uuid4().hex}.{ext}"
    os.replace(temp, media_root / name)
    return Saved(name, mime, size)


def record_owner(media_root: Path, names: list[str], person: str | None) -> None:
    """Say whose the files are (index.jsonl, one appended line each)."""
    if not names:
        return
    ensure_private_dir(media_root)
    for name in names:  # sealed per line in an encrypted home
        append_record(
            media_root / INDEX, json.dumps({"file": name, "person": person, "at": time.time()}).encode()
        )


def discard_media(media_root: Path, names: list[str]) -> None:
    """Delete files of a message that was refused (a stranger's photo is not kept)."""
    for name in names:
        (media_root / Path(name).name).unlink(missing_ok=True)


def _index(media_root: Path) -> list[dict[str, Any]]:
    try:
        raw = read_lines(media_root / INDEX)
    except FileNotFoundError:
        return []
    rows = []
    for line in raw.split(b"\n"):
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and isinstance(row.get("file"), str):
            rows.append(row)
    return rows


def _remove(media_root: Path, drop: set[str]) -> list[str]:
    """Delete `drop` (file names) and their index lines; the paths deleted."""
    removed = []
    for name in sorted(drop):
        path = media_root / Path(name).name  # a name from the index never leaves the media directory
        if path.exists():
            path.unlink()
            removed.append(str(path))
    kept = [row for row in _index(media_root) if row["file"] not in drop]
    text = "".join(json.dumps(row) + "\n" for row in kept)
    if (media_root / INDEX).exists():
        atomic_write_bytes(media_root / INDEX, seal_new_lines(media_root / INDEX, text.encode()))
    return removed


def forget_media(media_root: Path, person: str) -> list[str]:
    """Delete every file of `person` (memory purge --user)."""
    return _remove(media_root, {row["file"] for row in _index(media_root) if row.get("person") == person})


def sweep_media(media_root: Path, ttl_days: int, now: float | None = None) -> list[str]:
    """Delete the files older than `ttl_days` (by modification time: when they were received)."""
    if not media_root.is_dir():
        return []
    limit = (time.time() if now is None else now) - ttl_days * 86_400
    old = {
        path.name
        for path in media_root.iterdir()
        if path.is_file() and path.name != INDEX and path.stat().st_mtime < limit
    }
    return _remove(media_root, old)
