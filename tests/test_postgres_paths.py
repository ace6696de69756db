"""With memory.backend postgres, reports name the server store, never the SQLite file the agent would have
(issue 48: `memory index --check --json` said `memory.sqlite`, beside the server's count)."""

from __future__ import annotations

from pathlib import Path

from openclaw_cli.core.dsn import mask_dsn
from tests.conftest import run_cli


def _on(dsn: str) -> dict[str, str]:
    return {"OPENCLAW_MEMORY__BACKEND": "postgres", "OPENCLAW_MEMORY__POSTGRES__DSN": dsn}


def _seeded(home: Path, dsn: str) -> str:
    added = run_cli(home, "memory", "add", "Drinks green tea every morning", env=_on(dsn))
    assert added.returncode == 0, added.stderr
    return f"{mask_dsn(dsn)} schema openclaw_main"


def test_index_check_json_names_the_server_store(home: Path, pg_dsn: str) -> None:
    where = _seeded(home, pg_dsn)
    checked = run_cli(home, "memory", "index", "--check", "--json", env=_on(pg_dsn))
    assert checked.returncode == 0, checked.stderr
    [database] = checked.json()["databases"]
    assert database["path"] == where and "memory.sqlite" not in checked.stdout
    assert database["records"] == 1


def test_index_check_names_it_as_status_does(home: Path, pg_dsn: str) -> None:
    where = _seeded(home, pg_dsn)
    checked = run_cli(home, "memory", "index", "--check", env=_on(pg_dsn))
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.splitlines()[0] == f"{where}: ok"
    status = run_cli(home, "memory", "status", "--json", env=_on(pg_dsn))
    assert [db["path"] for db in status.json()["databases"]] == [where]
