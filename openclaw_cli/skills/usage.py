"""When each skill was last used by an agent (read with skill_read or invoked with /skill): what the
prompt's budget drops first is the least recently used. One small JSON file per agent, replaced
atomically, so a crash leaves the old record or the new one; a damaged record counts as no uses."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from openclaw_cli.core.fsutil import atomic_write_json

USAGE_FILE = "skill-usage.json"
MAX_ENTRIES = 1000  # names of long-deleted skills do not pile up forever

_lock = threading.Lock()  # turns of one process record uses one at a time (read, add, replace)


def read_usage(path: Path) -> dict[str, float]:
    """name -> last use (seconds since the epoch); {} when there is no record or it is unreadable."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(raw, dict):
        return {}
    return {str(k): float(v) for k, v in raw.items() if isinstance(v, int | float)}


def record_use(path: Path, name: str, when: float) -> None:
    with _lock:
        usage = read_usage(path)
        usage[name] = when
        if len(usage) > MAX_ENTRIES:
            usage = dict(sorted(usage.items(), key=lambda item: -item[1])[:MAX_ENTRIES])
        # Not fsynced: losing the last use in a power cut only reorders what a full budget drops.
        atomic_write_json(path, usage, durable=False)
