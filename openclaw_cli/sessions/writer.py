"""Appending to one session's messages.jsonl: locked, dense idx, fast, crash-safe.

Each append is one write(2) of one whole line to an O_APPEND descriptor, under the session's file lock.
The writer remembers how far it has read the file (its size and counters), so an append only reads the
bytes that other processes added since, never the whole file. A torn last line left by a crash is
terminated with a newline first, so the new message never glues onto it.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openclaw_cli.core.errors import NotFound, StoreError
from openclaw_cli.core.fsutil import FILE_MODE, atomic_write_json
from openclaw_cli.security.files import lines_sealer, new_lines_sealer, plain_view
from openclaw_cli.security.records import Sealer
from openclaw_cli.sessions.archive import archive_path, restore_transcript
from openclaw_cli.sessions.jsonl import parse_chunk
from openclaw_cli.sessions.locks import ProcessLock
from openclaw_cli.sessions.meta_file import read_meta_file

COUNTER_FIELDS = ("messageCount", "lastActiveAt", "nextIdx")
# What the model calls of the session's turns used, as the provider reported it (add_usage): kept in
# meta.json only, never derived from the messages (a prompt is the whole context, not one message).
USAGE_FIELDS = ("totalInputTokens", "totalOutputTokens", "totalCost")


@dataclass(frozen=True)
class Durability:
    """session.fsync: `always` fsyncs every append, `interval` at most every interval_ms, `never` leaves it
    to the OS. meta.json checkpoints are rewritten at most every interval_ms whatever the mode."""

    mode: str = "interval"
    interval_ms: int = 1000

    @classmethod
    def from_settings(cls, session_settings: Any) -> Durability:
        return cls(mode=session_settings.fsync, interval_ms=session_settings.fsync_interval_ms)


def meta_counters(messages: list[dict[str, Any]], base: dict[str, Any] | None = None) -> dict[str, Any]:
    """messageCount, lastActiveAt and nextIdx over `messages`, added to `base`."""
    start = base or {}
    counters = {
        "messageCount": int(start.get("messageCount") or 0),
        "lastActiveAt": start.get("lastActiveAt"),
        "nextIdx": int(start.get("nextIdx") or 0),
    }
    for message in messages:
        add_message(counters, message)
    return counters


def add_message(counters: dict[str, Any], message: dict[str, Any]) -> None:
    counters["messageCount"] += 1
    if isinstance(message.get("ts"), str):
        counters["lastActiveAt"] = message["ts"]
    counters["nextIdx"] = max(counters["nextIdx"], message["idx"] + 1)


class SessionWriter:
    """The in-process append state of one session. Use through SessionStore."""

    def __init__(self, directory: Path, lock: ProcessLock, durability: Durability) -> None:
        self.directory = directory
        self.messages_path = directory / "messages.jsonl"
        self.meta_path = directory / "meta.json"
        self.lock = lock
        self.durability = durability
        self._fd: int | None = None
        self._counters: dict[str, Any] | None = None
        self._size = 0
        self._ends_with_newline = True
        self._last_meta_write = time.monotonic()
        self._last_fsync = time.monotonic()
        self._meta_dirty = False
        self._unsynced = False
        # Set with the descriptor: the file's own format (a sealed header, or plain JSONL) decides.
        self._sealer: Sealer | None = None

    # -- under the lock -----------------------------------------------------------------------------

    def _descriptor(self) -> int:
        if self._fd is None:
            if not self.meta_path.exists():
                raise NotFound(f"no session at {self.directory}", hint="see `openclaw session list`")
            if self.meta_path.is_dir():
                raise StoreError(f"{self.meta_path}: a directory, not meta.json", hint="move it away")
            flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
            # A message for an archived session whose transcript was compressed: plain again first, or
            # O_CREAT would start a second, empty transcript beside it.
            restore_transcript(self.messages_path, self.meta_path, durable=self.durability.mode != "never")
            try:
                self._fd = os.open(self.messages_path, flags, FILE_MODE)
            except OSError as exc:  # a directory where messages.jsonl should be, or no permission
                raise StoreError(
                    f"{self.messages_path}: cannot append ({exc.strerror})",
                    hint="move it away, then run `openclaw doctor`",
                ) from exc
            self._sealer = self._file_sealer(self._fd)
        return self._fd

    def _file_sealer(self, fd: int) -> Sealer | None:
        """The sealer of the file open at `fd`: from its header, or a new header written now when the file
        is empty and its home encrypted. A plain file stays plain (`security init` converts it)."""
        head = os.pread(fd, 256, 0)
        if head:
            return lines_sealer(self.messages_path, head[: head.find(b"\n") + 1] if b"\n" in head else head)
        sealer = new_lines_sealer(self.messages_path)
        if sealer is not None:
            _write_all(fd, sealer.header())
        return sealer

    def _load_checkpoint(self, fd: int, size: int) -> None:
        try:
            meta = read_meta_file(self.meta_path)
        except StoreError:
            meta = {}
        offset = meta.get("messagesBytes")
        if isinstance(offset, int) and 0 <= offset <= size:
            self._counters = meta_counters([], base=meta)
            self._size = offset
            self._ends_with_newline = offset == 0 or os.pread(fd, 1, offset - 1) == b"\n"
        else:
            self._reset()

    def _reset(self) -> None:
        self._counters = meta_counters([])
        self._size = 0
        self._ends_with_newline = True

    def _replaced(self, fd: int) -> bool:
        """Whether messages.jsonl was replaced since it was opened (`memory purge` redacts a session by
        an atomic rewrite under the session lock): appends to the old file would be lost."""
        try:
            on_disk = os.stat(self.messages_path)
        except FileNotFoundError:
            # Compressed meanwhile (sessions/archive.py): reopening restores it. Else the session was
            # removed: nothing to reopen (meta.json says so on the next open).
            return archive_path(self.messages_path).exists()
        mine = os.fstat(fd)
        return (mine.st_dev, mine.st_ino) != (on_disk.st_dev, on_disk.st_ino)

    def _catch_up(self) -> int:
        """Bring the counters up to the current end of the file; returns the descriptor."""
        fd = self._descriptor()
        if self._replaced(fd):
            os.close(fd)
            self._fd = None
            self._counters = None  # re-read from the rewritten meta.json checkpoint
            fd = self._descriptor()
        size = os.fstat(fd).st_size
        if self._counters is None:
            self._load_checkpoint(fd, size)
        if size < self._size:  # the file was truncated or replaced behind our back: start over
            self._reset()
        if size > self._size:
            data = os.pread(fd, size - self._size, self._size)
            plain = (
                data
                if self._sealer is None
                else plain_view(data, self._sealer, self.messages_path, starts_file=self._size == 0)
            )
            result = parse_chunk(plain)
            assert self._counters is not None
            for message in result.messages:
                add_message(self._counters, message)
            self._ends_with_newline = data.endswith(b"\n")
            self._size = size
            self._meta_dirty = True
        return fd

    def _write_meta(self, changes: dict[str, Any] | None = None) -> dict[str, Any]:
        try:
            meta = read_meta_file(self.meta_path)  # fresh: another process may have changed the status
        except StoreError:
            meta = {}
        assert self._counters is not None
        meta.update(self._counters)
        meta.update(changes or {})
        meta["messagesBytes"] = self._size
        atomic_write_json(self.meta_path, meta, durable=self.durability.mode != "never")
        self._last_meta_write = time.monotonic()
        self._meta_dirty = False
        return meta

    def _sync(self, fd: int, force: bool = False) -> None:
        mode = self.durability.mode
        now = time.monotonic()
        due = (now - self._last_fsync) * 1000 >= self.durability.interval_ms
        if mode == "always" or (mode == "interval" and (due or force)):
            os.fdatasync(fd) if hasattr(os, "fdatasync") else os.fsync(fd)
            self._last_fsync = now
            self._unsynced = False
        else:
            self._unsynced = mode != "never"

    # -- public -------------------------------------------------------------------------------------

    def append(self, role: str, content: str, ts: str, extra: dict[str, Any]) -> dict[str, Any]:
        # No token count here: loading the tokenizer costs ~0.5 s per process and nothing needs the
        # count at append time. It is computed (and cached) when a budget is (sessions/budget/context.py).
        with self.lock.hold():
            fd = self._catch_up()
            assert self._counters is not None
            record: dict[str, Any] = {
                "idx": self._counters["nextIdx"],
                "role": role,
                "content": content,
                "ts": ts,
                **extra,
            }
            text = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            line = text + b"\n" if self._sealer is None else self._sealer.seal(text)
            if not self._ends_with_newline:
                line = b"\n" + line
            _write_all(fd, line)
            self._size += len(line)
            self._ends_with_newline = True
            add_message(self._counters, record)
            self._meta_dirty = True
            self._sync(fd)
            if (time.monotonic() - self._last_meta_write) * 1000 >= self.durability.interval_ms:
                self._write_meta()
        return record

    def counters(self) -> dict[str, Any]:
        """messageCount, token totals, lastActiveAt and nextIdx as of now (reads only new bytes)."""
        with self.lock.hold():
            self._catch_up()
            assert self._counters is not None
            return dict(self._counters)

    def update_meta(self, changes: dict[str, Any]) -> dict[str, Any]:
        """Rewrite meta.json now with `changes` applied (status, summaryCheckpoint, ...)."""
        with self.lock.hold():
            self._catch_up()
            return self._write_meta(changes)

    def add_usage(
        self, input_tokens: int, output_tokens: int, cost: float | None, *, model: str | None = None
    ) -> dict[str, Any]:
        """Add a turn's model usage to meta.json's totals now, and `model` as the session's latest: read,
        add and replace (atomically) under the session lock, so usage added by another process is never
        lost."""
        with self.lock.hold():
            self._catch_up()
            try:
                meta = read_meta_file(self.meta_path)
            except StoreError:
                meta = {}
            totals = {
                "totalInputTokens": _number(meta.get("totalInputTokens"), int) + input_tokens,
                "totalOutputTokens": _number(meta.get("totalOutputTokens"), int) + output_tokens,
                "totalCost": _number(meta.get("totalCost"), float) + (cost or 0.0),
            }
            if model:
                totals["model"] = model
            return self._write_meta(totals)

    def close(self, flush: bool = True) -> None:
        with self.lock.hold():
            if self._fd is None:
                return
            if flush and self.meta_path.exists():
                fd = self._catch_up()
                if self._unsynced:
                    self._sync(fd, force=True)
                if self._meta_dirty:
                    self._write_meta()
            os.close(self._fd)
            self._fd = None
            self._counters = None


def _number(value: Any, kind: type[int] | type[float]) -> Any:
    """A total read from meta.json, 0 when it is missing or damaged."""
    return kind(value) if isinstance(value, int | float) and not isinstance(value, bool) else kind(0)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
