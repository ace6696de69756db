"""Child processes for the portability benchmark.

    python -m benchmarks.portability_worker import HOME FILE
    python -m benchmarks.portability_worker measure COMMAND...

`measure` runs COMMAND and prints its wall time and peak RSS as a JSON line on stderr. It exists because a
child forked straight from the benchmark's process (which holds the 100k-record source in memory) reports
that process's RSS as its own ru_maxrss: Linux counts the pages of the forked image before exec. Forked
from this small process instead, the figure is the command's own.

`import`
Imports FILE into HOME through `import_memories` with the synthetic composite embedder of synth.py (the
real models would embed 100k texts for many minutes; what is measured here is the import itself: reading,
validation, dedup checks, FTS analysis, vector and history writes in one transaction). Prints one JSON line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def measure(command: list[str]) -> int:
    start = time.perf_counter()
    child = subprocess.Popen(command)
    _, status, usage = os.wait4(child.pid, 0)
    figures = {"seconds": time.perf_counter() - start, "rssMb": usage.ru_maxrss / 1024}
    sys.stderr.write(json.dumps(figures) + "\n")
    return os.waitstatus_to_exitcode(status)


def import_file(home: Path, file: Path) -> None:
    # Imported here, not above: `measure` stays a small process (its size is its child's pre-exec RSS).
    from benchmarks.synth import CompositeEmbedder
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.core.paths import Home
    from openclaw_cli.memory.portability.files import open_export
    from openclaw_cli.memory.portability.transfer import import_memories
    from openclaw_cli.memory.service import MemoryService

    service = MemoryService(Home(home), "main", Settings().memory)
    composite = CompositeEmbedder()
    service.embedder = lambda: composite  # type: ignore[method-assign]
    start = time.perf_counter()
    report = import_memories(service, open_export(file))
    seconds = time.perf_counter() - start
    service.close()
    print(json.dumps({"seconds": seconds, "added": len(report.added), "pending": report.pending_vectors}))


if __name__ == "__main__":
    if sys.argv[1] == "measure":
        sys.exit(measure(sys.argv[2:]))
    import_file(Path(sys.argv[2]), Path(sys.argv[3]))
