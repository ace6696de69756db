"""`memory migrate-backend`: a store moved SQLite -> PostgreSQL -> SQLite comes back identical (records, ids,
history, FSRS state, tombstones, people, workspace files, vectors bit for bit, the same search results), the
source is never changed, and each bad input is a one-line error that writes nothing. Real SQLite files, the
real test server, the real CLI process for the command's surface."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import psycopg
import pytest

from openclaw_cli.config.loading import Settings
from openclaw_cli.core.errors import Conflict
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.portability.backends import Side, plan_move
from openclaw_cli.memory.search.result import SearchRequest
from openclaw_cli.memory.service import MemoryService
from openclaw_cli.memory.store.protocol import MemoryStorage, PersonRow, WorkspaceFile
from tests.conftest import Result
from tests.memory_helpers import add, service_for

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

TEXTS = [
    ("Drinks green tea every morning", "preference", "alice"),
    ("我女儿每周六上钢琴课", "event", "alice"),
    ("Runs along the river on Sundays", "event", "bob"),
    ("The coffee machine at work is broken", "case", "bob"),
    ("Prefers aisle seats on long flights", "preference", "alice"),
]
QUERIES = ("green tea", "钢琴", "running by the river", "coffee")


def _pg(dsn: str) -> Settings:
    return Settings(memory={"backend": "postgres", "postgres": {"dsn": dsn}})


def _fill(service: MemoryService) -> list[str]:
    """Memories of every kind: live, deleted (a tombstone), updated (history), reviewed (FSRS)."""
    ids = [add(service, text, category=cat, user_id=user) for text, cat, user in TEXTS]
    store = service.store(service.db_path("user"))
    updated = store.get(ids[4]).model_copy(update={"l0": "Prefers window seats on long flights"})
    store.replace(updated, None, reason="test overwrite")
    store.review(ids[0], datetime(2026, 3, 1, tzinfo=UTC))
    service.delete(ids[3])
    return ids


def _fill_tables(service: MemoryService) -> None:
    """A person, a workspace file's state and the reflection schedule (after any search: a search syncs
    the workspace, which has no such file)."""
    store = service.store(service.db_path("user"))
    with store.storage.transaction():
        store.storage.put_person(PersonRow("alice", "cast", "Gao Feng", 3))
        store.storage.put_workspace_file(WorkspaceFile("MEMORY.md", "abc123", 42, 1_700_000_000, 2))
        store.storage.set_meta("reflection.lastRunAt", "2026-02-01T00:00:00.000Z")


def _everything(storage: MemoryStorage) -> dict[str, Any]:
    """Every row that must survive a move, keyed by record id (rowids are each backend's own)."""
    rows = storage.records_after(0, 10_000)
    by_row = {rowid: record.id for rowid, record in rows}
    vectors = storage.read_vectors(list(by_row))
    history = [(c.record_id, c.user_id, c.row.action, c.row.old, c.row.new, c.row.at, c.row.reason)
               for c in storage.history_after(0, 10_000)]  # fmt: skip
    return {
        "records": sorted((r.model_dump() for _, r in rows), key=lambda r: r["id"]),
        "history": history,
        "people": storage.people_rows(),
        "files": storage.workspace_files(),
        "reflection": storage.get_meta("reflection.lastRunAt"),
        "vectors": {by_row[rowid]: vector for rowid, vector in vectors.items()},
    }


def _search(service: MemoryService) -> list[list[tuple[str, float]]]:
    return [
        [(hit.record.id, round(hit.candidate.score, 4)) for hit in service.search(SearchRequest(q, k=5)).hits]
        for q in QUERIES
    ]


def _move(home: Path, current: Side, to: str, dsn: str, mode: str = "empty") -> list[Any]:
    return plan_move(Home(home), "main", current, to, dsn).run(mode)  # type: ignore[arg-type]


def test_round_trip_sqlite_postgres_sqlite_keeps_every_row_and_the_search_results(
    tmp_path: Path, pg_dsn: str
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    original = service_for(first)
    ids = _fill(original)
    searched = _search(original)
    _fill_tables(original)
    before = _everything(original.store(original.db_path("user")).storage)
    original.close()
    sqlite_bytes = (first / "agents/main/memory/memory.sqlite").read_bytes()

    [there] = _move(first, Side("sqlite"), "postgres", pg_dsn)
    assert (there.records, there.tombstones, there.history) == (5, 1, len(before["history"]))
    assert (first / "agents/main/memory/memory.sqlite").read_bytes() == sqlite_bytes  # source untouched
    [back] = _move(second, Side("postgres", pg_dsn), "sqlite", pg_dsn)
    assert back.vectors == len(before["vectors"]) == 3  # the overwritten one waits for its vector
    on_server, returned = service_for(first, _pg(pg_dsn)), service_for(second)
    for moved in (on_server, returned):
        after = _everything(moved.store(moved.db_path("user")).storage)
        for key in ("records", "history", "people", "files", "reflection"):
            assert after[key] == before[key], key
        assert after["vectors"].keys() == before["vectors"].keys()
    for record_id, vector in before["vectors"].items():
        assert np.array_equal(after["vectors"][record_id], vector), record_id  # int8 -> halfvec -> int8
    # A search syncs the (empty) workspace, so it runs once every row was compared.
    assert [[i for i, _ in hits] for hits in _search(on_server)] == [[i for i, _ in h] for h in searched]
    assert _search(returned) == searched
    assert returned.store(returned.db_path("user")).get(ids[3], include_deleted=True).deleted
    on_server.close()
    returned.close()


def test_a_target_that_holds_memory_is_refused_merged_or_replaced(tmp_path: Path, pg_dsn: str) -> None:
    source = service_for(tmp_path / "a")
    ids = [add(source, text, category=cat, user_id=user) for text, cat, user in TEXTS[:3]]
    source.close()
    elsewhere = service_for(tmp_path / "b", _pg(pg_dsn))
    theirs = add(elsewhere, "Keeps bees on the roof", user_id="carol")
    elsewhere.close()

    with pytest.raises(Conflict, match="already holds 1 records"):
        _move(tmp_path / "a", Side("sqlite"), "postgres", pg_dsn)
    [merged] = _move(tmp_path / "a", Side("sqlite"), "postgres", pg_dsn, "merge")
    assert (merged.records, merged.kept) == (3, [theirs])
    again = _move(tmp_path / "a", Side("sqlite"), "postgres", pg_dsn, "merge")[0]
    assert again.records == 0 and sorted(again.kept) == sorted([theirs, *ids])
    [replaced] = _move(tmp_path / "a", Side("sqlite"), "postgres", pg_dsn, "replace")
    assert (replaced.records, replaced.replaced) == (3, 4)
    server = service_for(tmp_path / "b", _pg(pg_dsn))
    assert sorted(r.id for r in server.list_records()) == sorted(ids)
    server.close()


# ---------------------------------------------------------------------------------------------- the command


def _one_line_error(result: Result, *needles: str) -> None:
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) <= 2, result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr


def _database(pg_server: Any) -> str:
    """The name of a fresh database on the test server."""
    return str(urlsplit(pg_server.fresh_database()).path.lstrip("/"))


def _schemas(dsn: str) -> list[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'openclaw%'").fetchall()
    return [str(name) for (name,) in rows]


def test_the_command_moves_switches_and_prints_no_password(cli, home: Path, pg_server: Any) -> None:  # type: ignore[no-untyped-def]
    added = cli("memory", "add", "Drinks green tea every morning", "--json").json()["id"]
    dsn = pg_server.dsn(_database(pg_server), password="s3cret-pw")
    moved = cli("memory", "migrate-backend", "--to", "postgres", "--dsn", dsn)
    assert moved.returncode == 0, moved.stderr
    assert "moved 1 records" in moved.stdout and "openclaw config set memory.backend postgres" in moved.stdout
    assert "s3cret-pw" not in moved.stdout + moved.stderr
    assert cli("config", "get", "memory.backend").stdout.strip() == "sqlite"  # unchanged without --switch
    switched = cli(
        "memory", "migrate-backend", "--to", "postgres", "--dsn", dsn, "--merge", "--switch", "--json"
    )
    assert switched.returncode == 0, switched.stderr
    assert switched.json()["switched"] and switched.json()["stores"][0]["keptExisting"] == 1
    assert [r["id"] for r in cli("memory", "list", "--json").json()] == [added]  # now read from the server


def test_an_unreachable_server_is_one_line(cli, home: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cli("memory", "add", "Owns a kayak")
    bad = f"postgresql://nobody:hunter2@/nowhere?host={tmp_path}"
    _one_line_error(
        cli("memory", "migrate-backend", "--to", "postgres", "--dsn", bad), "cannot reach PostgreSQL"
    )
    assert "hunter2" not in cli("memory", "migrate-backend", "--to", "postgres", "--dsn", bad).stderr


def test_a_malformed_dsn_is_one_line(cli) -> None:  # type: ignore[no-untyped-def]
    cli("memory", "add", "Owns a kayak")
    _one_line_error(
        cli("memory", "migrate-backend", "--to", "postgres", "--dsn", "not a dsn"), "connection string"
    )


def test_an_unknown_agent_is_one_line_and_creates_nothing(cli, pg_dsn: str) -> None:  # type: ignore[no-untyped-def]
    cli("memory", "add", "Owns a kayak")
    result = cli("--agent", "ghost", "memory", "migrate-backend", "--to", "postgres", "--dsn", pg_dsn)
    _one_line_error(result, "agent 'ghost' has no memory")
    assert _schemas(pg_dsn) == []


def test_a_non_empty_target_is_refused_and_left_as_it_was(cli, home: Path, pg_dsn: str) -> None:  # type: ignore[no-untyped-def]
    cli("memory", "add", "Owns a kayak")
    assert cli("memory", "migrate-backend", "--to", "postgres", "--dsn", pg_dsn).returncode == 0
    cli("memory", "add", "Lives in Porto")
    again = cli("memory", "migrate-backend", "--to", "postgres", "--dsn", pg_dsn)
    _one_line_error(again, "already holds 1 records", "--merge")
    with psycopg.connect(pg_dsn) as conn:
        assert conn.execute("SELECT count(*) FROM openclaw_main.records").fetchone() == (1,)


def test_merge_and_replace_together_are_refused(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("memory", "migrate-backend", "--to", "postgres", "--merge", "--replace")
    _one_line_error(result, "exclude each other")


def test_moving_to_the_configured_backend_is_refused(cli) -> None:  # type: ignore[no-untyped-def]
    _one_line_error(cli("memory", "migrate-backend", "--to", "sqlite"), "already sqlite")


def test_no_server_given_is_refused(cli) -> None:  # type: ignore[no-untyped-def]
    cli("memory", "add", "Owns a kayak")
    _one_line_error(cli("memory", "migrate-backend", "--to", "postgres"), "--dsn")


def test_a_server_without_pgvector_says_the_sql_to_create_it(cli, pg_server: Any) -> None:  # type: ignore[no-untyped-def]
    """The test server's superuser could create the extension itself: a role that may not, cannot."""
    cli("memory", "add", "Owns a kayak")
    database = str(urlsplit(pg_server.fresh_database(with_vector=False)).path.lstrip("/"))
    role = f"mover_{database}"
    pg_server.execute(f'CREATE ROLE "{role}" LOGIN')
    pg_server.execute(f'GRANT CREATE ON DATABASE "{database}" TO "{role}"')
    dsn = pg_server.dsn(database, user=role)
    result = cli("memory", "migrate-backend", "--to", "postgres", "--dsn", dsn)
    _one_line_error(result, "no `vector` extension", "CREATE EXTENSION vector")


def test_the_printed_switch_commands_work_as_printed(cli, home: Path, pg_server: Any) -> None:  # type: ignore[no-untyped-def]
    """Issue 48: the hint printed a DSN with a literal *** password, which then failed as the password. The
    commands leave the password out (said so) and, run as printed, switch the home to the moved memory."""
    import shlex

    added = cli("memory", "add", "Drinks green tea every morning", "--json").json()["id"]
    dsn = pg_server.dsn(_database(pg_server), password="s3cret-pw")
    moved = cli("memory", "migrate-backend", "--to", "postgres", "--dsn", dsn)
    assert moved.returncode == 0, moved.stderr
    commands = [
        line.strip() for line in moved.stdout.splitlines() if line.strip().startswith("openclaw config")
    ]
    assert len(commands) == 2 and "***" not in moved.stdout and "s3cret-pw" not in moved.stdout
    assert "~/.pgpass or PGPASSWORD" in moved.stdout
    for command in commands:
        ran = cli(*shlex.split(command)[1:])
        assert ran.returncode == 0, (command, ran.stderr)
    assert "***" not in (home / "openclaw.json").read_text(encoding="utf-8")
    assert [r["id"] for r in cli("memory", "list", "--json").json()] == [added]  # read from the server
