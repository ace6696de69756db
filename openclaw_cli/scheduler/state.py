"""Each job's last run (`cron/state.json`): when it started, its result, how long it took, what went wrong.

The file is replaced atomically after each run; one that cannot be read (damaged, hand-edited) counts as
no history: the jobs then wait for their next time rather than all running at once, and the next run
writes a whole file again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from openclaw_cli.core.fsutil import atomic_write_json

Result = Literal["ok", "failed", "timeout"]
MAX_DETAIL = 500  # the tail of a failed command's stderr kept for `cron list`


@dataclass(frozen=True)
class JobRun:
    job: str
    started: datetime
    result: Result
    duration_seconds: float
    detail: str | None = None  # why it failed; None when it did not
    trigger: str = "schedule"  # schedule, missed (run at start for a time the gateway was down), manual

    def to_dict(self) -> dict[str, Any]:
        return {
            "job": self.job,
            "lastRun": self.started.isoformat(),
            "result": self.result,
            "durationSeconds": round(self.duration_seconds, 3),
            "detail": self.detail,
            "trigger": self.trigger,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JobRun:
        started = datetime.fromisoformat(str(data["lastRun"]))
        if started.tzinfo is None:
            raise ValueError("a run's time without its zone")
        result = str(data["result"])
        if result not in ("ok", "failed", "timeout"):
            raise ValueError(f"unknown result {result!r}")
        detail = data.get("detail")
        return cls(
            job=str(data["job"]),
            started=started,
            result=result,  # type: ignore[arg-type]  # checked above
            duration_seconds=float(data["durationSeconds"]),
            detail=None if detail is None else str(detail),
            trigger=str(data.get("trigger", "schedule")),
        )


def state_path(root: Path) -> Path:
    return root / "cron" / "state.json"


def load_state(path: Path) -> dict[str, JobRun]:
    try:
        data = json.loads(path.read_bytes())
        return {name: JobRun.from_dict(entry) for name, entry in data["jobs"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def save_state(path: Path, runs: dict[str, JobRun]) -> None:
    atomic_write_json(path, {"version": 1, "jobs": {name: run.to_dict() for name, run in runs.items()}})
