"""`memory purge` reaches every memory store a home knows of (issue 47, "Purge that misses a backend"): after
`memory migrate-backend` (either way) no byte of the person is left in any file under the home (SQLite files
with their -wal, backups) nor in any row of any table on the PostgreSQL server; a server shared by two homes
loses the person whichever home purges, and the other home's warm gateway no longer finds them; a known
server that cannot be reached is named in a one-line error, exit 1, never skipped.

Real CLI processes, a real gateway, the real test server (one per worker, a fresh database per test)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from tests.conftest import Result, run_cli
from tests.gateway_helpers import request, running_gateway, write_config

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

LIN = "我喜欢喝咖啡，不喜欢茶"  # the words
LIN_TOO = "lin keeps a zorbquill on her desk"  # a word no dictionary or other memory holds
BOB = "bob waters the ferns on fridays"


def files_holding(home: Path, needle: str) -> list[str]:
    """Every file under `home` (databases and their -wal/-shm, backups, logs) whose bytes hold `needle`."""
    data = needle.encode()
    return sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file() and data in p.read_bytes())


def server_rows_holding(dsn: str, *needles: str) -> dict[str, int]:
    """For every table of every openclaw schema on the server: how many rows, read as text, hold a needle
    (the keyword rows hold stems and segmented words, so a needle may be a part of the text)."""
    found: dict[str, int] = {}
    with psycopg.connect(dsn) as conn:
        tables = conn.execute(
            "SELECT schemaname, tablename FROM pg_tables WHERE schemaname LIKE 'openclaw%'"
        ).fetchall()
        for schema, table in tables:
            rows = conn.execute(sql.SQL("SELECT t::text FROM {} AS t").format(sql.Identifier(schema, table)))
            count = sum(1 for (text,) in rows if any(n.lower() in str(text).lower() for n in needles))
            if count:
                found[f"{schema}.{table}"] = count
    return found


def _ok(home: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    done = run_cli(home, *args, env=env)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def _config(home: Path, memory: dict[str, Any]) -> None:
    """openclaw.json with this `memory` section (replacing the whole file: no stale DSN stays)."""
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    (home / "openclaw.json").write_text(json.dumps({"memory": memory}), encoding="utf-8")


def _one_line_error(result: Result, *needles: str) -> None:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr


def test_a_purge_after_moving_to_postgres_leaves_no_byte_in_the_source_nor_on_the_server(
    home: Path, pg_dsn: str
) -> None:
    """The issue's steps: add, back up, migrate-backend --to postgres, switch by `config set`, purge."""
    _ok(home, "memory", "add", LIN, "-c", "preference", "--user", "lin")
    _ok(home, "memory", "add", LIN_TOO, "--user", "lin")
    _ok(home, "memory", "add", BOB, "--user", "bob")
    _ok(home, "memory", "backup")  # a copy of the SQLite file, which holds her words too
    moved = _ok(home, "memory", "migrate-backend", "--to", "postgres", "--dsn", pg_dsn)
    assert "the source was kept" in moved.stdout and "memory purge` covers it" in moved.stdout
    _ok(home, "config", "set", "memory.postgres.dsn", pg_dsn)
    _ok(home, "config", "set", "memory.backend", "postgres")
    assert any(f.startswith("agents/main/memory/") for f in files_holding(home, LIN))
    assert server_rows_holding(pg_dsn, "zorbquill", "咖啡") != {}

    purged = run_cli(home, "memory", "purge", "--user", "lin", "--yes", "--json")
    assert purged.returncode == 0, purged.stderr
    report = purged.json()
    stores = {s["store"]: s["purged"] for s in report["stores"]}
    assert stores == {
        str(home / "agents/main/memory/memory.sqlite"): 2,
        f"{pg_dsn} schema openclaw_main": 2,
    }, stores
    assert report["unreachable"] == []
    for needle in (LIN, "zorbquill"):
        assert files_holding(home, needle) == [], needle
    assert server_rows_holding(pg_dsn, "zorbquill", "咖啡", "lin keeps") == {}
    # Bob is still on the configured backend, and in the kept source.
    assert [r["l0"] for r in _ok(home, "memory", "list", "--json").json()] == [BOB]
    assert files_holding(home, BOB) != []


def test_a_purge_after_moving_back_to_sqlite_reaches_the_server_the_move_recorded(
    home: Path, pg_dsn: str
) -> None:
    """The reverse: on postgres, moved to SQLite, the DSN gone from the config; the move recorded the server
    (without its password) and the purge reaches it."""
    _config(home, {"backend": "postgres", "postgres": {"dsn": pg_dsn}})
    _ok(home, "memory", "add", LIN_TOO, "--user", "openai:alice")
    _ok(home, "memory", "add", BOB, "--user", "bob")
    moved = _ok(home, "memory", "migrate-backend", "--to", "sqlite", "--switch")
    assert "the source was kept as it was (postgres (" in moved.stdout
    _config(home, {"backend": "sqlite"})  # no memory.postgres.dsn: only the move's record knows the server
    assert json.loads((home / "memory-servers.json").read_text())["servers"][0]["dsn"] == pg_dsn

    purged = run_cli(home, "memory", "purge", "--user", "openai:alice", "--yes")
    assert purged.returncode == 0, purged.stderr
    assert f"{pg_dsn} schema openclaw_main: 1 memories" in purged.stdout
    assert "agents/main/memory/memory.sqlite: 1 memories" in purged.stdout
    assert files_holding(home, "zorbquill") == []
    assert server_rows_holding(pg_dsn, "zorbquill", "openai:alice") == {}
    assert server_rows_holding(pg_dsn, "ferns") != {}  # bob stays on the server too


def test_a_server_shared_by_two_homes_loses_the_person_whichever_home_purges(
    tmp_path: Path, pg_dsn: str
) -> None:
    """Home A and home B share one server; pgbar has memories written from both homes, in an agent only A
    knows of too. A purges (no gateway): B's warm gateway, B's CLI (its searches go through that gateway)
    and every table of the server no longer hold pgbar. Then the other way: B purges through its gateway
    what A wrote since, and A no longer finds it."""
    a, b = tmp_path / "a", tmp_path / "b"
    write_config(a, None, memory={"backend": "postgres", "postgres": {"dsn": pg_dsn}})
    write_config(b, None, memory={"backend": "postgres", "postgres": {"dsn": pg_dsn}})
    _ok(a, "memory", "add", "pgbar plays the zorbquill at dawn", "--user", "pgbar")
    _ok(a, "--agent", "work", "memory", "add", "pgbar files zorbquill reports", "--user", "pgbar")
    _ok(b, "memory", "add", "pgbar tunes the zorbquill weekly", "--user", "pgbar")
    _ok(b, "memory", "add", BOB, "--user", "bob")
    with running_gateway(b) as gw, gw.ws() as conn:
        before = request(conn, "memory.search", {"query": "zorbquill", "userId": "pgbar"})
        assert len(before["payload"]["results"]) == 2, before  # B's agent main: both homes' memories

        purged = run_cli(a, "memory", "purge", "--user", "pgbar", "--all-agents", "--yes", "--json")
        assert purged.returncode == 0, purged.stderr
        assert (purged.json()["purged"], purged.json()["via"]) == (3, "direct")

        after = request(conn, "memory.search", {"query": "zorbquill", "userId": "pgbar"})
        assert after["payload"]["results"] == [], after
        left = _ok(b, "memory", "search", "zorbquill", "--all", "--json").json()["results"]
        assert [r["l0"] for r in left] == [BOB]  # --all: even the weakest match of pgbar would show
        assert server_rows_holding(pg_dsn, "zorbquill", "pgbar") == {}

        _ok(a, "memory", "add", "pgbar hums near the zorbquill", "--user", "pgbar")
        by_b = run_cli(b, "memory", "purge", "--user", "pgbar", "--all-agents", "--yes", "--json")
        assert by_b.returncode == 0, by_b.stderr
        assert (by_b.json()["purged"], by_b.json()["via"]) == (1, "gateway")
    found = _ok(a, "memory", "search", "zorbquill", "--all", "--json").json()["results"]
    assert [r["l0"] for r in found] == [BOB]
    assert server_rows_holding(pg_dsn, "zorbquill", "pgbar") == {}
    assert files_holding(a, "zorbquill") == [] and files_holding(b, "zorbquill") == []


def test_a_known_server_that_cannot_be_reached_is_named_and_the_rest_is_purged(
    home: Path, tmp_path: Path, pg_dsn: str
) -> None:
    """memory.postgres.dsn names a server that does not answer: the SQLite store is purged, the command
    fails in one line naming the server (never its password) and what to do; with the server back in the
    config, the same purge finishes there."""
    _config(home, {"backend": "postgres", "postgres": {"dsn": pg_dsn}})
    _ok(home, "memory", "add", LIN_TOO, "--user", "lin")
    _ok(home, "memory", "migrate-backend", "--to", "sqlite", "--switch")
    (home / "memory-servers.json").unlink()  # only the config knows of the server now
    gone = f"postgresql://lin:hunter2@/nowhere?host={tmp_path / 'no-server'}"
    _config(home, {"backend": "sqlite", "postgres": {"dsn": gone}})

    failed = run_cli(home, "memory", "purge", "--user", "lin", "--yes")
    _one_line_error(failed, "postgresql://lin:***@/nowhere", "cannot be purged", "run the purge again")
    assert "hunter2" not in failed.stdout + failed.stderr
    assert "memory.sqlite: 1 memories" in failed.stdout  # what could be reached was purged
    assert files_holding(home, "zorbquill") == []
    assert server_rows_holding(pg_dsn, "zorbquill") != {}

    again = run_cli(home, "memory", "purge", "--user", "lin", "--yes")  # still down: still an error
    _one_line_error(again, "cannot reach PostgreSQL")
    _config(home, {"backend": "sqlite", "postgres": {"dsn": pg_dsn}})
    done = _ok(home, "memory", "purge", "--user", "lin", "--yes")
    assert f"{pg_dsn} schema openclaw_main: 1 memories" in done.stdout
    assert server_rows_holding(pg_dsn, "zorbquill") == {}
