"""The inbox journal: every message the gateway acknowledges is written here before the ack is sent.

A message is acknowledged at once, but its turn may start later (a busy lane, collect's debounce, the
global cap); if the gateway dies in between, the journal still holds it. Lines are JSON, appended with
one write(2) each to an O_APPEND file (so a killed process leaves whole lines, or at worst one torn
last line, which is skipped): `{"op":"accept","id",...}` when acknowledged, `{"op":"done","ids":[...]}`
when its turn has ended (the runtime has stored it). At start the gateway re-queues what was accepted
but not done, unless the session already holds it (the turn stored it and the process died before the
`done` line), then rewrites the journal with only what is still pending.

Delivered messages do not linger (they are a person's words, and `memory purge` must be able to say
where those are): whenever nothing is pending the journal is emptied, and while messages stay pending
it is rewritten with only those once `COMPACT_AFTER` more have been delivered, and at least as many as
are pending (each rewrite costs what it keeps: a burst of a thousand queued messages must not rewrite
them every 16 deliveries on the event loop). `forget` rewrites it
without one person's entries (the running gateway's `memory.purge`); `purge_file` does the same for a
journal no gateway has open.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openclaw_cli.core.fsutil import FILE_MODE, atomic_write_bytes, ensure_private_dir
from openclaw_cli.security.files import lines_sealer, new_lines_sealer, read_lines, seal_new_lines
from openclaw_cli.security.records import Sealer


@dataclass(frozen=True)
class Pending:
    id: str
    agent_id: str
    session_key: str
    text: str
    sender: str | None
    accepted_at: str
    user_id: str | None = None

    def to_line(self) -> dict[str, Any]:
        return {
            "op": "accept",
            "id": self.id,
            "agentId": self.agent_id,
            "sessionKey": self.session_key,
            "text": self.text,
            "sender": self.sender,
            "userId": self.user_id,
            "acceptedAt": self.accepted_at,
        }


def _from_line(line: dict[str, Any]) -> Pending | None:
    try:
        return Pending(
            str(line["id"]),
            str(line["agentId"]),
            str(line["sessionKey"]),
            str(line["text"]),
            line.get("sender"),
            str(line["acceptedAt"]),
            line.get("userId"),
        )
    except (KeyError, TypeError):
        return None


# Delivered messages after which the journal is rewritten with only the pending ones (when nothing is
# pending it is emptied at once).
COMPACT_AFTER = 16


class Inbox:
    """Used from one thread (the gateway's event loop)."""

    def __init__(self, path: Path, *, fsync: bool = False) -> None:
        self.path = path
        self.fsync = fsync
        self._fd: int | None = None
        self._sealer: Sealer | None = None  # set with the descriptor, by the file's own header
        self._open: dict[str, Pending] = {}  # accepted, not yet done, by this process or re-queued at start
        self._delivered = 0  # done since the last compaction

    def _descriptor(self) -> int:
        if self._fd is None:
            ensure_private_dir(self.path.parent)
            self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, FILE_MODE)
            self._sealer = self._file_sealer(self._fd)
        return self._fd

    def _file_sealer(self, fd: int) -> Sealer | None:
        """Sealed in an encrypted home (security/records.py): a new file gets its header now."""
        head = os.pread(fd, 256, 0)
        if head:
            return lines_sealer(self.path, head[: head.find(b"\n") + 1] if b"\n" in head else head)
        sealer = new_lines_sealer(self.path)
        if sealer is not None:
            os.write(fd, sealer.header())
        return sealer

    def _write(self, line: dict[str, Any]) -> None:
        fd = self._descriptor()
        text = json.dumps(line, ensure_ascii=False).encode("utf-8")
        os.write(fd, text + b"\n" if self._sealer is None else self._sealer.seal(text))
        if self.fsync:
            os.fsync(fd)

    def accept(
        self,
        agent_id: str,
        session_key: str,
        text: str,
        sender: str | None,
        accepted_at: str,
        user_id: str | None = None,
    ) -> Pending:
        entry = Pending("m-" + uuid.uuid4().hex, agent_id, session_key, text, sender, accepted_at, user_id)
        self._write(entry.to_line())
        self._open[entry.id] = entry
        return entry

    def done(self, ids: list[str]) -> None:
        """Mark messages delivered; the journal then drops the delivered ones (see the module doc)."""
        if not ids:
            return
        self._write({"op": "done", "ids": ids})
        for done_id in ids:
            self._open.pop(done_id, None)
        self._delivered += len(ids)
        # Amortised: a rewrite costs the pending entries it keeps, so it waits for as many deliveries.
        if not self._open or self._delivered >= max(COMPACT_AFTER, len(self._open)):
            self.compact(list(self._open.values()))

    def forget(self, matches: Callable[[Pending], bool]) -> int:
        """Rewrite the journal without the entries `matches` picks (delivered or not); how many went.

        A pending entry dropped here is still queued in this process, but is no longer re-queued after a
        restart: the person it belongs to asked to be forgotten."""
        entries = self.entries()
        gone = [entry for entry in entries if matches(entry)]
        self.compact([entry for entry in self.pending() if not matches(entry)])
        return len(gone)

    def pending(self) -> list[Pending]:
        """Accepted and not done, in the order they were accepted."""
        return _read(self.path)[0]

    def entries(self) -> list[Pending]:
        """Every accepted entry the journal holds, delivered or not."""
        return _read(self.path)[1]

    def compact(self, keep: list[Pending]) -> None:
        """Replace the journal with only `keep`, the entries still pending."""
        self.close()
        text = "".join(json.dumps(entry.to_line(), ensure_ascii=False) + "\n" for entry in keep)
        # An empty journal need not survive a crash: the old one holds nothing pending either.
        atomic_write_bytes(self.path, seal_new_lines(self.path, text.encode("utf-8")), durable=bool(keep))
        self._open = {entry.id: entry for entry in keep}
        self._delivered = 0

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _read(path: Path) -> tuple[list[Pending], list[Pending]]:
    """(pending, every accepted entry), each in the order accepted."""
    try:
        data = read_lines(path)  # plain JSONL, sealed on disk or not
    except FileNotFoundError:
        return [], []
    accepted: dict[str, Pending] = {}
    delivered: set[str] = set()
    for raw in data.split(b"\n"):
        try:
            line = json.loads(raw)
        except ValueError:
            continue  # a torn last line: the process died mid-write, before any ack was sent
        if not isinstance(line, dict):
            continue
        if line.get("op") == "accept" and (entry := _from_line(line)) is not None:
            accepted[entry.id] = entry
        elif line.get("op") == "done" and isinstance(line.get("ids"), list):
            delivered.update(str(done_id) for done_id in line["ids"])
    every = list(accepted.values())
    return [entry for entry in every if entry.id not in delivered], every


def purge_file(path: Path, matches: Callable[[Pending], bool]) -> int:
    """`Inbox.forget` for a journal no running gateway holds open (it also drops delivered entries)."""
    if not path.exists():
        return 0
    inbox = Inbox(path)
    try:
        return inbox.forget(matches)
    finally:
        inbox.close()
