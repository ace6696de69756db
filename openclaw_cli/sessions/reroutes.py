"""How many messages were kept out of the main session because it is the owner's (issue 47).

Under `session.dmScope: main` another person's DM goes to their own per-channel-peer session, and a person
other than the owner who asks for the main session (`chat.send` without a sessionKey, `openclaw chat --user`)
gets their own session. That is a change from what `main` once did, so it is counted per agent, with the
time of the last one, for `openclaw doctor` and `gateway status` to say.

The file (`gateway/dm-reroutes.json` under the home, 0600, replaced atomically) holds counts and times
only, never a person id or a word, so a purge has nothing to remove from it. The gateway and CLI processes
may both write it: a lock file serialises the read-modify-write, so no count is lost.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openclaw_cli.core.fsutil import FILE_MODE, atomic_write_json, ensure_private_dir

FILENAME = "dm-reroutes.json"


def reroutes_path(root: Path) -> Path:
    return root / "gateway" / FILENAME


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    ensure_private_dir(path.parent)
    fd = os.open(path.with_name(path.name + ".lock"), os.O_CREAT | os.O_RDWR, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def read_reroutes(root: Path) -> dict[str, dict[str, Any]]:
    """agentId -> {count, lastAt, dmScope}; empty when nothing was ever rerouted (or the file is unreadable:
    it is a report, and a damaged one must not stop a gateway or a doctor)."""
    try:
        data = json.loads(reroutes_path(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    agents = data.get("agents") if isinstance(data, dict) else None
    if not isinstance(agents, dict):
        return {}
    return {
        str(agent): {
            "count": int(entry.get("count", 0)),
            "lastAt": entry.get("lastAt"),
            "dmScope": entry.get("dmScope"),
        }
        for agent, entry in agents.items()
        if isinstance(entry, dict) and isinstance(entry.get("count", 0), int)
    }


def record_reroute(root: Path, agent_id: str, dm_scope: str, at: datetime | None = None) -> None:
    """Count one message sent to its speaker's own session instead of the main session."""
    from openclaw_cli.sessions.layout import iso

    moment = iso((at or datetime.now(UTC)).astimezone(UTC))
    path = reroutes_path(root)
    with _locked(path):
        agents = read_reroutes(root)
        entry = agents.get(agent_id, {"count": 0})
        agents[agent_id] = {"count": int(entry["count"]) + 1, "lastAt": moment, "dmScope": dm_scope}
        # Not fsynced: a count lost to a power cut is a report a little low, and a DM must not wait for a disk.
        atomic_write_json(path, {"version": 1, "agents": agents}, durable=False)
