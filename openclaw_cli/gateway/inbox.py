"""The inbox journal: every message the gateway acknowledges is written here before the ack is sent.

A message is acknowledged at once, but its turn may start later (a busy lane, collect's debounce, the
global cap); if the gateway dies in between, the journal still holds it. Lines are JSON, appended with
one write(2) each to an O_APPEND file (so a killed process leaves whole lines, or at worst one torn
last line, which is skipped): `{"op":"accept","id",...}` when acknowledged, `{"op":"done","ids":[...]}`
when its turn has ended (the runtime has stored it). At start the gateway re-queues what was accepted
but not done, unless the session already holds it (the turn stored it and the process died before the
`done` line), then rewrites the journal with only what is still pending.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openclaw_cli.fsutil import FILE_MODE, atomic_write_bytes, ensure_private_dir


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


# When nothing is pending and the journal has grown past this, it is emptied (a long-running gateway
# would otherwise keep every message it ever took).
TRUNCATE_BYTES = 4 * 1024 * 1024


class Inbox:
    """Used from one thread (the gateway's event loop)."""

    def __init__(self, path: Path, *, fsync: bool = False) -> None:
        self.path = path
        self.fsync = fsync
        self._fd: int | None = None
        self._open: set[str] = set()  # accepted, not yet done, by this process or re-queued at start
        self._written = 0

    def _descriptor(self) -> int:
        if self._fd is None:
            ensure_private_dir(self.path.parent)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
        return self._fd

    def _write(self, line: dict[str, Any]) -> None:
        fd = self._descriptor()
        data = (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8")
        os.write(fd, data)
        self._written += len(data)
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
        self._open.add(entry.id)
        return entry

    def done(self, ids: list[str]) -> None:
        if not ids:
            return
        self._write({"op": "done", "ids": ids})
        self._open.difference_update(ids)
        if not self._open and self._written > TRUNCATE_BYTES:
            self.compact([])

    def pending(self) -> list[Pending]:
        """Accepted and not done, in the order they were accepted."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        accepted: dict[str, Pending] = {}
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
                for done_id in line["ids"]:
                    accepted.pop(str(done_id), None)
        return list(accepted.values())

    def compact(self, keep: list[Pending]) -> None:
        """Replace the journal with only `keep` (at start, before anything new is accepted)."""
        self.close()
        text = "".join(json.dumps(entry.to_line(), ensure_ascii=False) + "\n" for entry in keep)
        atomic_write_bytes(self.path, text.encode("utf-8"))
        self._open = {entry.id for entry in keep}
        self._written = len(text.encode("utf-8"))

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
