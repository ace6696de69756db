"""The memory stores a purge covers: every store the home knows of (memory/known_stores.py), not only the
configured backend's. After `memory migrate-backend` and a switch, the source still holds every person's
words; a PostgreSQL server shared by several homes holds every home's.

Each location (the home's SQLite files, each known server) gets its own MemoryService. A server that
cannot be reached (down, no password for it) is never skipped in silence: it is kept in `unreachable`
with what to do, the purge goes on with the others (the sooner the person is gone from those, the
better), and the command then fails naming it. Run again once it is reachable, the purge finishes there.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import StoreError

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.core.paths import Home
    from openclaw_cli.memory.known_stores import Location
    from openclaw_cli.memory.service import MemoryService
    from openclaw_cli.memory.store.memory_store import MemoryStore


@dataclass
class Place:
    """One location's service and the agents (store names) it holds a store of."""

    location: Location
    service: MemoryService
    agents: list[str] = field(default_factory=list)

    def store(self, agent: str) -> MemoryStore:
        return self.service.store(self.service.home.memory_db(agent), create=False)

    def where(self, agent: str) -> str:
        """The store as a report names it: its file, or the server (no password) and schema."""
        if self.location.dsn is None:
            return str(self.service.home.memory_db(agent))
        from openclaw_cli.memory.backends import ServerStores

        return ServerStores(self.location.dsn).where(agent)


@dataclass(frozen=True)
class Unreachable:
    where: str
    message: str
    hint: str

    def to_dict(self) -> dict[str, str]:
        return {"store": self.where, "error": self.message, "hint": self.hint}


class KnownStores:
    """The places of every known location that could be opened, and the ones that could not."""

    def __init__(self, home: Home, settings: Settings, agent_id: str) -> None:
        from openclaw_cli.memory.known_stores import known_locations

        self.home = home
        self.places: list[Place] = []
        self.unreachable: list[Unreachable] = []
        for location in known_locations(home, settings.memory):
            self._open(location, settings, agent_id)

    def _open(self, location: Location, settings: Settings, agent_id: str) -> None:
        from openclaw_cli.identity.persons import owner_id
        from openclaw_cli.memory.service import MemoryService

        memory = location.settings(settings.memory)
        service = MemoryService(self.home, agent_id, memory, owner=owner_id(settings))
        try:
            with service.damage_guard():
                agents = service.stored_agents()
        except StoreError as exc:
            service.close()
            if location.dsn is None:
                raise  # the home's own files: a damaged one is named with its repair (damage_guard)
            self.unreachable.append(_unreachable(self.home, location, exc))
            return
        self.places.append(Place(location, service, agents))

    def __iter__(self) -> Iterator[Place]:
        return iter(self.places)

    def first_error(self) -> StoreError:
        """The purge could reach no store that holds the person: the first unreachable one, as an error."""
        first = self.unreachable[0]
        more = f" (and {len(self.unreachable) - 1} more)" if len(self.unreachable) > 1 else ""
        return StoreError(f"{first.message}{more}", hint=first.hint)

    def forget_words(self) -> list[str]:
        """Empty the home's caches of searched words (one set per home, whatever the location)."""
        if not self.places:
            return []
        return [str(path) for path in self.places[0].service.forget_words()]

    def close(self) -> None:
        for place in self.places:
            place.service.close()
        self.places.clear()


def _unreachable(home: Home, location: Location, exc: StoreError) -> Unreachable:
    from openclaw_cli.memory.known_stores import servers_path

    reason = exc.message
    message = (
        f"the memory store on {location.describe()}, known from {location.why}, cannot be purged: {reason}"
    )
    if location.why.startswith("memory."):
        hint = (
            "start the server or fix memory.postgres.dsn (a password may also come from PGPASSWORD), then "
            "run the purge again; if that server no longer holds this home's memory, unset memory.postgres.dsn"
        )
    else:
        hint = (
            "start the server and give its password with PGPASSWORD or ~/.pgpass (or set memory.postgres.dsn "
            f"to it), then run the purge again; if that server is gone for good, remove it from "
            f"{servers_path(home)}"
        )
    return Unreachable(location.describe(), message, hint)
