"""The part of the storage Protocol (store/protocol.py) both backends run alike: the statements of
store/shared/statements.py in the backend's dialect, and the rows they return mapped to the Protocol's types once.

`SharedStorage` is a base of `SqliteStorage` and `PostgresStorage`; each names its `dialect` and holds `conn`
(an apsw or a psycopg connection: both take a statement and its parameters and return an iterable cursor).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from openclaw_cli.memory.store.protocol_types import (
    HistoryRow,
    LiveFilter,
    PersonRow,
    StoredChange,
    WorkspaceFile,
)
from openclaw_cli.memory.store.record_rows import CREATED_THEN_ROWID, RankingFacts, row_to_record, to_json
from openclaw_cli.memory.store.records import iso, utc_now
from openclaw_cli.memory.store.shared import statements as st

if TYPE_CHECKING:
    from openclaw_cli.memory.store.records import FsrsState, MemoryRecord


class SharedStorage:
    """Record reads, history, people, workspace files and every row as stored, over `self.conn` in
    `dialect`."""

    conn: Any  # apsw.Connection or psycopg.Connection
    dialect: ClassVar[st.Dialect]

    def _rows(self, template: str, params: Sequence[Any] = ()) -> Any:
        return self.conn.execute(self.dialect.sql(template), params)

    def _count(self, template: str, params: Sequence[Any] = ()) -> int:
        row = self._rows(template, params).fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def _exists(self, template: str, params: Sequence[Any]) -> bool:
        return self._rows(template, params).fetchone() is not None

    def _records(self, template: str, params: Sequence[Any]) -> list[MemoryRecord]:
        return [row_to_record(row) for row in self._rows(template, params)]

    def _newest(self, template: str, params: Sequence[Any]) -> MemoryRecord | None:
        """The newest (by created_at, then rowid) of the few records `template` selects. Picked here, not
        by ORDER BY ... LIMIT 1: for that SQLite sets up a sorter even when nothing matches, ~19 of the
        ~23 us of a lookup a bulk load makes for every record it writes."""
        rows = list(self._rows(template, params))
        return row_to_record(max(rows, key=CREATED_THEN_ROWID)) if rows else None

    def _live(self, filters: dict[str, str | None], plain: str = "") -> tuple[str, list[Any]]:
        """Live rows whose columns equal every given filter (`plain`: the dialect's no-index mark)."""
        clauses, params = ["deleted = 0"], []
        for column, value in filters.items():
            if value is not None:
                clauses.append(f"{plain}{column} = {{p}}")
                params.append(value)
        return " AND ".join(clauses), params

    # ------------------------------------------------------------ record reads
    def get(self, record_id: str, *, include_deleted: bool = False) -> MemoryRecord | None:
        found = self._records(st.RECORD_BY_ID, (record_id,))
        return None if not found or (found[0].deleted and not include_deleted) else found[0]

    def rowid(self, record_id: str) -> int | None:
        row = self._rows(st.ROWID_BY_ID, (record_id,)).fetchone()
        return None if row is None else int(row[0])

    def by_rowids(self, rowids: Iterable[int]) -> dict[int, MemoryRecord]:
        found: dict[int, MemoryRecord] = {}
        for batch in self.dialect.batches(rowids):
            clause, params = self.dialect.member("rowid", batch)
            found.update(
                (int(row[0]), row_to_record(row)) for row in self._rows(st.LIVE_RECORDS + clause, params)
            )
        return found

    def ranking_facts(self, rowids: Iterable[int]) -> dict[int, RankingFacts]:
        """What ranking needs of each live candidate, without building whole records (search builds those
        only for the results it returns: validating ~150 records cost ~3 ms at every query)."""
        found: dict[int, RankingFacts] = {}
        for batch in self.dialect.batches(rowids):
            clause, params = self.dialect.member("rowid", batch)
            for row, language, category, l0, source, *fsrs in self._rows(st.RANKING_FACTS + clause, params):
                found[int(row)] = RankingFacts(str(language), str(category), tuple(fsrs), str(l0), source)
        return found

    def unreflected(self, categories: Sequence[str]) -> list[MemoryRecord]:
        clause, params = self.dialect.member("category", categories)
        return self._records(st.UNREFLECTED + clause + st.UNREFLECTED_ORDER, params)

    def unreflected_summary(self, categories: Sequence[str]) -> tuple[int, str | None]:
        clause, params = self.dialect.member("category", categories)
        row = self._rows(st.UNREFLECTED_SUMMARY + clause, params).fetchone()
        count, first = row if row is not None else (0, None)
        return int(count), None if first is None else str(first)

    def list_records(
        self, where: LiveFilter, *, limit: int | None = None, offset: int = 0
    ) -> list[MemoryRecord]:
        clause, params = self._live(
            {"user_id": where.user_id, "scope": where.scope, "category": where.category}
        )
        limit_value = self.dialect.no_limit if limit is None else limit
        return self._records(st.SELECT_RECORDS + clause + st.LIVE_PAGE, [*params, limit_value, offset])

    def live_after(
        self,
        after: int,
        limit: int,
        *,
        scope: str | None = None,
        user_id: str | None = None,
        notes: bool = True,
    ) -> list[tuple[int, MemoryRecord]]:
        # {plain}: walk in rowid order, filtering, rather than sort each page out of the by-user index.
        clause, params = self._live({"scope": scope, "user_id": user_id}, "{plain}")
        clause += "" if notes else f" AND {st.NOT_WORKSPACE_NOTE}"
        rows = self._rows(st.SELECT_RECORDS + clause + st.LIVE_AFTER, [*params, after, limit])
        return [(int(row[0]), row_to_record(row)) for row in rows]

    def count_live(self, *, scope: str | None = None, user_id: str | None = None, notes: bool = True) -> int:
        clause, params = self._live({"scope": scope, "user_id": user_id}, "{plain}")
        clause += "" if notes else f" AND {st.NOT_WORKSPACE_NOTE}"
        return self._count(st.COUNT_WHERE + clause, params)

    def has_user(self, user_id: str, *, scope: str | None = None) -> bool:
        scoped = "" if scope is None else " AND scope = {p}"
        params = (user_id,) if scope is None else (user_id, scope)
        return self._exists(st.HAS_USER + scoped + st.LIMIT_ONE, params)

    def same_text(self, record: MemoryRecord) -> MemoryRecord | None:
        return self._newest(st.SAME_TEXT, (record.l0_hash, record.scope, record.user_id, record.id))

    def same_attribute(self, record: MemoryRecord) -> MemoryRecord | None:
        params = (record.user_id, record.category, record.attribute, record.scope, record.id)
        return self._newest(st.SAME_ATTRIBUTE, params)

    def ready_rows(self, user_id: str | None, scope: str, category: str) -> list[tuple[int, str]]:
        rows = self._rows(st.READY_ROWS, (user_id, scope, category))
        return [(int(r), str(language)) for r, language in rows]

    def user_counts(self) -> list[tuple[str, int]]:
        return [(str(user), int(count)) for user, count in self._rows(st.USER_COUNTS)]

    def pending_vectors(self) -> int:
        return self._count(st.PENDING_VECTORS)

    def store_size(self) -> int:
        """The largest rowid: an upper bound of the number of records, read from the key's index."""
        return self._count(st.MAX_ROWID)

    def sourced_rows(self) -> Iterator[tuple[int, str, str | None, str, str]]:
        for rowid, record_id, owner, l0, source in self._rows(st.SOURCED_ROWS):
            yield int(rowid), str(record_id), owner, str(l0), str(source)

    def rows_of_users(self, user_ids: Sequence[str]) -> list[tuple[int, str]]:
        clause, params = self.dialect.member("user_id", user_ids)
        return [(int(r), str(i)) for r, i in self._rows(st.ROWS_OF + clause, params)]

    def texts_of_users(self, user_ids: Sequence[str]) -> list[tuple[str, str | None]]:
        clause, params = self.dialect.member("user_id", user_ids)
        rows = self._rows(st.TEXTS_OF + clause, params)
        return [(str(l0), None if l1 is None else str(l1)) for l0, l1 in rows]

    def user_ids(self) -> list[str]:
        return [str(user) for (user,) in self._rows(st.USER_IDS)]

    # ------------------------------------------------------------ record writes
    def set_fsrs(self, record_id: str, state: FsrsState, reflected_at: datetime | None = None) -> None:
        last, due = iso(state.last_review), iso(state.next_review)
        values = (state.stability, state.difficulty, last, due, state.reps, state.lapses, iso(reflected_at))
        self._rows(st.SET_FSRS, (*values, record_id))

    # ------------------------------------------------------------ history
    def log_change(
        self, record_id: str, user_id: str | None, action: str, old: Any, new: Any, reason: str | None
    ) -> None:
        values = (record_id, user_id, action, to_json(old), to_json(new), iso(utc_now()), reason)
        self._rows(st.APPEND_HISTORY, values)

    def history_rows(self, record_id: str) -> list[HistoryRow]:
        rows = self._rows(st.HISTORY_OF, (record_id,))
        return [
            HistoryRow(int(seq), str(a), old, new, str(at), reason) for seq, a, old, new, at, reason in rows
        ]

    # ------------------------------------------------------------ people
    def count_person(self, user_id: str, kind: str, name: str) -> None:
        self._rows(st.COUNT_PERSON, (user_id, kind, name))

    def drop_person(self, user_id: str, kind: str | None = None, name: str | None = None) -> None:
        if kind is None or name is None:
            self._rows(st.DROP_USER_PEOPLE, (user_id,))
        else:
            self._rows(st.DROP_PERSON, (user_id, kind, name))

    def drop_people(self) -> None:
        """Empty the people table (before it is counted again from every memory)."""
        self._rows(st.DROP_PEOPLE)

    def person_names(self, user_id: str | None, kind: str) -> list[tuple[str, int]]:
        if user_id is None:
            rows = self._rows(st.NAMES_OF_ANY_USER, (kind,))
        else:
            rows = self._rows(st.NAMES_OF_USER, (user_id, kind))
        return [(str(name), int(mentions)) for name, mentions in rows]

    def people_count(self) -> int:
        return self._count(st.PEOPLE_COUNT)

    def live_text_mentions(self, user_id: str | None, name: str) -> bool:
        return self._exists(st.TEXT_MENTIONS, (user_id, name))

    def live_texts(self, user_ids: Sequence[str] | None = None) -> Iterator[tuple[str | None, str]]:
        if user_ids is None:
            rows = list(self._rows(st.LIVE_TEXTS))
        else:
            clause, params = self.dialect.member("user_id", user_ids)
            rows = list(self._rows(f"{st.LIVE_TEXTS} AND {clause}", params))
        for user_id, l0 in rows:  # read whole first: the caller may write between two rows
            yield user_id, str(l0)

    # ------------------------------------------------------------ workspace files
    def workspace_files(self) -> dict[str, WorkspaceFile]:
        rows = self._rows(st.WORKSPACE_FILES)
        return {
            str(p): WorkspaceFile(str(p), str(h), int(s), int(m), int(c), pr) for p, h, s, m, c, pr in rows
        }

    def put_workspace_file(self, file: WorkspaceFile, *, keep_chunks: bool = False) -> None:
        values = (file.path, file.file_hash, file.size, file.mtime_ns, file.chunks, file.problem)
        self._rows(st.PUT_WORKSPACE_FILE, (*values, keep_chunks))

    def drop_workspace_file(self, path: str) -> None:
        self._rows(st.DROP_WORKSPACE_FILE, (path,))

    def note_rows(self, path: str) -> list[int]:
        return [int(r[0]) for r in self._rows(st.NOTE_ROWS, (path,))]

    def stray_notes(self, owner: str) -> list[tuple[int, str]]:
        return [(int(rowid), str(record_id)) for rowid, record_id in self._rows(st.STRAY_NOTES, (owner,))]

    # ------------------------------------------------------------ every row as stored
    def records_after(self, after: int, limit: int) -> list[tuple[int, MemoryRecord]]:
        return [(int(row[0]), row_to_record(row)) for row in self._rows(st.RECORDS_AFTER, (after, limit))]

    def count_records(self) -> int:
        return self._count(st.COUNT_RECORDS)

    def history_after(self, after: int, limit: int) -> list[StoredChange]:
        rows = self._rows(st.HISTORY_AFTER, (after, limit))
        return [
            StoredChange(str(record), user, HistoryRow(int(seq), str(action), old, new, str(at), reason))
            for seq, record, user, action, old, new, at, reason in rows
        ]

    def count_history(self) -> int:
        return self._count(st.COUNT_HISTORY)

    def append_history(self, changes: Sequence[StoredChange]) -> None:
        values = [
            (c.record_id, c.user_id, c.row.action, c.row.old, c.row.new, c.row.at, c.row.reason)
            for c in changes
        ]
        cursor = self.conn.cursor()  # both drivers batch a statement's rows through a cursor
        try:
            cursor.executemany(self.dialect.sql(st.APPEND_HISTORY), values)
        finally:
            cursor.close()

    def meta_items(self) -> dict[str, str]:
        return {str(key): str(value) for key, value in self._rows(st.META_ITEMS)}

    def people_rows(self) -> list[PersonRow]:
        return [PersonRow(str(u), str(k), str(n), int(m)) for u, k, n, m in self._rows(st.PEOPLE_ROWS)]

    def put_person(self, person: PersonRow) -> None:
        self._rows(st.PUT_PERSON, (person.user_id, person.kind, person.name, person.mentions))
