"""`memory index --check` for the transcript index (memory/transcripts/index.py): its rows against the session
files, its keyword index and its vectors against its rows, without changing either."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openclaw_cli.memory.store.sqlite.transcripts.statements import SqliteTranscripts
from openclaw_cli.memory.transcripts.files import message_indexes
from openclaw_cli.sessions.archive import is_archive_name, transcript_file
from openclaw_cli.sessions.layout import MESSAGES_FILENAME


@dataclass
class IndexCheck:
    """What `memory index --check` says of the transcript index: sessions whose rows differ from their file."""

    sessions: int = 0
    messages: int = 0
    pending_vectors: int = 0
    problems: list[str] = field(default_factory=list)
    built: bool = True
    behind: int = 0  # sessions changed since they were indexed (caught up by the next search)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "built": self.built,
            "behind": self.behind,
            "sessions": self.sessions,
            "messages": self.messages,
            "pendingVectors": self.pending_vectors,
            "ok": self.ok,
            "problems": self.problems,
        }


def compare_with_files(storage: SqliteTranscripts, sessions_dir: Path, on_disk: list[str]) -> IndexCheck:
    """The index's rows against the session files in `sessions_dir` (`on_disk`: the session ids there)."""
    result = IndexCheck()
    stale = storage.stale()
    if stale:
        result.problems.append(f"transcript index must be rebuilt: {stale}")
        return result
    indexed = storage.indexed_sessions()
    progress = storage.all_progress()
    for session_id in on_disk:
        indexed.pop(session_id, None)
        done = progress.get(session_id)
        path = transcript_file(sessions_dir / session_id / MESSAGES_FILENAME)
        # An archived session indexed to its end and compressed since holds the same messages in another
        # file (sessions/archive.py): its rows are compared with the archive, not counted behind.
        archived = is_archive_name(path.name)
        if done is None or (done.file_id != file_id(path) and not (archived and done.final)):
            result.behind += 1  # appended or rewritten since: the next search indexes it
            continue
        # What was indexed must match the transcript up to where it was read; a later append is not
        # damage, only lag.
        expected = message_indexes(path, done.messages_bytes)
        have = storage.message_indexes(session_id)
        result.sessions += 1
        result.messages += len(have)
        result.behind += not archived and _size(path) > done.messages_bytes
        if have != expected:
            result.problems.append(
                f"session {session_id}: {len(have)} messages indexed, {len(expected)} in its transcript"
            )
    result.behind += len(indexed)  # deleted since: the next search drops them
    if storage.count() != storage.keyword_count():
        result.problems.append(
            f"transcript keyword index holds {storage.keyword_count()} rows for {storage.count()} turns"
        )
    vector_problem = storage.vector_problem()
    if vector_problem is not None:
        result.problems.append(vector_problem)
    result.pending_vectors = storage.pending_count()
    return result


def file_id(path: Path) -> str:
    """Which file is at `path` ("dev:inode"; "" when none is): a rewrite makes another."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return ""
    return f"{info.st_dev}:{info.st_ino}"


def _size(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0
