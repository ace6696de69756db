"""The transcript index's schema, and opening its file (store/sqlite/transcripts/statements.py holds the statements)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import StoreError
from openclaw_cli.core.fsutil import create_private_file, ensure_private_dir
from openclaw_cli.memory.store.sqlite.connection import vec_extension_path
from openclaw_cli.memory.store.sqlite.meta import BUSY_TIMEOUT_MS, get_meta, set_meta, write_txn
from openclaw_cli.memory.store.sqlite.transcripts import vectors as turn_vectors
from openclaw_cli.memory.text.analysis import ANALYSIS_VERSION, FTS_TOKENIZE
from openclaw_cli.security.database import connect as encrypted_or_plain

if TYPE_CHECKING:
    import apsw

SCHEMA_VERSION = "3"
# Versions this one can be brought up to in place. 2 -> 3 added `turn_signs`, derived from the int8 rows
# already stored: filling it takes seconds where a rebuild would embed every turn again.
MIGRATABLE = ("2",)

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS turns (
    rowid INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('message', 'summary')),
    idx INTEGER NOT NULL,
    role TEXT NOT NULL,
    sender TEXT,
    ts TEXT,
    text TEXT NOT NULL,
    language TEXT NOT NULL,
    embedded INTEGER NOT NULL DEFAULT 0,
    UNIQUE (session_id, kind, idx)
);
CREATE INDEX IF NOT EXISTS turns_pending ON turns(rowid) WHERE embedded = 0;
CREATE TABLE IF NOT EXISTS session_people (
    session_id TEXT NOT NULL, person TEXT NOT NULL, PRIMARY KEY (session_id, person)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS people_by_person ON session_people(person, session_id);
CREATE TABLE IF NOT EXISTS progress (
    session_id TEXT PRIMARY KEY, messages_bytes INTEGER NOT NULL, summary_checkpoint INTEGER,
    file_id TEXT NOT NULL DEFAULT '', context_mtime_ns INTEGER NOT NULL DEFAULT 0,
    final INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS turns_by_key ON turns(session_key);
CREATE TABLE IF NOT EXISTS turn_vectors (
    vid INTEGER PRIMARY KEY, turn INTEGER NOT NULL UNIQUE, embedding BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS turn_signs (
    vid INTEGER PRIMARY KEY, turn INTEGER NOT NULL UNIQUE, signs BLOB NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS turns_fts USING fts5(terms, tokenize = '{FTS_TOKENIZE.replace("'", "''")}');
"""


def open_transcripts(path: Path) -> apsw.Connection:
    """Open (creating when missing) the transcript index at `path`. A file that is not a current index
    (damaged, another schema, another text analysis) is not repaired here: `stale()` says so."""
    import apsw

    if not path.exists():
        ensure_private_dir(path.parent)
        create_private_file(path)
    try:
        conn = encrypted_or_plain(path)  # keyed when the home is encrypted (security/database.py)
        conn.setbusytimeout(BUSY_TIMEOUT_MS)
        conn.enable_load_extension(True)
        conn.load_extension(vec_extension_path())
        conn.enable_load_extension(False)
        for pragma in (
            "journal_mode = WAL",
            "synchronous = NORMAL",
            "secure_delete = ON",
            "temp_store = MEMORY",
        ):
            conn.execute(f"PRAGMA {pragma}")
        with write_txn(conn):
            fresh = conn.execute("SELECT 1 FROM sqlite_schema WHERE name = 'turns'").fetchone() is None
            conn.execute(SCHEMA)
            if fresh:
                conn.execute("INSERT INTO turns_fts(turns_fts, rank) VALUES ('secure-delete', 1)")
                set_meta(conn, "schema", SCHEMA_VERSION)
                set_meta(conn, "analysis", ANALYSIS_VERSION)
            elif get_meta(conn, "schema") in MIGRATABLE:
                turn_vectors.fill_signs(conn)
                set_meta(conn, "schema", SCHEMA_VERSION)
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.turns_vocab USING fts5vocab(main, turns_fts, 'row')"
        )
    except (apsw.NotADBError, apsw.CorruptError, apsw.CantOpenError, apsw.ReadOnlyError) as exc:
        raise StoreError(
            f"{path}: the transcript index cannot be opened ({exc})",
            hint="it is derived from the session files: move it aside and run `openclaw memory index`",
        ) from exc
    return conn
