"""A purge on the postgres backend leaves no row of the person in any table of the store: not in the records,
their history, the keyword rows, the keyword vocabulary and totals, the people, the vector tables or meta.
On the real test server, every table of the schema read as text."""

from __future__ import annotations

from pathlib import Path

import psycopg
from psycopg import sql

from openclaw_cli.config.loading import Settings
from openclaw_cli.memory.store.protocol import PersonRow
from tests.memory_helpers import add, service_for

ALICE = [
    ("Alice keeps bees on the roof", "event"),
    ("Alice's sister Priya lives in Lisbon", "profile"),
    ("爱丽丝喜欢吃榴莲", "preference"),
]
# Her words as they appear in any table: raw, stemmed (the keyword rows hold stems) or segmented.
TRACES = ("alice", "priya", "lisbon", "bee", "roof", "榴莲", "爱丽丝")


def _table_texts(dsn: str, schema: str) -> dict[str, list[str]]:
    """Every row of every table of `schema`, as text (lower-cased)."""
    with psycopg.connect(dsn) as conn:
        tables = [
            str(t)
            for (t,) in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,))
        ]
        return {
            table: [
                str(row[0]).lower()
                for row in conn.execute(
                    sql.SQL("SELECT t::text FROM {} AS t").format(sql.Identifier(schema, table))
                )
            ]
            for table in tables
        }


def test_after_a_purge_no_table_holds_a_row_of_the_person(tmp_path: Path, pg_dsn: str) -> None:
    service = service_for(tmp_path, Settings(memory={"backend": "postgres", "postgres": {"dsn": pg_dsn}}))
    ids = [add(service, text, category=category, user_id="alice") for text, category in ALICE]
    kept = add(service, "Bob collects stamps from Peru", category="preference", user_id="bob")
    store = service.store(service.db_path("user"))
    store.replace(store.get(ids[0]).model_copy(update={"l0": "Alice keeps two hives of bees"}), None, "test")
    service.delete(ids[1])  # a tombstone and a history row
    with store.storage.transaction():
        store.storage.put_person(PersonRow("alice", "cast", "Priya", 1))
    before = _table_texts(pg_dsn, "openclaw_main")
    assert any(trace in row for rows in before.values() for row in rows for trace in TRACES)

    service.purge_user("alice")
    service.close()
    after = _table_texts(pg_dsn, "openclaw_main")
    left = {table: [r for r in rows if any(trace in r for trace in TRACES)] for table, rows in after.items()}
    assert {table: rows for table, rows in left.items() if rows} == {}
    assert any("bob collects stamps" in row for row in after["records"])  # the purge took only her
    assert any(kept in row for row in after["records"])
