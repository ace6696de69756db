"""`openclaw memory` with memory.backend postgres, through the real process against the real test server:
every command works unchanged, a purge leaves no row, and each way the server can fail is one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.conftest import Result, run_cli
from tests.import_trace import imported_modules

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True


def _on(dsn: str) -> dict[str, str]:
    return {"OPENCLAW_MEMORY__BACKEND": "postgres", "OPENCLAW_MEMORY__POSTGRES__DSN": dsn}


@pytest.fixture
def pg_cli(home: Path, pg_dsn: str):  # type: ignore[no-untyped-def]
    """`pg_cli("memory", "list")` runs the real CLI for this home with its memory on a fresh database."""

    def _run(*args: str, env: dict[str, str] | None = None, **kwargs: Any) -> Result:
        return run_cli(home, *args, env={**_on(pg_dsn), **(env or {})}, **kwargs)

    return _run


def _rows(dsn: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as conn:
        conn.execute("SET search_path = openclaw_main, public")
        return conn.execute(sql).fetchall()  # type: ignore[arg-type]


def _one_line_error(result: Result, *needles: str) -> None:
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr


def test_add_search_list_history_delete_work_unchanged_and_write_no_file(pg_cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    tea = pg_cli("memory", "add", "Drinks green tea every morning", "-c", "preference", "--json")
    assert tea.returncode == 0, tea.stderr
    piano = pg_cli("memory", "add", "我女儿每周六上钢琴课", "-c", "event", "--json").json()["id"]
    found = pg_cli("memory", "search", "green tea", "--json").json()["results"]
    assert found[0]["id"] == tea.json()["id"] and 0 < found[0]["score"] <= 1
    assert pg_cli("memory", "search", "钢琴", "--json").json()["results"][0]["id"] == piano
    assert {r["id"] for r in pg_cli("memory", "list", "--json").json()} == {tea.json()["id"], piano}
    assert pg_cli("memory", "delete", piano, "--json").returncode == 0
    assert [h["action"] for h in pg_cli("memory", "history", piano, "--json").json()] == ["add", "delete"]
    assert [r["id"] for r in pg_cli("memory", "list", "--json").json()] == [tea.json()["id"]]
    assert not (home / "agents" / "main" / "memory" / "memory.sqlite").exists()


def test_export_from_postgres_imports_into_sqlite_and_back_with_ids(
    pg_cli, cli, pg_server: Any, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    ids = [
        pg_cli("memory", "add", text, "--json").json()["id"] for text in ("Owns a kayak", "Lives in Porto")
    ]
    exported = tmp_path / "export.jsonl"
    assert pg_cli("memory", "export", "-o", str(exported)).returncode == 0
    assert cli("memory", "import", str(exported), "--json").returncode == 0
    assert sorted(r["id"] for r in cli("memory", "list", "--json").json()) == sorted(ids)
    again = run_cli(
        tmp_path / "other", "memory", "import", str(exported), env=_on(pg_server.fresh_database())
    )
    assert again.returncode == 0, again.stderr


def test_purge_leaves_no_row_of_the_person_on_the_server(pg_cli, pg_dsn: str) -> None:  # type: ignore[no-untyped-def]
    for text in ("Alice keeps bees on the roof", "Alice's sister Priya lives in Lisbon"):
        assert pg_cli("memory", "add", text, "-u", "alice").returncode == 0
    assert pg_cli("memory", "add", "Bob collects stamps", "-u", "bob").returncode == 0
    purged = pg_cli("memory", "purge", "--user", "alice", "--yes")
    assert purged.returncode == 0, purged.stderr
    assert "VACUUM" in purged.stdout and "WAL" in purged.stdout  # what is and is not guaranteed on disk
    assert _rows(pg_dsn, "SELECT count(*) FROM records WHERE user_id = 'alice' OR l0 LIKE '%Alice%'") == [
        (0,)
    ]
    assert _rows(
        pg_dsn, "SELECT count(*) FROM history WHERE user_id = 'alice' OR old_value LIKE '%bees%'"
    ) == [(0,)]
    assert _rows(pg_dsn, "SELECT count(*) FROM people WHERE user_id = 'alice'") == [(0,)]
    assert _rows(pg_dsn, "SELECT count(*) FROM keyword_vocab WHERE term IN ('bee', 'bees', 'lisbon')") == [
        (0,)
    ]
    assert _rows(pg_dsn, "SELECT count(*) FROM keyword_rows") == [(1,)]
    assert _rows(pg_dsn, "SELECT count(*) FROM vec_1 WHERE user_id = 'alice'") == [(0,)]
    assert _rows(pg_dsn, "SELECT user_id FROM records") == [("bob",)]


def test_index_check_finds_a_missing_keyword_row_and_index_repairs_it(pg_cli, pg_dsn: str) -> None:  # type: ignore[no-untyped-def]
    assert pg_cli("memory", "add", "Runs along the river").returncode == 0
    assert pg_cli("memory", "index", "--check", "--json").json()["ok"]
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM openclaw_main.keyword_rows")
    broken = pg_cli("memory", "index", "--check", "--json")
    assert broken.returncode == 1 and broken.json()["databases"][0]["ftsMissing"] == 1
    assert pg_cli("memory", "index", "--json").returncode == 0
    assert pg_cli("memory", "index", "--check", "--json").json()["ok"]
    assert pg_cli("memory", "search", "river", "--json").json()["results"]


def test_status_and_doctor_report_the_server_and_never_its_password(home: Path, pg_server: Any) -> None:
    dsn = pg_server.dsn(pg_server.new_database(), password="s3cret-pw")
    env = _on(dsn)
    assert run_cli(home, "memory", "add", "Plays chess", env=env).returncode == 0
    status = run_cli(home, "memory", "status", "--json", env=env)
    server = status.json()["databases"][0]["server"]
    assert server["backend"] == "postgres" and server["serverVersion"].startswith("18")
    assert server["pgvectorVersion"] == "0.8.2" and server["rows"]["records"] == 1
    doctor = run_cli(home, "doctor", env=env)
    assert doctor.returncode == 0 and "pgvector 0.8.2" in doctor.stdout, doctor.stdout
    shown = run_cli(home, "config", "get", "memory.postgres.dsn", env=env)
    for result in (status, doctor, shown, run_cli(home, "config", "show", "--json", env=env)):
        assert "s3cret-pw" not in result.stdout + result.stderr
    assert "***" in shown.stdout


def test_an_unreachable_server_is_one_line(home: Path, tmp_path: Path) -> None:
    nowhere = f"postgresql://amy:hidden@/memory?host={tmp_path}"  # a socket directory no server listens in
    result = run_cli(home, "memory", "list", env=_on(nowhere))
    _one_line_error(result, "cannot reach PostgreSQL", "amy:***@")
    assert "hidden" not in result.stderr


def test_a_wrong_password_is_one_line_and_pgpassword_is_used(home: Path, password_role: str) -> None:
    wrong = run_cli(home, "memory", "list", env={**_on(password_role), "PGPASSWORD": "not-it"})
    _one_line_error(wrong, "refused the password")
    right = run_cli(home, "memory", "list", env={**_on(password_role), "PGPASSWORD": "right-pw"})
    assert right.returncode == 0, right.stderr


def test_a_database_without_pgvector_names_the_sql_to_create_it(home: Path, pg_server: Any) -> None:
    bare = pg_server.new_database(with_vector=False)
    pg_server.execute(
        "DO $$ BEGIN CREATE ROLE plain LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$"
    )
    result = run_cli(home, "memory", "list", env=_on(pg_server.dsn(bare, user="plain")))
    _one_line_error(result, "no `vector` extension", "CREATE EXTENSION vector;")


def test_a_schema_from_a_newer_openclaw_is_one_line(pg_cli, pg_dsn: str) -> None:  # type: ignore[no-untyped-def]
    assert pg_cli("memory", "add", "Learns Italian").returncode == 0
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("UPDATE openclaw_main.meta SET value = '99' WHERE key = 'schema_version'")
    _one_line_error(pg_cli("memory", "list"), "version 99, newer than this openclaw understands")


def test_postgres_without_a_dsn_is_one_line(home: Path) -> None:
    result = run_cli(home, "memory", "list", env={"OPENCLAW_MEMORY__BACKEND": "postgres"})
    assert result.returncode != 0 and "memory.postgres.dsn is not set" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.real_process  # psycopg is hidden from the process by its PYTHONPATH
def test_postgres_without_psycopg_installed_says_which_extra_to_install(home: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "blocked" / "psycopg"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('psycopg is not installed here')\n")
    env = {**_on("postgresql:///x"), "PYTHONPATH": f"{blocker.parent}:{Path.cwd()}"}
    _one_line_error(
        run_cli(home, "memory", "list", env=env), "psycopg is not installed", "openclaw-cli[postgres]"
    )


def test_the_sqlite_path_never_imports_psycopg(home: Path) -> None:
    status, modules = imported_modules(home, "memory", "list")
    assert status == 0 and not {m for m in modules if m.split(".")[0] == "psycopg"}


@pytest.fixture(scope="session")
def password_role(pg_server: Any) -> str:
    """A role that must give its password (scram-sha-256 in pg_hba.conf, every other role still trusted);
    the DSN of its database, without the password."""
    pg_server.execute("CREATE ROLE pwtest LOGIN PASSWORD 'right-pw' CREATEDB")
    database = pg_server.new_database()
    pg_server.execute(f'ALTER DATABASE "{database}" OWNER TO pwtest')
    hba = Path(pg_server.handle.pgdata) / "pg_hba.conf"
    hba.write_text("local all pwtest scram-sha-256\n" + hba.read_text())
    pg_server.execute("SELECT pg_reload_conf()")
    return str(pg_server.dsn(database, user="pwtest"))


@pytest.mark.parametrize("command", [("backup",), ("restore", "copy.sqlite", "--yes"), ("recover", "--yes")])
def test_file_level_care_says_it_is_the_servers_on_postgres(pg_cli, command: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    _one_line_error(pg_cli("memory", *command), "works on the SQLite memory files", "pg_dump")
