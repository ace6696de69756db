"""Space: bytes per memory at 100k memories with the composite embedder's 896-dim vectors.

Built through `MemoryService.add_many` (FTS, vec0, history as the product writes them), then
checkpointed and vacuumed so the figure is the file a long-lived store settles at.
Run: python -m pytest benchmarks/test_bench_space.py --benchmark-only -n 0 -s
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchmarks import space, synth

TARGET_BYTES_PER_MEMORY = 3 * 1024
COUNT = 100_000


def test_bytes_per_memory_at_100k(benchmark: Any, tmp_path: Path) -> None:
    def build() -> dict[str, Any]:
        service = synth.build(tmp_path, COUNT)
        store = service.store(service.db_path("user"))
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        store.conn.execute("VACUUM")
        result = space.report(store.conn, COUNT)
        result["file_bytes"] = store.path.stat().st_size
        service.close()
        return result

    result = benchmark.pedantic(build, rounds=1, iterations=1)
    benchmark.extra_info.update(result)
    print(f"\nspace at {COUNT // 1000}k memories: {json.dumps(result, indent=1)}")
    assert result["bytes_per_memory"] <= TARGET_BYTES_PER_MEMORY
