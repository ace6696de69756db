"""A writer process on a postgres memory, for the tests and benchmarks of writers on several machines.

    python -m tests.pg_worker review HOME DSN RECORD_ID COUNT   # COUNT FSRS reviews of one record
    python -m tests.pg_worker add HOME DSN PREFIX COUNT         # COUNT new memories and COUNT copies of one

Each writes through the MemoryService, as a gateway's agent turn does (a hit is a review: record_hits),
with the home's own settings but memory on the server at DSN; it prints one JSON line of what it did.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from openclaw_cli.config.loading import Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.service import MemoryService

SHARED_TEXT = "The family meets at grandmother's house every Sunday"


def _service(home: str, dsn: str, model_cache: str) -> MemoryService:
    embedding = {"modelCacheDir": model_cache} if model_cache else {}
    settings = Settings(memory={"backend": "postgres", "postgres": {"dsn": dsn}, "embedding": embedding})
    return MemoryService(Home(Path(home)), "main", settings.memory)


def review(service: MemoryService, record_id: str, count: int) -> dict[str, object]:
    reviewed = sum(len(service.record_hits([record_id])) for _ in range(count))
    return {"reviewed": reviewed}


def add(service: MemoryService, prefix: str, count: int) -> dict[str, object]:
    ids, shared = [], []
    for n in range(count):
        ids.append(service.add(NewMemory(l0=f"{prefix} remembers detail number {n}"))[0].id)
        shared.append(service.add(NewMemory(l0=SHARED_TEXT))[0].id)
    return {"ids": ids, "shared": sorted(set(shared))}


def main() -> None:
    action, home, dsn, what, count = sys.argv[1:6]
    model_cache = sys.argv[6] if len(sys.argv) > 6 else ""
    service = _service(home, dsn, model_cache)
    started = time.perf_counter()
    try:
        done = review(service, what, int(count)) if action == "review" else add(service, what, int(count))
    finally:
        service.close()
    print(json.dumps({**done, "seconds": time.perf_counter() - started}))


if __name__ == "__main__":
    main()
