"""Session transcript search for one agent (issue 24): keep the transcript index in step with the
session files, and search it as a given person.

The JSON Lines stay the source of truth. Each session's progress (bytes of messages.jsonl read, the file's
identity, the summary indexed) lets `catch_up` read only what was appended since, whoever appended it (a
turn, `session append`, an import); a rewritten file (a purge redacts by rewriting) is indexed again from
the start, and a session gone from disk leaves the index. A running process (the gateway, `chat`) is told of
each append through the session store's listener and indexes it on a background thread, so a turn never
waits for the index; a search catches up first anyway. `long_lived` (the gateway, chat) keeps the int8
vectors in memory (transcripts/vectors.py), and the index thread then embeds the turns that have no
vector (newest first, a batch at a time, indexing first), so a search there rarely meets one (it embeds at
most a few itself, see transcripts/search.py) and a turn never waits for the model.

Who may see what (memory/transcripts/filters.py builds the filter): a person finds only the sessions they
took part in: a direct session's own person (never someone who wrote in it under a claimed id, issue 47:
taking part in a session never grants another person's lines), and in any other session its person and
every person who wrote in it; the owner, and the operator at the CLI, find everything. An index built
before that rule is pruned to it once, when opened (`_own_direct_sessions`).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import NotFound, StoreError
from openclaw_cli.core.thread_imports import settle_numpy
from openclaw_cli.memory.passage_memo import PassageMemo
from openclaw_cli.memory.store.embedder import EmbeddingUnavailable
from openclaw_cli.memory.store.sqlite.transcripts.statements import SqliteTranscripts
from openclaw_cli.memory.store.transcripts import SessionProgress, TurnFilter
from openclaw_cli.memory.transcripts.check import IndexCheck, compare_with_files, file_id
from openclaw_cli.memory.transcripts.files import mtime_ns, new_turns, read_json, summary_turn
from openclaw_cli.memory.transcripts.search import (
    EMBED_BATCH,
    TranscriptRequest,
    TranscriptResult,
    TranscriptSearcher,
)
from openclaw_cli.memory.transcripts.vectors import TurnVectors
from openclaw_cli.sessions.archive import transcript_file
from openclaw_cli.sessions.ids import is_session_id
from openclaw_cli.sessions.layout import CONTEXT_FILENAME, MESSAGES_FILENAME, META_FILENAME

if TYPE_CHECKING:
    from openclaw_cli.config.loading import MemorySettings
    from openclaw_cli.core.paths import Home
    from openclaw_cli.memory.store.embedder import Embedder

TRANSCRIPTS_FILENAME = "transcripts.sqlite"
SETTLED_NS = 1_000_000_000  # a directory listing is reused only when the directory is older than this


def transcripts_path(home: Home, agent_id: str) -> Path:
    return home.memory_dir(agent_id) / TRANSCRIPTS_FILENAME


class TranscriptIndex:
    """The transcript index of one agent. Thread-safe: one lock around the database."""

    def __init__(
        self,
        home: Home,
        agent_id: str,
        settings: MemorySettings,
        embedder: Callable[[], Embedder] | None = None,
        *,
        long_lived: bool = False,
    ) -> None:
        self.home = home
        self.agent_id = agent_id
        self.settings = settings
        self.embedder = embedder
        self.long_lived = long_lived and embedder is not None
        self.path = transcripts_path(home, agent_id)
        self.sessions_dir = home.sessions_dir(agent_id)
        self._storage: SqliteTranscripts | None = None
        self._lock = threading.RLock()
        self._dirty: set[str] = set()
        self._wake = threading.Event()
        self._worker: threading.Thread | None = None
        self._closing = False
        self._vectors = TurnVectors(resident=self.long_lived)  # kept warm between searches of this process
        self._passages = PassageMemo()
        # Each session's progress as of the database's data_version (read again after another connection
        # commits): reading 2,000 sessions' rows took ~40 ms of every search at 200k turns.
        self._known: dict[str, SessionProgress] | None = None
        self._listed: tuple[int, list[str]] | None = None  # (the sessions directory's mtime, its sessions)
        self._version: int | None = None

    # ------------------------------------------------------------------ plumbing

    def storage(self) -> SqliteTranscripts:
        with self._lock:
            if self._storage is None:
                storage = SqliteTranscripts.open(self.path)
                if storage.stale() is not None:
                    with storage.transaction():
                        storage.clear()
                self._own_direct_sessions(storage)
                self._storage = storage
            return self._storage

    def _own_direct_sessions(self, storage: SqliteTranscripts) -> None:
        """Once per index: a direct session's people become its own person alone (an older version counted
        everyone who wrote in it, so a claimed sender could read a DM's history by searching)."""
        from openclaw_cli.memory.store.sqlite.meta import get_meta, set_meta

        if get_meta(storage.conn, DIRECT_PEOPLE_KEY) == "1":
            return
        with storage.transaction():
            for session_id in storage.indexed_sessions():
                person = _direct_person(read_json(self.sessions_dir / session_id / META_FILENAME))
                if person is not None:
                    storage.add_people(session_id, [person], only=True)
            set_meta(storage.conn, DIRECT_PEOPLE_KEY, "1")

    def close(self) -> None:
        self._closing = True
        self._wake.set()
        if self._worker is not None:
            self._worker.join()
            self._worker = None
        with self._lock:
            if self._storage is not None:
                with suppress(Exception):
                    self._storage.close()
                self._storage = None

    # ------------------------------------------------------------------ indexing

    def session_changed(self, session_id: str) -> None:
        """The session store's listener: a message or summary was written. Costs the turn a set insert;
        the background thread indexes it."""
        self._dirty.add(session_id)
        self._start_worker()

    def _start_worker(self) -> None:
        if self._worker is None:
            with self._lock:
                if self._worker is None and not self._closing:
                    settle_numpy()
                    self._worker = threading.Thread(target=self._work, name="transcript-index", daemon=True)
                    self._worker.start()
        self._wake.set()

    def _work(self) -> None:
        while not self._closing:
            self._wake.wait()
            self._wake.clear()
            self.flush()
            if self.long_lived:
                with suppress(EmbeddingUnavailable, StoreError):  # a search says so, and embeds later
                    self.embed_new()

    def embed_new(self, batch: int = EMBED_BATCH) -> int:
        """Embed turns that have no vector, newest first, a batch at a time, until none is left or a session
        changed (indexing it comes first). The lock is held only to read and to write, never while the
        model runs, so a search does not wait for it. Returns how many were embedded."""
        if self.embedder is None:
            return 0
        done = 0
        storage = self.storage()
        while not self._closing and not self._dirty:
            with self._lock:
                rows = storage.pending(batch, TurnFilter())
            if not rows or self._closing:
                break
            embedder = self.embedder()
            vectors = self._passages.embed(embedder, [text for _, text in rows])  # repeats not again
            with self._lock:
                # A purge may have removed or rewritten a row meanwhile: only what is still there, unchanged.
                current = storage.turns([rowid for rowid, _ in rows])
                kept = {
                    rowid: vectors[n]
                    for n, (rowid, text) in enumerate(rows)
                    if rowid in current and current[rowid][0].text == text
                }
                with storage.transaction():
                    storage.put_vectors(embedder.identity, kept)
            done += len(kept)
        return done

    def flush(self) -> int:
        """Index the sessions the listener named since the last flush."""
        done = 0
        while self._dirty:
            session_id = self._dirty.pop()
            with suppress(NotFound, StoreError, OSError):  # gone or damaged: a search's catch-up says so
                done += self.index_session(session_id)
        return done

    def session_ids_on_disk(self) -> list[str]:
        """The session directories. Listing 2,000 of them took ~15 ms of every search, so the last listing
        is kept while the directory's mtime stays what it was, and that mtime is over a second old (a
        directory made within the clock's granularity of the listing could leave it unchanged)."""
        try:
            info = os.stat(self.sessions_dir)
            entries = os.scandir(self.sessions_dir)
        except (FileNotFoundError, NotADirectoryError):
            return []
        with entries:
            if self._listed is not None and self._listed[0] == info.st_mtime_ns:
                return self._listed[1]
            found = sorted(e.name for e in entries if is_session_id(e.name) and e.is_dir())
        if time.time_ns() - info.st_mtime_ns > SETTLED_NS:
            self._listed = (info.st_mtime_ns, found)
        return found

    def catch_up(self) -> int:
        """Bring the index up to date with every session on disk (active, dormant and archived); a session
        gone from disk leaves it. An archived session indexed to its end is not looked at again (it takes
        no more messages), so a search at a year of sessions stats only the live ones. Returns the turns
        indexed."""
        on_disk = self.session_ids_on_disk()
        storage = self.storage()
        done = 0
        with self._lock:
            known = self._progress(storage)
            for gone in set(known) - set(on_disk):
                with storage.transaction():
                    storage.forget_session(gone)
                known.pop(gone, None)
            for session_id in on_disk:
                progress = known.get(session_id)
                if progress is None or not progress.final:
                    done += self.index_session(session_id, progress)
        return done

    def _progress(self, storage: SqliteTranscripts) -> dict[str, SessionProgress]:
        version = storage.data_version()
        if self._known is None or version != self._version:
            self._known, self._version = storage.all_progress(), version
        return self._known

    def _record(self, storage: SqliteTranscripts, session_id: str, progress: SessionProgress) -> None:
        storage.set_progress(session_id, progress)
        if self._known is not None:
            self._known[session_id] = progress

    def index_session(self, session_id: str, progress: SessionProgress | None = None) -> int:
        """Index what was appended to one session since it was last indexed (all of it after a rewrite)."""
        directory = self.sessions_dir / session_id
        messages = transcript_file(directory / MESSAGES_FILENAME)  # or its compressed archive
        try:
            info = os.stat(messages)
        except FileNotFoundError:
            return 0
        identity = file_id(messages)
        context_mtime = mtime_ns(directory / CONTEXT_FILENAME)
        storage = self.storage()
        with self._lock:
            known = progress if progress is not None else storage.progress(session_id)
            rewritten = known.file_id not in ("", identity) or info.st_size < known.messages_bytes
            meta = read_json(directory / META_FILENAME)
            unchanged = known.messages_bytes == info.st_size and known.context_mtime_ns == context_mtime
            if not rewritten and unchanged:
                if meta.get("status") == "archived" and not known.final:
                    with storage.transaction():  # archived since it was indexed to its end: done with
                        self._record(storage, session_id, replace(known, final=True))
                return 0
            key = str(meta.get("sessionKey") or f"agent:{self.agent_id}:unknown")
            start = 0 if rewritten else known.messages_bytes
            turns, people, end = new_turns(messages, start, info.st_size, session_id, key)
            fresh_context = rewritten or context_mtime != known.context_mtime_ns
            summary = summary_turn(directory, session_id, key, meta) if fresh_context else None
            with storage.transaction():
                if rewritten:
                    storage.forget_session(session_id)
                storage.add_turns(turns)
                direct = _direct_person(meta)
                if direct is not None:  # a DM is its person's alone, whoever else wrote in it
                    storage.add_people(session_id, [direct], only=True)
                else:
                    if meta.get("userId"):
                        people.add(str(meta["userId"]))
                    storage.add_people(session_id, people)
                checkpoint = known.summary_checkpoint if not rewritten else None
                if summary is not None and summary.index != checkpoint:
                    storage.forget_summary(session_id)
                    storage.add_turns([summary])
                    checkpoint = summary.index
                final = meta.get("status") == "archived" and end == info.st_size
                self._record(
                    storage, session_id, SessionProgress(end, checkpoint, identity, context_mtime, final)
                )
            return len(turns) + (summary is not None)

    def forget_sessions(self, session_ids: Iterable[str], *, compact: bool = True) -> int:
        """Remove these sessions' rows now (a purge redacted them; the next catch-up indexes what is left),
        and rewrite the file so the removed text lingers nowhere in it."""
        storage = self.storage()
        removed = 0
        self._passages.forget()
        with self._lock:
            self._known = None
            with storage.transaction():
                for session_id in session_ids:
                    removed += storage.forget_session(session_id)
            if compact:
                storage.compact()
        return removed

    def compact(self) -> None:
        """Rewrite the file so removed text lingers nowhere in it."""
        with self._lock:
            self.storage().compact()

    # ------------------------------------------------------------------ search

    def search(self, request: TranscriptRequest, *, vectors: bool = True) -> TranscriptResult:
        """Search as `request.where` says (the caller decides whose view, see `viewer_filter`)."""
        from openclaw_cli.memory.transcripts.search import validate

        validate(request)
        self.catch_up()
        storage = self.storage()
        self._check_sessions(storage, request.where)
        with self._lock:
            if vectors and self.embedder is not None:
                self._vectors.refresh(storage)  # while a preloading model finishes (its first call waits)
                embedder = self.embedder()
            else:
                embedder = None
            result = TranscriptSearcher(storage, self.settings.search, embedder, self._vectors).search(
                request
            )
        if self.long_lived and result.pending:
            self._start_worker()  # turns written while no process ran (an import, `session append`)
        return result

    def _check_sessions(self, storage: SqliteTranscripts, where: TurnFilter) -> None:
        known_ids = set(storage.all_progress()) if where.sessions else set()
        for session_id in where.sessions:
            if session_id not in known_ids:
                raise NotFound(f"no session {session_id}", hint="see `openclaw session list`")
        for key in where.keys:
            if not storage.has_key(key):
                raise NotFound(f"no session with key {key}", hint="see `openclaw session list`")

    # ------------------------------------------------------------------ upkeep

    def check(self) -> IndexCheck:
        """Compare the index with the session files, without changing either."""
        result = IndexCheck()
        if not self.path.exists():
            # Not built yet (a home from before it, or no search since): the first search or `memory index`
            # builds it from the session files, so nothing is wrong.
            result.built = False
            return result
        storage = self.storage()
        with self._lock:
            return compare_with_files(storage, self.sessions_dir, self.session_ids_on_disk())

    def repair(self, *, embed: bool = True, progress: Callable[[int], None] | None = None) -> dict[str, int]:
        """Rebuild the index from the session files (everything in it is derived), then embed every turn."""
        storage = self.storage()
        self._passages.forget()
        with self._lock:
            self._known = None
            with storage.transaction():
                storage.clear()
            indexed = self.catch_up()
            embedded = 0
            if embed and self.embedder is not None:
                searcher = TranscriptSearcher(storage, self.settings.search, self.embedder())
                while True:
                    step = searcher.embed_pending(TurnFilter(), 512)
                    if not step:
                        break
                    embedded += step
                    if progress is not None:
                        progress(step)
        return {"turns": indexed, "embedded": embedded}


DIRECT_PEOPLE_KEY = "people.directOwnPerson"  # set once the index counts a DM's own person alone


def _direct_person(meta: dict[str, object]) -> str | None:
    """The person of a direct session (meta.json's `userId`), None for any other session."""
    key, user = meta.get("sessionKey"), meta.get("userId")
    if not isinstance(key, str) or ":direct:" not in key or not isinstance(user, str) or not user.strip():
        return None
    return user
