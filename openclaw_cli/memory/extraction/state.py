"""A session's extraction state: `<session dir>/extraction.json`, replaced atomically.

`checkpoint` is the index of the first message not yet extracted: every run starts there and moves it
to where it stopped, after its memories are committed, so no message is extracted twice and none is
skipped, even across a crash (a crash before the move repeats the run, and dedup absorbs the repeat).
`remembered` holds the indexes at or after the checkpoint that "remember this" already wrote.
`runs` holds the times of the automatic runs of the last hour: the hourly limit holds across processes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from openclaw_cli.core.errors import StoreError
from openclaw_cli.core.fsutil import atomic_write_json
from openclaw_cli.memory.store.records import iso, parse_iso

STATE_FILENAME = "extraction.json"
RATE_WINDOW = timedelta(hours=1)


@dataclass
class ExtractionState:
    checkpoint: int = 0
    remembered: list[int] = field(default_factory=list)
    runs: list[datetime] = field(default_factory=list)

    def recent_runs(self, now: datetime) -> list[datetime]:
        return [moment for moment in self.runs if now - moment < RATE_WINDOW]

    def next_allowed(self, now: datetime, max_per_hour: int) -> datetime | None:
        """When the next automatic run may start, or None if it may start now."""
        recent = sorted(self.recent_runs(now))
        if len(recent) < max_per_hour:
            return None
        return recent[len(recent) - max_per_hour] + RATE_WINDOW

    def advance(self, end: int) -> None:
        self.checkpoint = max(self.checkpoint, end)
        self.remembered = sorted(i for i in set(self.remembered) if i >= self.checkpoint)

    def to_dict(self) -> dict[str, Any]:
        return {
            "checkpoint": self.checkpoint,
            "remembered": self.remembered,
            "runs": [iso(moment) for moment in self.runs],
        }


def state_path(session_dir: Path) -> Path:
    return session_dir / STATE_FILENAME


def read_state(session_dir: Path) -> ExtractionState:
    path = state_path(session_dir)
    try:
        value = json.loads(path.read_bytes())
    except FileNotFoundError:
        return ExtractionState()
    except (OSError, ValueError) as exc:
        raise StoreError(
            f"{path}: damaged ({exc})", hint=f"delete {path} to extract the session again"
        ) from exc
    try:
        checkpoint = int(value["checkpoint"])
        remembered = [int(i) for i in value.get("remembered", [])]
        runs = [moment for text in value.get("runs", []) if (moment := parse_iso(text)) is not None]
    except (KeyError, TypeError, ValueError) as exc:
        raise StoreError(
            f"{path}: damaged ({exc})", hint=f"delete {path} to extract the session again"
        ) from exc
    return ExtractionState(max(checkpoint, 0), remembered, runs)


def write_state(session_dir: Path, state: ExtractionState, now: datetime, *, durable: bool = True) -> None:
    """`durable=False`: replaced atomically but not synced to disk (a power cut may keep the older file)."""
    state.runs = state.recent_runs(now)
    atomic_write_json(state_path(session_dir), state.to_dict(), durable=durable)
