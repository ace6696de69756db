"""Compressing the transcripts of archived sessions (`session.archive.compress`, sessions/archive.py).

Archiving a session (`session archive`, the sweep's resets) compresses its transcript; `session sweep`
also compresses those archived before (an older home, a run cut short, and sessions a reset archived in
the middle of a turn, which is not made to wait for it), one session at a time, so a sweep killed
anywhere leaves every transcript whole and the next one goes on where it stopped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from openclaw_cli.core.errors import NotFound, StoreError
from openclaw_cli.core.fsutil import atomic_write_json
from openclaw_cli.security.files import plain_chunk
from openclaw_cli.sessions.archive import archive_path, compress_transcript
from openclaw_cli.sessions.jsonl import parse_chunk
from openclaw_cli.sessions.layout import MESSAGES_FILENAME, META_FILENAME
from openclaw_cli.sessions.meta_file import read_meta_file
from openclaw_cli.sessions.store import SessionStore
from openclaw_cli.sessions.writer import meta_counters


@dataclass
class Compressed:
    """What a pass compressed: sessions, and their transcripts' bytes before and after."""

    sessions: int = 0
    bytes_before: int = 0
    bytes_after: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"sessions": self.sessions, "bytesBefore": self.bytes_before, "bytesAfter": self.bytes_after}


def compress_session(store: SessionStore, session_id: str) -> tuple[int, int] | None:
    """Compress an archived session's transcript; (bytes before, after), or None when there was nothing
    to do (already compressed, empty, or no longer archived: a message reopened it meanwhile)."""
    directory = store.session_dir(session_id)
    messages = directory / MESSAGES_FILENAME
    store.release(session_id)  # this process's writer closes its descriptor on the plain file
    with store.session_lock(session_id).hold():
        try:
            raw = messages.read_bytes()
            meta = read_meta_file(directory / META_FILENAME)
        except (FileNotFoundError, NotFound, IsADirectoryError):
            return None
        if meta.get("status") != "archived" or not raw.strip():
            return None
        plain = plain_chunk(messages, raw, starts_file=True)
        # meta.json checkpointed to the end of what is compressed, before it is: readers then trust its
        # counters while the transcript is only in the archive (layout.reconcile_meta).
        meta.update(meta_counters(parse_chunk(plain).messages))
        meta["messagesBytes"] = len(raw)
        durable = store.durability.mode != "never"
        atomic_write_json(directory / META_FILENAME, meta, durable=durable)
        compress_transcript(messages, plain, durable=durable)
        return len(raw), os.stat(archive_path(messages)).st_size


def compress_archived(store: SessionStore) -> Compressed:
    """Compress every archived session's transcript still plain (resumable, see the module doc). A session
    whose transcript cannot be read is left as it is, for `doctor` to report."""
    done = Compressed()
    for session_id in sorted(store.read_index()["archived"]):
        if not (store.session_dir(session_id) / MESSAGES_FILENAME).is_file():
            continue
        try:
            sizes = compress_session(store, session_id)
        except StoreError:
            continue
        if sizes is not None:
            done.sessions += 1
            done.bytes_before += sizes[0]
            done.bytes_after += sizes[1]
    return done
