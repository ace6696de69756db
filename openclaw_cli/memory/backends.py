"""Where an agent's memory lives (memory.backend): one SQLite file per agent under the home, or one schema
per agent on a PostgreSQL server with pgvector. Opening a store, listing the stores, and what an error of
the server or a purge on it means to the user are decided here; the rest of the code sees a MemoryStore.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import ConfigError, StoreError
from openclaw_cli.memory.store.memory_store import EmbedderFactory, MemoryStore

if TYPE_CHECKING:
    from openclaw_cli.config.loading import MemorySettings
    from openclaw_cli.core.paths import Home
    from openclaw_cli.memory.store.persons import StoreSource
    from openclaw_cli.memory.store.protocol import MemoryStorage

SERVER_PURGE_NOTE = (
    "on PostgreSQL no row of theirs is left, and VACUUM has marked the space those rows took as free; "
    "their bytes may stay in the server's data files until reused, and in its WAL, replicas and base "
    "backups until those age out (VACUUM FULL on the memory tables rewrites them, under an exclusive lock)"
)


def open_store(
    home: Home, settings: MemorySettings, path: Path, embedder: EmbedderFactory, *, create: bool
) -> MemoryStore:
    """The store at `path`: that SQLite file, or with memory.backend postgres the server's store of the
    same agent; `path` then only names it."""
    if settings.backend != "postgres":
        return MemoryStore.open(path, embedder, create=create)
    from openclaw_cli.memory.store.postgres.connection import open_storage

    dsn, name = server_dsn(settings), home.memory_db_agent(path)
    return MemoryStore(open_storage(dsn, name), path, embedder, reader=lambda: open_storage(dsn, name))


def server_dsn(settings: MemorySettings) -> str:
    if not settings.postgres.dsn:
        raise ConfigError(
            "memory.backend is postgres but memory.postgres.dsn is not set",
            hint="set it with `openclaw config set memory.postgres.dsn postgresql://user@host/db` "
            "or OPENCLAW_MEMORY__POSTGRES__DSN",
        )
    return settings.postgres.dsn


def stored_agents(home: Home, settings: MemorySettings) -> list[str]:
    """Every agent with a memory database (the shared store's name included): the files under the home,
    or the stores on the server."""
    if settings.backend == "postgres":
        from openclaw_cli.memory.store.postgres.connection import store_names

        return store_names(server_dsn(settings))
    from openclaw_cli.memory.store.persons import agent_ids_on_disk

    return agent_ids_on_disk(home)


@dataclass(frozen=True)
class ServerStores:
    """The server's memory databases, for doctor's persons (memory/store/persons.py StoreSource)."""

    dsn: str

    def agents(self) -> list[str]:
        from openclaw_cli.memory.store.postgres.connection import store_names

        return store_names(self.dsn)

    def where(self, agent: str) -> str:
        from openclaw_cli.core.dsn import mask_dsn
        from openclaw_cli.memory.store.postgres.connection import schema_name

        return f"{mask_dsn(self.dsn)} schema {schema_name(agent)}"

    def open(self, agent: str) -> MemoryStorage:
        from openclaw_cli.memory.store.postgres.connection import open_storage

        return open_storage(self.dsn, agent)


def store_source(home: Home, settings: MemorySettings) -> StoreSource:
    """Where every agent's memory database is, to list whose memories they hold."""
    if settings.backend == "postgres":
        return ServerStores(server_dsn(settings))
    from openclaw_cli.memory.store.persons import FileStores

    return FileStores(home)


def purge_disk_note(store: MemoryStore) -> str | None:
    """What a purge's compaction guarantees on disk, where it is less than "no byte left" (the server)."""
    return None if store.is_sqlite else SERVER_PURGE_NOTE


def server_error(exc: Exception, stores: list[MemoryStore]) -> StoreError:
    """A PostgreSQL error met mid-operation, in one line. When the connection is gone, the server rolled
    back the open transaction: nothing of it was kept, nothing is half-written."""
    from openclaw_cli.core.dsn import mask_dsn
    from openclaw_cli.memory.store.postgres.storage import PostgresStorage

    detail = mask_dsn(str(exc).strip().splitlines()[0]) if str(exc).strip() else type(exc).__name__
    on_server = [store.storage for store in stores]
    if any(isinstance(storage, PostgresStorage) and storage.conn.closed for storage in on_server):
        return StoreError(
            f"lost the connection to PostgreSQL: {detail}",
            hint="nothing of the unfinished change was kept; run the command again once the server is back",
        )
    return StoreError(f"PostgreSQL: {detail}")


@contextmanager
def damage_guard(stores: dict[Path, MemoryStore]) -> Iterator[None]:
    """Turn an error met mid-operation on `stores` into what to do about it: a server's error named with
    its store, or, when page damage explains an SQLite error, the damage and the repair (a damaged vec0
    chunk fails as "could not open vectors blob", not as CorruptError)."""
    try:
        yield
    except Exception as exc:
        if type(exc).__module__.startswith("psycopg"):
            raise server_error(exc, list(stores.values())) from None
        if type(exc).__module__ != "apsw" or type(exc).__name__ in ("BusyError", "ConstraintError"):
            raise
        found = _damage_error(stores)
        if found is None:
            raise
        raise found from exc


def _damage_error(stores: dict[Path, MemoryStore]) -> StoreError | None:
    from openclaw_cli.memory.upkeep.integrity import REBUILD_HINT, RESTORE_HINT, find_damage

    for path, store in stores.items():
        if not store.is_sqlite:
            continue
        damage = find_damage(store.conn)
        if not damage.ok:
            hint = RESTORE_HINT if damage.core else REBUILD_HINT
            return StoreError(f"{path}: {damage.describe()}", hint=hint)
    return None
