"""Per-account channel state under home/channels/<channel>/<account>/: the journal and the update offset.

journal.jsonl (0600, O_APPEND, one write per line; a torn last line is skipped) follows every inbound
message from arrival to the last part of its reply:
  {"op":"in", "id", ...}        the message, written (and fsynced) before the offset moves past it;
  {"op":"reply", "id", "parts"} the reply, cut into the parts to send (so a restart sends the same ones);
  {"op":"sent", "id", "part"}   one part accepted by the platform;
  {"op":"failed", "id", "error", "final"}  a send that failed (final: never to be retried).
At start, what is not finished is picked up where it stopped: a reply with unsent parts sends only those, a
message without a reply is answered. Finished entries are compacted away to their ids (a redelivered update
or a retried Slack event is recognised), so a person's words do not linger here.

offset.json holds the next update id to ask for (Telegram), replaced atomically.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openclaw_cli.core.fsutil import FILE_MODE, atomic_write_json, ensure_private_dir
from openclaw_cli.core.paths import validate_name
from openclaw_cli.security.files import line_bytes, open_for_append, read_lines, seal_new_lines
from openclaw_cli.security.records import Sealer

KEEP_SEEN = 5000  # finished ids remembered for deduplication after a compaction
COMPACT_AFTER = 64


def account_dir(root: Path, channel: str, account: str) -> Path:
    """home/channels/<channel>/<account>; both names validated (they become paths)."""
    return root / "channels" / validate_name(channel, "channel") / validate_name(account, "account id")


@dataclass
class Entry:
    id: str
    record: dict[str, Any]  # the "in" line
    parts: list[str] | None = None
    sent: set[int] = field(default_factory=set)
    failed: str | None = None
    final: bool = False

    @property
    def finished(self) -> bool:
        return self.final or (self.parts is not None and len(self.sent) >= len(self.parts))


class ChannelJournal:
    """Used from the gateway's event loop only."""

    def __init__(self, directory: Path, *, fsync: bool = True) -> None:
        self.directory = directory
        self.path = directory / "journal.jsonl"
        self.offset_path = directory / "offset.json"
        self.fsync = fsync
        self._fd: int | None = None
        self._sealer: Sealer | None = None  # set with the descriptor, by the file's own header
        self.entries: dict[str, Entry] = {}
        self.seen: dict[str, float] = {}
        self.failed_sends = 0
        self._finished_since = 0
        self._load()

    # ------------------------------------------------------------------ reading

    def _load(self) -> None:
        try:
            data = read_lines(self.path)  # plain JSONL, sealed on disk or not
        except FileNotFoundError:
            return
        for raw in data.split(b"\n"):
            try:
                line = json.loads(raw)
            except ValueError:
                continue  # a torn last line: written by a process killed mid-write, never acted on
            if isinstance(line, dict):
                self._apply(line)
        for entry in list(self.entries.values()):
            if entry.finished:
                self._finish(entry)

    def _apply(self, line: dict[str, Any]) -> None:
        op, ident = line.get("op"), str(line.get("id"))
        if op == "seen":
            self.seen[ident] = float(line.get("at") or 0)
        elif op == "in":
            self.entries[ident] = Entry(ident, line)
        elif (entry := self.entries.get(ident)) is not None:
            if op == "reply":
                entry.parts = [str(p) for p in line.get("parts") or []]
            elif op == "sent":
                entry.sent.add(int(line.get("part", 0)))
            elif op == "failed":
                entry.failed = str(line.get("error"))
                entry.final = bool(line.get("final"))

    # ------------------------------------------------------------------ writing

    def _write(self, line: dict[str, Any], *, durable: bool = False) -> None:
        if self._fd is None:
            ensure_private_dir(self.directory)
            self._fd, self._sealer = open_for_append(self.path, FILE_MODE)  # sealed in an encrypted home
        os.write(self._fd, line_bytes(self._sealer, json.dumps(line, ensure_ascii=False).encode("utf-8")))
        if durable and self.fsync:
            os.fsync(self._fd)
        self._apply(line)

    def has(self, event_id: str) -> bool:
        return event_id in self.entries or event_id in self.seen

    def accept(self, event_id: str, record: dict[str, Any]) -> Entry:
        """Journal an inbound message durably (before its offset is acknowledged)."""
        self._write({**record, "op": "in", "id": event_id, "at": time.time()}, durable=True)
        return self.entries[event_id]

    def reply(self, event_id: str, parts: list[str]) -> None:
        self._write({"op": "reply", "id": event_id, "parts": parts}, durable=True)
        self._maybe_finish(event_id)

    def sent(self, event_id: str, part: int) -> None:
        self._write({"op": "sent", "id": event_id, "part": part}, durable=True)
        self._maybe_finish(event_id)

    def failed(self, event_id: str, error: str, *, final: bool) -> None:
        self.failed_sends += 1
        self._write({"op": "failed", "id": event_id, "error": error, "final": final}, durable=True)
        self._maybe_finish(event_id)

    def _maybe_finish(self, event_id: str) -> None:
        entry = self.entries.get(event_id)
        if entry is not None and entry.finished:
            self._finish(entry)
            self._finished_since += 1
            if not self.entries or self._finished_since >= COMPACT_AFTER:
                self.compact()

    def _finish(self, entry: Entry) -> None:
        self.entries.pop(entry.id, None)
        self.seen[entry.id] = time.time()

    def pending(self) -> list[Entry]:
        """Entries not finished, in the order they arrived."""
        return list(self.entries.values())

    def pending_sends(self) -> int:
        return sum(1 for entry in self.entries.values() if entry.parts is not None)

    def compact(self) -> None:
        """Rewrite the journal with the unfinished entries and the ids of recently finished ones."""
        self.close()
        recent = sorted(self.seen.items(), key=lambda item: item[1])[-KEEP_SEEN:]
        self.seen = dict(recent)
        lines = [{"op": "seen", "id": ident, "at": at} for ident, at in recent]
        for entry in self.entries.values():
            lines.append(entry.record)
            if entry.parts is not None:
                lines.append({"op": "reply", "id": entry.id, "parts": entry.parts})
            lines.extend({"op": "sent", "id": entry.id, "part": part} for part in sorted(entry.sent))
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        from openclaw_cli.core.fsutil import atomic_write_bytes

        atomic_write_bytes(self.path, seal_new_lines(self.path, text.encode("utf-8")), durable=self.fsync)
        self._finished_since = 0

    def forget(self, matches: Any) -> int:
        """Drop the entries whose "in" record `matches` (a purged person's words); how many went."""
        gone = [entry for entry in self.entries.values() if matches(entry.record)]
        for entry in gone:
            self.entries.pop(entry.id, None)
        self.compact()
        return len(gone)

    # ------------------------------------------------------------------ offset

    def offset(self) -> int | None:
        try:
            value = json.loads(self.offset_path.read_bytes()).get("offset")
        except (OSError, ValueError, AttributeError):
            return None
        return int(value) if isinstance(value, int) else None

    def save_offset(self, offset: int) -> None:
        atomic_write_json(self.offset_path, {"offset": offset}, durable=self.fsync)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
