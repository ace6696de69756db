"""The SQLite transcript index (store/transcripts.py): every SQL statement on `transcripts.sqlite`.

A sibling of the memory database rather than tables inside it: the transcript index is rebuilt from the
JSON Lines at will, grows with every turn, and must never make a memory backup, restore or salvage larger or
slower. It holds, per turn, the text and its analysed terms (an FTS5 table with the memory index's
tokenizer), who took part in each session, how far each session is indexed, and the int8 vectors of the
turns embedded so far and their sign bits (store/sqlite/transcripts/vectors.py), ranked in memory
(transcripts/vectors.py). Embedding is deferred: a running process embeds new turns in the background,
a search the few it needs, `memory index` the rest.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.store import vector_codec as codec
from openclaw_cli.memory.store.sqlite.meta import get_meta, set_meta, write_txn
from openclaw_cli.memory.store.sqlite.records import chunks, marks
from openclaw_cli.memory.store.sqlite.transcripts import vectors as turn_vectors
from openclaw_cli.memory.store.sqlite.transcripts.filters import filter_sql
from openclaw_cli.memory.store.sqlite.transcripts.schema import SCHEMA_VERSION, open_transcripts
from openclaw_cli.memory.store.sqlite.transcripts.senders import SenderNames
from openclaw_cli.memory.store.transcripts import SessionProgress, Turn, TurnFilter
from openclaw_cli.memory.text.analysis import ANALYSIS_VERSION, fts_match, index_terms

if TYPE_CHECKING:
    import apsw
    import numpy as np

    from openclaw_cli.memory.store.embedder import EmbedderIdentity

IDENTITY_KEY = "embedder"
GENERATION_KEY = "vector_generation"  # bumped when vectors go (a warm matrix then reloads)


def _turn(row: Sequence[Any]) -> Turn:
    session_id, key, kind, idx, role, sender, ts, text = row[:8]
    return Turn(str(session_id), str(key), str(kind), int(idx), str(role), sender, ts, str(text))


_TURN_COLUMNS = "session_id, session_key, kind, idx, role, sender, ts, text"
# Rows without a vector are few (a running process embeds them): with a person's filter the planner chose
# the person's sessions instead, ~13 ms at 200k turns where the partial index takes 0.1 ms.
_PENDING = "INDEXED BY turns_pending"


class SqliteTranscripts:
    """The transcript index in one SQLite file (implements store/transcripts.TranscriptStorage)."""

    def __init__(self, conn: apsw.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self._writes = 0  # transactions of this connection (PRAGMA data_version counts the others')
        self._rowids_memo: tuple[tuple[TurnFilter, int, int], list[int]] | None = None
        self._senders = SenderNames()

    @classmethod
    def open(cls, path: Path) -> SqliteTranscripts:
        return cls(open_transcripts(path), path)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        try:
            with write_txn(self.conn):
                yield
        finally:
            self._writes += 1

    def close(self) -> None:
        self.conn.close()

    def data_version(self) -> int:
        """Changes when another connection commits to the file (SQLite's PRAGMA data_version)."""
        return self._scalar("PRAGMA data_version")

    def stale(self) -> str | None:
        """Why this index must be rebuilt from the transcripts (another schema or analysis), or None."""
        if get_meta(self.conn, "schema") != SCHEMA_VERSION:
            return "it was written by another version"
        if get_meta(self.conn, "analysis") != str(ANALYSIS_VERSION):
            return "it was analysed by another version of the text analysis"
        return None

    def clear(self) -> None:
        """Empty the index (inside a transaction): everything in it is derived."""
        for table in ("turns", "turns_fts", "session_people", "progress"):
            self.conn.execute(f"DELETE FROM {table}")
        self.drop_vectors()
        set_meta(self.conn, "schema", SCHEMA_VERSION)
        set_meta(self.conn, "analysis", ANALYSIS_VERSION)

    # -- writes -------------------------------------------------------------------------------------

    def add_turns(self, turns: Sequence[Turn], languages: Sequence[str] | None = None) -> int:
        from openclaw_cli.memory.text.analysis import detect_language

        for number, turn in enumerate(turns):
            language = languages[number] if languages is not None else detect_language(turn.text)
            old = self.conn.execute(
                "SELECT rowid FROM turns WHERE session_id = ? AND kind = ? AND idx = ?",
                (turn.session_id, turn.kind, turn.index),
            ).fetchone()
            if old is not None:
                self._delete_rows([int(old[0])])
            self.conn.execute(
                f"INSERT INTO turns({_TURN_COLUMNS}, language) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    turn.session_id,
                    turn.session_key,
                    turn.kind,
                    turn.index,
                    turn.role,
                    turn.sender,
                    turn.ts,
                    turn.text,
                    language,
                ),
            )
            rowid = self.conn.last_insert_rowid()
            self.conn.execute(
                "INSERT INTO turns_fts(rowid, terms) VALUES (?, ?)", (rowid, index_terms(turn.text))
            )
        return len(turns)

    def _delete_rows(self, rowids: Sequence[int]) -> None:
        for chunk in chunks(rowids):
            self.conn.execute(f"DELETE FROM turns_fts WHERE rowid IN ({marks(chunk)})", chunk)
            self.conn.execute(f"DELETE FROM turns WHERE rowid IN ({marks(chunk)})", chunk)
        turn_vectors.delete(self.conn, rowids)
        if rowids:
            self._bump_generation()

    def _bump_generation(self) -> None:
        set_meta(self.conn, GENERATION_KEY, self.vector_generation() + 1)

    def vector_generation(self) -> int:
        return int(get_meta(self.conn, GENERATION_KEY) or 0)

    def add_people(self, session_id: str, people: Iterable[str], *, only: bool = False) -> None:
        if only:  # these people and nobody else (a direct session: its own person, transcripts.py)
            self.conn.execute("DELETE FROM session_people WHERE session_id = ?", (session_id,))
        for person in people:
            self.conn.execute(
                "INSERT OR IGNORE INTO session_people(session_id, person) VALUES (?, ?)", (session_id, person)
            )

    def progress(self, session_id: str) -> SessionProgress:
        return self.all_progress(session_id).get(session_id, SessionProgress())

    def set_progress(self, session_id: str, progress: SessionProgress) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO progress(session_id, messages_bytes, summary_checkpoint, file_id, "
            "context_mtime_ns, final) VALUES (?, ?, ?, ?, ?, ?)",
            (
                session_id,
                progress.messages_bytes,
                progress.summary_checkpoint,
                progress.file_id,
                progress.context_mtime_ns,
                int(progress.final),
            ),
        )

    def all_progress(self, session_id: str | None = None) -> dict[str, SessionProgress]:
        sql = "SELECT session_id, messages_bytes, summary_checkpoint, file_id, context_mtime_ns, final FROM progress"
        rows = self.conn.execute(
            sql + (" WHERE session_id = ?" if session_id else ""), (session_id,) if session_id else ()
        )
        return {
            str(sid): SessionProgress(
                int(size), None if cp is None else int(cp), str(fid), int(mtime), bool(final)
            )
            for sid, size, cp, fid, mtime, final in rows
        }

    def indexed_sessions(self) -> dict[str, int]:
        counts = {sid: 0 for sid in self.all_progress()}
        for sid, count in self.conn.execute(
            "SELECT session_id, count(*) FROM turns WHERE kind = 'message' GROUP BY session_id"
        ):
            counts[str(sid)] = int(count)
        return counts

    def message_indexes(self, session_id: str) -> list[int]:
        rows = self.conn.execute(
            "SELECT idx FROM turns WHERE session_id = ? AND kind = 'message' ORDER BY idx", (session_id,)
        )
        return [int(r[0]) for r in rows]

    def forget_session(self, session_id: str) -> int:
        rowids = [
            int(r[0])
            for r in self.conn.execute("SELECT rowid FROM turns WHERE session_id = ?", (session_id,))
        ]
        self._delete_rows(rowids)
        self.conn.execute("DELETE FROM session_people WHERE session_id = ?", (session_id,))
        self.conn.execute("DELETE FROM progress WHERE session_id = ?", (session_id,))
        return len(rowids)

    def forget_summary(self, session_id: str) -> None:
        rowids = [
            int(r[0])
            for r in self.conn.execute(
                "SELECT rowid FROM turns WHERE session_id = ? AND kind = 'summary'", (session_id,)
            )
        ]
        self._delete_rows(rowids)

    def compact(self) -> None:
        """Rewrite the file so removed text lingers nowhere (after a purge). Outside any transaction."""
        self.conn.execute("INSERT INTO turns_fts(turns_fts) VALUES ('optimize')")
        self.conn.execute("VACUUM")
        # The old pages' text lives on in the -wal until a checkpoint copies the new ones over and truncates it.
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # -- the keyword index --------------------------------------------------------------------------

    def keyword_candidates(
        self, terms: Sequence[str], where: TurnFilter, pool: int
    ) -> list[tuple[int, float]]:
        """(rowid, BM25 score) of the best `pool` matches `where` allows. FTS5 scores every match either
        way; with a filter the join drops rows before the sort, in one statement (deepening an unfiltered
        fetch until enough rows pass cost ~7x more for one person's view of 20 people's sessions)."""
        expression = fts_match(terms)
        if expression is None:
            return []
        clause, params = filter_sql(where)
        if not clause:
            sql = (
                "SELECT rowid, bm25(turns_fts) AS s FROM turns_fts WHERE turns_fts MATCH ? ORDER BY s LIMIT ?"
            )
            rows = self.conn.execute(sql, (expression, pool))
        else:
            sql = (
                "SELECT turns_fts.rowid, bm25(turns_fts) AS s FROM turns_fts JOIN turns ON turns.rowid = "
                f"turns_fts.rowid WHERE turns_fts MATCH ?{clause} ORDER BY s LIMIT ?"
            )
            rows = self.conn.execute(sql, (expression, *params, pool))
        return [(int(rowid), -float(score)) for rowid, score in rows]

    def _passing(self, rowids: Sequence[int], clause: str, params: list[Any]) -> set[int]:
        passing: set[int] = set()
        for chunk in chunks(rowids):
            sql = f"SELECT rowid FROM turns WHERE rowid IN ({marks(chunk)}){clause}"
            passing.update(int(r[0]) for r in self.conn.execute(sql, (*chunk, *params)))
        return passing

    def rowids_where(self, where: TurnFilter) -> list[int]:
        """Every row `where` allows (for a person: the rows of their sessions, read from the session index).
        The last answer is kept until anything writes to the file: a person searching again, the usual
        case in a conversation, costs nothing here (10k rows of 200k took ~6 ms to read)."""
        key = (where, self.data_version(), self._writes)
        if self._rowids_memo is not None and self._rowids_memo[0] == key:
            return self._rowids_memo[1]
        clause, params = filter_sql(where)
        found = [int(r[0]) for r in self.conn.execute(f"SELECT rowid FROM turns WHERE 1{clause}", params)]
        self._rowids_memo = (key, found)
        return found

    def allowed(self, rowids: Sequence[int], where: TurnFilter) -> set[int]:
        clause, params = filter_sql(where)
        return self._passing(rowids, clause, params) if clause else set(rowids)

    def document_counts(self, terms: Sequence[str]) -> dict[str, int]:
        if not terms:
            return {}
        rows = self.conn.execute(
            f"SELECT term, doc FROM temp.turns_vocab WHERE term IN ({marks(terms)})", list(terms)
        )
        return {str(term): int(doc) for term, doc in rows}

    def store_size(self) -> int:
        return self._scalar("SELECT max(rowid) FROM turns")

    def indexed_terms(self, rowids: Sequence[int]) -> dict[int, tuple[str, str]]:
        found: dict[int, tuple[str, str]] = {}
        for chunk in chunks(rowids):
            for rowid, terms in self.conn.execute(
                f"SELECT rowid, terms FROM turns_fts WHERE rowid IN ({marks(chunk)})", chunk
            ):
                found[int(rowid)] = (str(terms), "")
        return found

    # -- rows ---------------------------------------------------------------------------------------

    def turns(self, rowids: Sequence[int]) -> dict[int, tuple[Turn, str]]:
        found: dict[int, tuple[Turn, str]] = {}
        for chunk in chunks(rowids):
            for row in self.conn.execute(
                f"SELECT {_TURN_COLUMNS}, language, rowid FROM turns WHERE rowid IN ({marks(chunk)})", chunk
            ):
                found[int(row[9])] = (_turn(row), str(row[8]))
        return found

    def neighbour_rowid(self, turn: Turn, step: int) -> int | None:
        """The row of the message `step` places before (-1) or after (+1) `turn` in its session."""
        row = self._neighbour_row(turn, step, "rowid")
        return None if row is None else int(row[0])

    def neighbour(self, turn: Turn, step: int) -> Turn | None:
        row = self._neighbour_row(turn, step, _TURN_COLUMNS)
        return None if row is None else _turn(row)

    def _neighbour_row(self, turn: Turn, step: int, columns: str) -> Any:
        """`columns` of the message next to `turn` in the direction of `step` (None for a summary)."""
        if turn.kind != "message":
            return None
        order, compare = ("DESC", "<") if step < 0 else ("ASC", ">")
        return self.conn.execute(
            f"SELECT {columns} FROM turns WHERE session_id = ? AND kind = 'message' AND idx {compare} ? "
            f"ORDER BY idx {order} LIMIT 1",
            (turn.session_id, turn.index),
        ).fetchone()

    def sessions_of(self, person: str) -> list[str]:
        rows = self.conn.execute(
            "SELECT session_id FROM session_people WHERE person = ? ORDER BY 1", (person,)
        )
        return [str(r[0]) for r in rows]

    def sender_names(self) -> frozenset[str]:
        """Every sender of an indexed turn (read incrementally, store/sqlite/transcripts/senders.py)."""
        return self._senders.names(self.conn)

    def has_key(self, key: str) -> bool:
        return (
            self.conn.execute("SELECT 1 FROM turns WHERE session_key = ? LIMIT 1", (key,)).fetchone()
            is not None
        )

    def people_of(self, session_id: str) -> list[str]:
        rows = self.conn.execute(
            "SELECT person FROM session_people WHERE session_id = ? ORDER BY 1", (session_id,)
        )
        return [str(r[0]) for r in rows]

    def _scalar(self, sql: str, params: Sequence[Any] = ()) -> int:
        row = self.conn.execute(sql, params).fetchone()
        return 0 if row is None or row[0] is None else int(row[0])

    def count(self) -> int:
        return self._scalar("SELECT count(*) FROM turns")

    def keyword_count(self) -> int:
        return self._scalar("SELECT count(*) FROM turns_fts")

    # -- vectors ------------------------------------------------------------------------------------

    def vector_identity(self) -> dict[str, object] | None:
        import json

        stored = get_meta(self.conn, IDENTITY_KEY)
        return None if stored is None else dict(json.loads(stored))

    def pending(self, limit: int, where: TurnFilter) -> list[tuple[int, str]]:
        clause, params = filter_sql(where)
        rows = self.conn.execute(
            f"SELECT rowid, text FROM turns {_PENDING} WHERE embedded = 0{clause} ORDER BY rowid DESC LIMIT ?",
            (*params, limit),
        )
        return [(int(rowid), str(text)) for rowid, text in rows]

    def pending_count(self, where: TurnFilter | None = None) -> int:
        clause, params = filter_sql(where or TurnFilter())
        return self._scalar(f"SELECT count(*) FROM turns {_PENDING} WHERE embedded = 0{clause}", params)

    def vector_format(self) -> codec.VectorFormat:
        return codec.VectorFormat("int8", float(get_meta(self.conn, "vector_clip") or 1.0))

    def put_vectors(self, identity: EmbedderIdentity, vectors: dict[int, np.ndarray]) -> None:
        import json

        current = self.vector_identity()
        if current is not None and current != identity.to_dict():
            self.drop_vectors()
        if self.vector_identity() is None:
            set_meta(self.conn, "vector_clip", codec.int8_format(identity.dimensions).clip)
            set_meta(self.conn, IDENTITY_KEY, json.dumps(identity.to_dict()))
        fmt = self.vector_format()
        for rowid, vector in vectors.items():
            turn_vectors.put(self.conn, rowid, vector, fmt)
            self.conn.execute("UPDATE turns SET embedded = 1 WHERE rowid = ?", (rowid,))

    def drop_vectors(self) -> None:
        turn_vectors.delete_all(self.conn)
        self.conn.execute("DELETE FROM meta WHERE key IN (?, 'vector_clip')", (IDENTITY_KEY,))
        self.conn.execute("UPDATE turns SET embedded = 0 WHERE embedded = 1")
        self._bump_generation()

    def vectors_after(self, vid: int, *, with_int8: bool = False) -> tuple[int, np.ndarray, bytes, bytes]:
        return turn_vectors.vectors_after(self.conn, vid, with_int8)

    def int8_rows(self, rowids: Sequence[int]) -> tuple[list[int], bytes]:
        return turn_vectors.int8_rows(self.conn, rowids)

    def vector_problem(self) -> str | None:
        """Why the stored vectors and their signs disagree, or None."""
        return turn_vectors.count_mismatch(self.conn)

    def read_vectors(self, rowids: Sequence[int]) -> dict[int, np.ndarray]:
        import numpy as np

        found, blob = self.int8_rows(rowids)
        if not found:
            return {}
        # One conversion for all rows (the same values as codec.decode row by row).
        block = np.frombuffer(blob, dtype=np.int8).reshape(len(found), -1).astype(np.float32)
        block *= np.float32(self.vector_format().step)
        return {rowid: block[n] for n, rowid in enumerate(found)}
