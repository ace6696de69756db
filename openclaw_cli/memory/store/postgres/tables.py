"""The people and workspace-file tables of the postgres backend: small enough to be read and written
here, by the storage class (postgres/storage.py) that these methods are part of."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from openclaw_cli.memory.store.postgres import records
from openclaw_cli.memory.store.protocol import WorkspaceFile

if TYPE_CHECKING:
    import psycopg


class PeopleAndFiles:
    """The People and WorkspaceFiles roles of store/protocol.py over `self.conn`."""

    conn: psycopg.Connection

    # ------------------------------------------------------------ people
    def count_person(self, user_id: str, kind: str, name: str) -> None:
        self.conn.execute(
            "INSERT INTO people(user_id, kind, name) VALUES (%s, %s, %s) "
            "ON CONFLICT (user_id, kind, name) DO UPDATE SET mentions = people.mentions + 1",
            (user_id, kind, name),
        )

    def drop_person(self, user_id: str, kind: str | None = None, name: str | None = None) -> None:
        if kind is None or name is None:
            self.conn.execute("DELETE FROM people WHERE user_id = %s", (user_id,))
        else:
            self.conn.execute(
                "DELETE FROM people WHERE user_id = %s AND kind = %s AND name = %s", (user_id, kind, name)
            )

    def drop_people(self) -> None:
        self.conn.execute("DELETE FROM people")

    def person_names(self, user_id: str | None, kind: str) -> list[tuple[str, int]]:
        if user_id is None:
            rows = self.conn.execute(
                "SELECT name, sum(mentions) FROM people WHERE kind = %s GROUP BY name ORDER BY name", (kind,)
            )
        else:
            rows = self.conn.execute(
                "SELECT name, mentions FROM people WHERE user_id = %s AND kind = %s ORDER BY name",
                (user_id, kind),
            )
        return [(str(name), int(mentions)) for name, mentions in rows]

    def people_count(self) -> int:
        return records.scalar(self.conn, "SELECT count(*) FROM people")

    def live_text_mentions(self, user_id: str | None, name: str) -> bool:
        return (
            records.scalar(
                self.conn,
                "SELECT count(*) FROM (SELECT 1 FROM records WHERE user_id IS NOT DISTINCT FROM %s AND deleted = 0 "
                "AND strpos(l0, %s) > 0 LIMIT 1) x",
                (user_id, name),
            )
            > 0
        )

    def live_texts(self, user_ids: Sequence[str] | None = None) -> Iterator[tuple[str | None, str]]:
        if user_ids is None:
            rows = self.conn.execute("SELECT user_id, l0 FROM records WHERE deleted = 0").fetchall()
        else:
            rows = self.conn.execute(
                "SELECT user_id, l0 FROM records WHERE deleted = 0 AND user_id = ANY(%s)", (list(user_ids),)
            ).fetchall()
        for user_id, l0 in rows:
            yield user_id, str(l0)

    # ------------------------------------------------------------ workspace files
    def workspace_files(self) -> dict[str, WorkspaceFile]:
        rows = self.conn.execute(
            "SELECT path, file_hash, size, mtime_ns, chunks, problem FROM workspace_files"
        )
        return {
            str(p): WorkspaceFile(str(p), str(h), int(s), int(m), int(c), pr) for p, h, s, m, c, pr in rows
        }

    def put_workspace_file(self, file: WorkspaceFile, *, keep_chunks: bool = False) -> None:
        count = "workspace_files.chunks" if keep_chunks else "EXCLUDED.chunks"
        self.conn.execute(
            "INSERT INTO workspace_files(path, file_hash, size, mtime_ns, chunks, problem) "
            "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (path) DO UPDATE SET file_hash = EXCLUDED.file_hash, "
            f"size = EXCLUDED.size, mtime_ns = EXCLUDED.mtime_ns, chunks = {count}, problem = EXCLUDED.problem",
            (file.path, file.file_hash, file.size, file.mtime_ns, file.chunks, file.problem),
        )

    def drop_workspace_file(self, path: str) -> None:
        self.conn.execute("DELETE FROM workspace_files WHERE path = %s", (path,))

    def note_rows(self, path: str) -> list[int]:
        rows = self.conn.execute(
            "SELECT rowid FROM records WHERE (source::jsonb ->> 'path') = %s AND category = 'note' AND deleted = 0",
            (path,),
        )
        return [int(r[0]) for r in rows]
