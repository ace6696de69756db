"""The statements the SQLite and PostgreSQL backends run alike, each written once in a dialect's tokens.

Where the two backends say the same thing, they differ only in a few fixed tokens: the bound-parameter mark
(`?` or `%s`), null-safe equality (`IS` or `IS NOT DISTINCT FROM`), SQLite's unary `+` that keeps its planner
off an index, the name of the substring search, and how a JSON field of `source` is read. A `Dialect` holds
those tokens and `Dialect.sql` puts them into a template's `{p}`, `{same}`, `{plain}`, `{contains}` and
`{source_path}`: a statement's text is only ever these fixed tokens, never a value, which is always bound.
store/shared/storage.py runs the statements; each backend names its dialect (SQLITE, POSTGRES).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from openclaw_cli.memory.store.record_rows import RECORD_COLUMNS
from openclaw_cli.memory.store.records import SHARED_NOTES_FILE

MARKS_PER_STATEMENT = 500  # a list bound a mark per value goes in batches, well under SQLite's limit


@dataclass(frozen=True, eq=False)  # each dialect is one object: hashed by identity, cheaply, in _render
class Dialect:
    """The fixed tokens in which one backend's SQL differs from the other's."""

    mark: str  # a bound parameter
    same: str  # equality that holds between two NULLs
    plain: str  # before a column: compare without the column's index (SQLite's unary +), or nothing
    contains: str  # the function finding a substring: f(text, part) > 0 when `part` is in `text`
    source_path: str  # the `path` field of a record's JSON `source`, as text
    no_limit: int | None  # the LIMIT value that means no limit
    arrays: bool  # a list binds as one array parameter (`= ANY(%s)`), not as a mark per value

    def sql(self, template: str) -> str:
        """`template` with this dialect's tokens in place."""
        return _render(self, template)

    def member(self, column: str, values: Sequence[object]) -> tuple[str, tuple[object, ...]]:
        """`column` is one of `values`: the clause and its parameters (one array, or one value a mark)."""
        if self.arrays:
            return f"{column} = ANY({self.mark})", (list(values),)
        return f"{column} IN ({', '.join(self.mark for _ in values)})", tuple(values)

    def batches(self, values: Iterable[int]) -> Iterator[list[int]]:
        """`values` in as few lists as `member` binds in one statement each (one, where lists are arrays)."""
        wanted = list(values)
        size = max(len(wanted), 1) if self.arrays else MARKS_PER_STATEMENT
        for start in range(0, len(wanted), size):
            yield wanted[start : start + size]


@lru_cache(maxsize=256)
def _render(dialect: Dialect, template: str) -> str:
    # Cached: a statement is rendered at each call, and the templates are a few dozen fixed strings.
    return template.format(
        p=dialect.mark,
        same=dialect.same,
        plain=dialect.plain,
        contains=dialect.contains,
        source_path=dialect.source_path,
    )


SQLITE = Dialect(
    mark="?",
    same="IS",
    plain="+",
    contains="instr",
    source_path="json_extract(source, '$.path')",
    no_limit=-1,
    arrays=False,
)
POSTGRES = Dialect(
    mark="%s",
    same="IS NOT DISTINCT FROM",
    plain="",
    contains="strpos",
    source_path="(source::jsonb ->> 'path')",
    no_limit=None,
    arrays=True,
)

# ---------------------------------------------------------------- records
# A workspace note (a chunk of the owner's MEMORY.md or daily log, workspace/markdown_index.py) is the owner's
# user-scope memory, but the files own it: a memory the owner adds is never a duplicate of one, nor merged
# into one, and a reassign or an export leaves them where they are.
NOT_WORKSPACE_NOTE = "NOT (category = 'note' AND {source_path} IS NOT NULL)"
SELECT_RECORDS = f"SELECT {RECORD_COLUMNS} FROM records WHERE "
RECORD_BY_ID = SELECT_RECORDS + "id = {p}"
ROWID_BY_ID = "SELECT rowid FROM records WHERE id = {p}"
LIVE_PAGE = " ORDER BY created_at, rowid LIMIT {p} OFFSET {p}"
LIVE_AFTER = " AND rowid > {p} ORDER BY rowid LIMIT {p}"
COUNT_WHERE = "SELECT count(*) FROM records WHERE "
LIVE_RECORDS = SELECT_RECORDS + "deleted = 0 AND "
RANKING_FACTS = (
    "SELECT rowid, language, category, l0, source, fsrs_stability, fsrs_difficulty, fsrs_last_review, "
    "fsrs_next_review FROM records WHERE deleted = 0 AND "
)
UNREFLECTED = SELECT_RECORDS + "deleted = 0 AND reflected_at IS NULL AND "
UNREFLECTED_ORDER = " ORDER BY scope, user_id, category, created_at, rowid"
UNREFLECTED_SUMMARY = (
    "SELECT count(*), min(created_at) FROM records WHERE deleted = 0 AND reflected_at IS NULL AND "
)
SET_FSRS = (
    "UPDATE records SET fsrs_stability = {p}, fsrs_difficulty = {p}, fsrs_last_review = {p}, "
    "fsrs_next_review = {p}, fsrs_reps = {p}, fsrs_lapses = {p}, "
    "reflected_at = COALESCE(CAST({p} AS TEXT), reflected_at) WHERE id = {p}"
)
HAS_USER = "SELECT 1 FROM records WHERE deleted = 0 AND user_id = {p}"
LIMIT_ONE = " LIMIT 1"
# The unary + (SQLite) keeps the planner on the hash index: with no statistics it chose the by-user index
# and scanned a third of the store for each record (29 s of a 10k import).
# Every match, not ORDER BY ... LIMIT 1: the few there are are sorted by the caller (SharedStorage._newest).
SAME_TEXT = (
    f"{SELECT_RECORDS}deleted = 0 AND l0_hash = {{p}} AND {{plain}}scope = {{p}} "
    f"AND {{plain}}user_id {{same}} {{p}} AND {{plain}}id <> {{p}} AND {NOT_WORKSPACE_NOTE}"
)
SAME_ATTRIBUTE = (
    f"{SELECT_RECORDS}deleted = 0 AND user_id {{same}} {{p}} AND category = {{p}} AND attribute = {{p}} "
    f"AND scope = {{p}} AND id <> {{p}}"
)
READY_ROWS = (
    "SELECT rowid, language FROM records WHERE user_id {same} {p} AND scope = {p} AND category = {p} "
    f"AND deleted = 0 AND vector_status = 'ready' AND {NOT_WORKSPACE_NOTE}"
)
USER_COUNTS = (
    "SELECT user_id, count(*) FROM records WHERE deleted = 0 AND scope = 'user' AND user_id IS NOT NULL "
    "GROUP BY user_id ORDER BY user_id"
)
PENDING_VECTORS = "SELECT count(*) FROM records WHERE deleted = 0 AND vector_status = 'pending'"
MAX_ROWID = "SELECT max(rowid) FROM records"
SOURCED_ROWS = "SELECT rowid, id, user_id, l0, source FROM records WHERE source IS NOT NULL"
ROWS_OF = "SELECT rowid, id FROM records WHERE "
TEXTS_OF = "SELECT l0, l1 FROM records WHERE "
USER_IDS = "SELECT DISTINCT user_id FROM records WHERE user_id IS NOT NULL ORDER BY user_id"
NOTE_ROWS = "SELECT rowid FROM records WHERE {source_path} = {p} AND category = 'note' AND deleted = 0"
# Workspace notes that are not the owner's user-scope memories: indexed as agent scope before they became the
# owner's, or under an owner the config has since changed. The partial index records_by_note_path serves it.
STRAY_NOTES = (
    "SELECT rowid, id FROM records WHERE {source_path} IS NOT NULL AND category = 'note' AND deleted = 0 "
    f"AND {{source_path}} <> '{SHARED_NOTES_FILE}' AND NOT (scope = 'user' AND user_id {{same}} {{p}})"
)

# ---------------------------------------------------------------- people
COUNT_PERSON = (
    "INSERT INTO people(user_id, kind, name) VALUES ({p}, {p}, {p}) "
    "ON CONFLICT (user_id, kind, name) DO UPDATE SET mentions = people.mentions + 1"
)
DROP_USER_PEOPLE = "DELETE FROM people WHERE user_id = {p}"
DROP_PERSON = "DELETE FROM people WHERE user_id = {p} AND kind = {p} AND name = {p}"
DROP_PEOPLE = "DELETE FROM people"
NAMES_OF_ANY_USER = "SELECT name, sum(mentions) FROM people WHERE kind = {p} GROUP BY name ORDER BY name"
NAMES_OF_USER = "SELECT name, mentions FROM people WHERE user_id = {p} AND kind = {p} ORDER BY name"
PEOPLE_COUNT = "SELECT count(*) FROM people"
TEXT_MENTIONS = (
    "SELECT 1 FROM records WHERE user_id {same} {p} AND deleted = 0 AND {contains}(l0, {p}) > 0 LIMIT 1"
)
LIVE_TEXTS = "SELECT user_id, l0 FROM records WHERE deleted = 0"
PEOPLE_ROWS = "SELECT user_id, kind, name, mentions FROM people ORDER BY 1, 2, 3"
PUT_PERSON = (
    "INSERT INTO people(user_id, kind, name, mentions) VALUES ({p}, {p}, {p}, {p}) "
    "ON CONFLICT (user_id, kind, name) DO UPDATE SET mentions = excluded.mentions"
)

# ---------------------------------------------------------------- workspace files
WORKSPACE_FILES = "SELECT path, file_hash, size, mtime_ns, chunks, problem FROM workspace_files"
# The last parameter says whether to keep the stored chunk count (the file's bytes did not change).
PUT_WORKSPACE_FILE = (
    "INSERT INTO workspace_files(path, file_hash, size, mtime_ns, chunks, problem) "
    "VALUES ({p}, {p}, {p}, {p}, {p}, {p}) ON CONFLICT (path) DO UPDATE SET file_hash = excluded.file_hash, "
    "size = excluded.size, mtime_ns = excluded.mtime_ns, problem = excluded.problem, "
    "chunks = CASE WHEN {p} THEN workspace_files.chunks ELSE excluded.chunks END"
)
DROP_WORKSPACE_FILE = "DELETE FROM workspace_files WHERE path = {p}"

# ---------------------------------------------------------------- every row as stored
# APPEND_HISTORY is also the one statement that logs a change.
RECORDS_AFTER = SELECT_RECORDS + "rowid > {p} ORDER BY rowid LIMIT {p}"
COUNT_RECORDS = "SELECT count(*) FROM records"
HISTORY_AFTER = (
    "SELECT seq, record_id, user_id, action, old_value, new_value, at, reason FROM history "
    "WHERE seq > {p} ORDER BY seq LIMIT {p}"
)
COUNT_HISTORY = "SELECT count(*) FROM history"
APPEND_HISTORY = (
    "INSERT INTO history(record_id, user_id, action, old_value, new_value, at, reason) "
    "VALUES ({p}, {p}, {p}, {p}, {p}, {p}, {p})"
)
META_ITEMS = "SELECT key, value FROM meta"

# ---------------------------------------------------------------- history
HISTORY_OF = (
    "SELECT seq, action, old_value, new_value, at, reason FROM history WHERE record_id = {p} ORDER BY seq"
)
