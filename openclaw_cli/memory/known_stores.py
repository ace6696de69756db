"""Every memory store a home knows of, whatever memory.backend says now (DESIGN.md "Privacy", "Storage
backends").

A purge must reach every copy of a person's memories, and `memory migrate-backend` copies them: its source
is kept, and switching memory.backend leaves the other backend's store where it was. So a home knows of:
- the SQLite files under agents/*/memory (memory/store/persons.py agent_ids_on_disk), whatever the backend;
- the server of memory.postgres.dsn, whatever the backend (it is set for a reason);
- every server a migrate-backend moved from or to, recorded in SERVERS_FILE. The record holds the DSN
  without its password: the password stays where the user keeps it (memory.postgres.dsn, PGPASSWORD,
  ~/.pgpass) and is not copied into one more file. A recorded server that is the configured one is reached
  with the configured DSN, password included.

The configured backend comes first: what it holds is what the user sees, so it is surveyed first.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from openclaw_cli.core.dsn import mask_dsn, strip_password
from openclaw_cli.core.errors import StoreError

if TYPE_CHECKING:
    from openclaw_cli.config.loading import MemorySettings
    from openclaw_cli.core.paths import Home

SERVERS_FILE = "memory-servers.json"


@dataclass(frozen=True)
class Location:
    """Where memory stores live: the SQLite files of the home, or one PostgreSQL server (`dsn`)."""

    backend: Literal["sqlite", "postgres"]
    dsn: str | None = None  # the DSN to connect with (the configured one may hold a password)
    why: str = "memory.backend"  # how the home knows of it, for messages

    def describe(self) -> str:
        if self.dsn is None:
            return "sqlite (the files under agents/*/memory)"
        return f"postgres ({mask_dsn(self.dsn)})"

    def settings(self, base: MemorySettings) -> MemorySettings:
        """`base` pointed at this location (every other memory setting, e.g. the embedder, kept)."""
        if self.dsn is None:
            return base.model_copy(update={"backend": "sqlite"})
        server = base.postgres.model_copy(update={"dsn": self.dsn})
        return base.model_copy(update={"backend": "postgres", "postgres": server})


def servers_path(home: Home) -> Path:
    return home.root / SERVERS_FILE


def recorded_servers(home: Home) -> list[dict[str, Any]]:
    """The servers recorded by migrate-backend: [{dsn, recordedBy, at}]. A file that cannot be read is an
    error, never an empty list: a purge that skipped its servers would leave the person there."""
    path = servers_path(home)
    if not path.exists():
        return []
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
        servers = value["servers"]
        if not isinstance(servers, list) or not all(isinstance(s.get("dsn"), str) for s in servers):
            raise ValueError("servers must be a list of {dsn}")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise StoreError(
            f"{path} cannot be read ({exc}): it lists the PostgreSQL servers that hold this home's memory",
            hint='fix it (JSON: {"servers": [{"dsn": "postgresql://user@host/db"}]}) or remove it',
        ) from None
    return list(servers)


def record_server(home: Home, dsn: str, recorded_by: str, at: str) -> bool:
    """Remember that the server at `dsn` holds memory of this home (without its password); False when it
    was known already."""
    from openclaw_cli.core.fsutil import atomic_write_json

    bare = strip_password(dsn)
    servers = recorded_servers(home)
    if any(strip_password(s["dsn"]) == bare for s in servers):
        return False
    servers.append({"dsn": bare, "recordedBy": recorded_by, "at": at})
    home.ensure_root()
    atomic_write_json(servers_path(home), {"servers": servers})
    return True


def known_locations(home: Home, settings: MemorySettings) -> list[Location]:
    """Every location that may hold memory of this home, the configured backend first (see the module doc).
    The SQLite location is listed when it is configured or when a memory file exists under the home."""
    from openclaw_cli.memory.store.persons import agent_ids_on_disk

    found: list[Location] = []
    configured = settings.postgres.dsn
    if settings.backend == "postgres" and not configured:
        from openclaw_cli.memory.backends import server_dsn

        server_dsn(settings)  # raises: the configured backend cannot be left out
    if settings.backend == "sqlite":
        found.append(Location("sqlite"))
    if configured:
        why = "memory.backend" if settings.backend == "postgres" else "memory.postgres.dsn"
        found.append(Location("postgres", configured, why))
    seen = {strip_password(configured)} if configured else set()
    for server in recorded_servers(home):
        bare = strip_password(server["dsn"])
        if bare not in seen:
            seen.add(bare)
            found.append(Location("postgres", server["dsn"], f"{SERVERS_FILE}{_by(server)}"))
    if settings.backend != "sqlite" and agent_ids_on_disk(home):
        found.append(Location("sqlite", None, "memory files under the home"))
    return found


def _by(server: dict[str, Any]) -> str:
    return f" (by {server['recordedBy']})" if server.get("recordedBy") else ""
