"""The memory database's schema, as named migrations applied in order (each in its own write transaction).

The records table is the source of truth; `records_fts` and the vec0 table named in `meta.vector_table` are
derived indexes (see upkeep/index.py). A store with data is copied before a migration changes it
(file_copy.before_migration).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from openclaw_cli.memory.store.layout import COMPOSITE, LANGUAGE_TRUST, MINILM_DIMS, unread_half
from openclaw_cli.memory.store.sqlite import vec
from openclaw_cli.memory.store.sqlite.file_copy import before_migration
from openclaw_cli.memory.store.sqlite.meta import FTS_ANALYSIS_KEY, set_meta, write_txn
from openclaw_cli.memory.store.sqlite.records import text_hash
from openclaw_cli.memory.store.vectors import centroid

if TYPE_CHECKING:
    import apsw

_CATEGORY_CHECK = "category IN ('profile','preference','event','case','lesson','insight','note')"

Migration = str | Callable[["apsw.Connection"], None]

# The keyword index, also recreated from scratch by a rebuild of a damaged index (upkeep/index.py).
FTS_DDL = """CREATE VIRTUAL TABLE records_fts USING fts5(l0, l1, tokenize = '{tokenize}');
        INSERT INTO records_fts(records_fts, rank) VALUES ('secure-delete', 1);"""

# embedding_cache is a rowid table: as WITHOUT ROWID its 1.5 KB vector blobs packed so badly that 100k
# vectors took 447 MB; with a rowid and a unique index they take about a third of that. (0002 drops it.)
MIGRATIONS: list[tuple[str, Migration]] = [
    (
        "0001_initial",
        f"""
        CREATE TABLE records (
            rowid INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            scope TEXT NOT NULL CHECK (scope IN ('user','agent')),
            user_id TEXT,
            agent_id TEXT NOT NULL,
            category TEXT NOT NULL CHECK ({_CATEGORY_CHECK}),
            l0 TEXT NOT NULL,
            l1 TEXT,
            l2 TEXT,
            language TEXT NOT NULL,
            l0_hash TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            source TEXT,
            fsrs_stability REAL,
            fsrs_difficulty REAL,
            fsrs_last_review TEXT,
            fsrs_next_review TEXT,
            fsrs_reps INTEGER NOT NULL DEFAULT 0,
            fsrs_lapses INTEGER NOT NULL DEFAULT 0,
            deleted INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0,1)),
            vector_status TEXT NOT NULL DEFAULT 'pending' CHECK (vector_status IN ('ready','pending'))
        );
        CREATE INDEX records_by_user ON records(user_id, scope, category) WHERE deleted = 0;
        CREATE INDEX records_by_hash ON records(l0_hash) WHERE deleted = 0;
        CREATE INDEX records_pending ON records(vector_status) WHERE vector_status = 'pending';
        {FTS_DDL}
        CREATE TABLE embedding_cache (
            id INTEGER PRIMARY KEY,
            content_hash TEXT NOT NULL,
            embedder TEXT NOT NULL,
            vector BLOB NOT NULL,
            UNIQUE (content_hash, embedder)
        );
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE history (
            seq INTEGER PRIMARY KEY,
            record_id TEXT NOT NULL,
            user_id TEXT,
            action TEXT NOT NULL CHECK (action IN ('add','update','merge','delete','purge')),
            old_value TEXT,
            new_value TEXT,
            at TEXT NOT NULL,
            reason TEXT
        );
        CREATE INDEX history_by_record ON history(record_id, seq);
        """,
    ),
]


def _cache_in_records(conn: apsw.Connection) -> None:
    """The embedding cache becomes a text hash on each record: its vector already lives in the vec0
    table, so the cache's own copy of every vector (40% of the file at 100k) goes."""
    columns = {str(r[1]) for r in conn.execute("PRAGMA table_info(records)")}
    if "text_hash" not in columns:
        conn.execute("ALTER TABLE records ADD COLUMN text_hash INTEGER")
    rows = list(conn.execute("SELECT rowid, l0 FROM records WHERE text_hash IS NULL"))
    conn.executemany(
        "UPDATE records SET text_hash = ? WHERE rowid = ?", [(text_hash(l0), r) for r, l0 in rows]
    )
    # Only live records with a ready vector can answer a cache lookup, so only they are indexed.
    conn.execute(
        "CREATE INDEX IF NOT EXISTS records_by_text_hash ON records(text_hash) "
        "WHERE deleted = 0 AND vector_status = 'ready'"
    )
    conn.execute("DROP TABLE IF EXISTS embedding_cache")


MIGRATIONS.append(("0002_cache_in_records", _cache_in_records))

# An add row's value is the record itself (or the next change's old value): drop the copies older
# databases stored. Only where that value is still there to be read, so nothing is lost; the freed
# pages are reused by later writes (VACUUM, e.g. from `memory purge`, returns them to the disk).
MIGRATIONS.append(
    (
        "0003_history_without_copies",
        """
        UPDATE history SET new_value = NULL
        WHERE action = 'add' AND new_value IS NOT NULL AND (
            EXISTS (SELECT 1 FROM records r WHERE r.id = history.record_id)
            OR EXISTS (SELECT 1 FROM history later WHERE later.record_id = history.record_id
                       AND later.seq > history.seq AND later.old_value IS NOT NULL)
        );
        """,
    )
)


def _writing_columns(conn: apsw.Connection) -> None:
    """What memory writing needs on each record: a profile fact's attribute key (profile merge overwrites
    by attribute) and when reflection last used the record (unreflected ones feed the next run)."""
    columns = {str(r[1]) for r in conn.execute("PRAGMA table_info(records)")}
    if "attribute" not in columns:
        conn.execute("ALTER TABLE records ADD COLUMN attribute TEXT")
    if "reflected_at" not in columns:
        conn.execute("ALTER TABLE records ADD COLUMN reflected_at TEXT")
    conn.execute(
        "CREATE INDEX IF NOT EXISTS records_by_attribute ON records(user_id, category, attribute) "
        "WHERE deleted = 0 AND attribute IS NOT NULL"
    )
    conn.execute(
        "CREATE INDEX IF NOT EXISTS records_unreflected ON records(category) "
        "WHERE deleted = 0 AND reflected_at IS NULL"
    )


MIGRATIONS.append(("0004_writing_columns", _writing_columns))

# Workspace Markdown indexed as `note` records (workspace/markdown_index.py): each file's hash and stat, so an
# unchanged file is neither re-read nor re-embedded, and an index to find a file's chunk records.
MIGRATIONS.append(
    (
        "0005_workspace_files",
        """
        CREATE TABLE workspace_files (
            path TEXT PRIMARY KEY,
            file_hash TEXT NOT NULL,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            chunks INTEGER NOT NULL,
            problem TEXT
        ) WITHOUT ROWID;
        CREATE INDEX records_by_note_path ON records(json_extract(source, '$.path'))
            WHERE category = 'note' AND deleted = 0;
        """,
    )
)

# Memories written from one conversation share its session id (extraction's `source`): search/context_stages/dialogue.py finds
# the turns next to a good hit through this index.
MIGRATIONS.append(
    (
        "0006_records_by_session",
        """
        CREATE INDEX records_by_session ON records(json_extract(source, '$.sessionId'))
            WHERE deleted = 0 AND source IS NOT NULL;
        """,
    )
)


def _people(conn: apsw.Connection) -> None:
    """The names memories introduce with a relation, per user (store/people.py), filled from what is stored."""
    from openclaw_cli.memory.store import people
    from openclaw_cli.memory.store.sqlite.storage import SqliteStorage

    conn.execute(
        "CREATE TABLE people (user_id TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL, "
        "mentions INTEGER NOT NULL DEFAULT 1, PRIMARY KEY (user_id, kind, name)) WITHOUT ROWID"
    )
    people.rebuild(SqliteStorage(conn))


MIGRATIONS.append(("0007_people", _people))


def _centroid(conn: apsw.Connection) -> None:
    """The mean direction of the stored vectors, which search corrects for (store/vectors/centroid.py)."""
    from openclaw_cli.memory.store.sqlite.storage import SqliteStorage
    from openclaw_cli.memory.store.vectors import centroid

    centroid.refresh(SqliteStorage(conn))


MIGRATIONS.append(("0008_vector_centroid", _centroid))


def _language_of_l0(conn: apsw.Connection) -> None:
    """A record's language is now that of L0 alone, the text whose vector is stored, without a dialogue
    turn's speaker label (text.detect_language). It was derived from L0 and L1 together, label
    included: "User: 准备换跑鞋" read as mixed text, and so did a Chinese L0 with an English L1, whose
    vectors hold no English half worth trusting. Language is derived from the text, like the keyword
    index, so no history row is written for it."""
    from openclaw_cli.memory.text.analysis import SPEAKER_LABEL, detect_language

    unread: list[int] = []
    for rowid, l0, stored in conn.execute("SELECT rowid, l0, language FROM records").fetchall():
        language = detect_language(str(l0))
        if language != stored:
            conn.execute("UPDATE records SET language = ? WHERE rowid = ?", (language, rowid))
            # A labelled turn's English half was computed from its label and unknown tokens.
            if SPEAKER_LABEL.match(str(l0)) and LANGUAGE_TRUST.get(language, 0.0) == 0:
                unread.append(cast(int, rowid))
    _unread_english_halves(conn, unread)


def _unread_english_halves(conn: apsw.Connection, rowids: list[int]) -> None:
    """Give these memories the English half a fresh store gives a text the English model cannot read
    (store/layout.py) in place of the one computed from their label and unknown tokens, so an
    older store holds the same vectors as a new one (byte for byte: the multilingual half is re-encoded
    with the table's own fixed step)."""
    if not rowids:
        return

    table, identity = vec.current_table(conn), vec.stored_identity(conn)
    if table is None or identity is None or identity["model"] != COMPOSITE:
        return
    half = unread_half(MINILM_DIMS)
    for rowid, vector in vec.read(conn, table, rowids).items():
        row = conn.execute(
            "SELECT scope, user_id, category FROM records WHERE rowid = ?", (rowid,)
        ).fetchone()
        if row is None:
            continue
        fixed = vector.copy()
        fixed[:MINILM_DIMS] = half
        vec.upsert(conn, table, rowid, fixed, (str(row[0]), str(row[1] or ""), str(row[2])))
    vec.bump_generation(conn)
    from openclaw_cli.memory.store.sqlite.storage import SqliteStorage

    centroid.forget(SqliteStorage(conn))


MIGRATIONS.append(("0009_language_of_l0", _language_of_l0))

# `memory reassign` gives memories to another person and keeps a `reassign` history row for each; the
# action list is a CHECK constraint, which SQLite changes only by copying the table (every row kept).
HISTORY_ACTIONS = ("add", "update", "merge", "delete", "purge", "reassign")
MIGRATIONS.append(
    (
        "0010_history_reassign",
        f"""
        CREATE TABLE history_new (
            seq INTEGER PRIMARY KEY,
            record_id TEXT NOT NULL,
            user_id TEXT,
            action TEXT NOT NULL CHECK (action IN ({", ".join(repr(a) for a in HISTORY_ACTIONS)})),
            old_value TEXT,
            new_value TEXT,
            at TEXT NOT NULL,
            reason TEXT
        );
        INSERT INTO history_new(seq, record_id, user_id, action, old_value, new_value, at, reason)
            SELECT seq, record_id, user_id, action, old_value, new_value, at, reason FROM history;
        DROP TABLE history;
        ALTER TABLE history_new RENAME TO history;
        CREATE INDEX history_by_record ON history(record_id, seq);
        """,
    )
)


def applied_migrations(conn: apsw.Connection) -> list[str]:
    cursor = conn.cursor()
    cursor.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    return [row[0] for row in cursor.execute("SELECT name FROM schema_migrations ORDER BY name")]


def migrate(conn: apsw.Connection) -> list[str]:
    """Apply the migrations this database has not seen yet; returns their names."""
    from openclaw_cli.memory.text.analysis import ANALYSIS_VERSION

    done = set(applied_migrations(conn))
    pending = [(name, step) for name, step in MIGRATIONS if name not in done]
    if pending and done:  # a store with data is about to change: a copy of it as it is comes first
        before_migration(conn, pending[0][0])
    applied: list[str] = []
    for name, sql in pending:  # sql: a script, or a function for steps SQL cannot express
        with write_txn(conn):
            if name in set(applied_migrations(conn)):  # another process got there first
                continue
            if callable(sql):
                sql(conn)
            else:
                conn.execute(with_tokenizer(sql))
            if name == MIGRATIONS[0][0]:  # a new, empty keyword index is current by definition
                set_meta(conn, FTS_ANALYSIS_KEY, ANALYSIS_VERSION)
            conn.execute(
                "INSERT INTO schema_migrations(name, applied_at) VALUES (?, strftime('%Y-%m-%dT%H:%M:%fZ','now'))",
                (name,),
            )
            applied.append(name)
    return applied


def with_tokenizer(sql: str) -> str:
    """`sql` with the FTS tokenizer of the current text analysis filled in."""
    from openclaw_cli.memory.text.analysis import FTS_TOKENIZE

    return sql.replace("{tokenize}", FTS_TOKENIZE.replace("'", "''"))
