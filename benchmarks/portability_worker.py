"""One import in its own process, so the benchmark can read that process's peak memory (wait4's rusage).

    python -m benchmarks.portability_worker HOME FILE

Imports FILE into HOME through `import_memories` with the synthetic composite embedder of synth.py (the
real models would embed 100k texts for many minutes; what is measured here is the import itself: reading,
validation, dedup checks, FTS analysis, vector and history writes in one transaction). Prints one JSON line.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from benchmarks.synth import CompositeEmbedder
from openclaw_cli.config import Settings
from openclaw_cli.memory.export_io import open_export
from openclaw_cli.memory.portability import import_memories
from openclaw_cli.memory.service import MemoryService
from openclaw_cli.paths import Home


def main() -> None:
    home, file = Path(sys.argv[1]), Path(sys.argv[2])
    service = MemoryService(Home(home), "main", Settings().memory)
    composite = CompositeEmbedder()
    service.embedder = lambda: composite  # type: ignore[method-assign]
    start = time.perf_counter()
    report = import_memories(service, open_export(file))
    seconds = time.perf_counter() - start
    service.close()
    print(json.dumps({"seconds": seconds, "added": len(report.added), "pending": report.pending_vectors}))


if __name__ == "__main__":
    main()
