"""sessions.json, the per-agent index: the current session of each key, and the archived ones.

    {"version": 1,
     "sessions": {"agent:main:main": {"sessionId": "s-...", "status": "active", "updatedAt": "..."}},
     "archived": {"s-...": {"sessionKey": "agent:main:main", "status": "archived", "updatedAt": "..."}}}

This module stays light (json and pathlib only): `openclaw session list` reads the index through it
without loading settings, locks or tokenizers.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from openclaw_cli.core.errors import StoreError
from openclaw_cli.security.files import read_document

INDEX_FILENAME = "sessions.json"
INDEX_VERSION = 1
STATUSES = ("active", "dormant", "archived")
_DOCTOR_HINT = "run `openclaw doctor --fix` to rebuild it from the session directories"


_GENERATION_RE = re.compile(rb'^\{\s*"version":\s*\d+,\s*"generation":\s*(\d+),')


def empty_index() -> dict[str, Any]:
    # `generation` stays the second key: cached readers look for it in the first bytes of the file.
    return {"version": INDEX_VERSION, "generation": 0, "sessions": {}, "archived": {}}


def head_generation(head: bytes) -> int | None:
    """The generation written at the start of an index file, if the file starts the usual way."""
    match = _GENERATION_RE.match(head)
    return int(match.group(1)) if match else None


def parse_index(data: bytes, path: Path) -> dict[str, Any]:
    """The index held in `data`; StoreError (with the doctor hint) when it is damaged."""
    try:
        value = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise StoreError(f"{path}: damaged session index ({exc})", hint=_DOCTOR_HINT) from exc
    if (
        not isinstance(value, dict)
        or not isinstance(value.get("sessions"), dict)
        or not isinstance(value.get("archived", {}), dict)
    ):
        raise StoreError(f"{path}: damaged session index (unexpected shape)", hint=_DOCTOR_HINT)
    value.setdefault("archived", {})
    if "generation" not in value or list(value)[:2] != ["version", "generation"]:
        value = {
            "version": value.get("version", INDEX_VERSION),
            "generation": value.get("generation", 0),
            **value,
        }
    for key, entry in value["sessions"].items():
        if not isinstance(entry, dict) or not isinstance(entry.get("sessionId"), str):
            raise StoreError(f"{path}: damaged session index (entry {key!r})", hint=_DOCTOR_HINT)
    return value


def read_index(path: Path) -> dict[str, Any]:
    """The index at `path`; an empty one when the file does not exist yet."""
    try:
        data = read_document(path)  # sealed in an encrypted home
    except FileNotFoundError:
        return empty_index()
    except OSError as exc:
        raise StoreError(f"{path}: cannot read ({exc.strerror})") from exc
    return parse_index(data, path)


def index_rows(index: dict[str, Any], status: str | None = None) -> list[dict[str, Any]]:
    """One row per session (current and archived), newest update first."""
    rows: list[dict[str, Any]] = []
    for key, entry in index["sessions"].items():
        rows.append(
            {
                "sessionKey": key,
                "sessionId": entry["sessionId"],
                "status": entry.get("status", "active"),
                "updatedAt": entry.get("updatedAt"),
            }
        )
    for session_id, entry in index["archived"].items():
        if isinstance(entry, dict):
            rows.append(
                {
                    "sessionKey": entry.get("sessionKey"),
                    "sessionId": session_id,
                    "status": entry.get("status", "archived"),
                    "updatedAt": entry.get("updatedAt"),
                }
            )
    if status is not None:
        rows = [row for row in rows if row["status"] == status]
    rows.sort(key=lambda row: str(row["updatedAt"] or ""), reverse=True)
    return rows


def list_sessions(sessions_dir: Path, status: str | None = None) -> list[dict[str, Any]]:
    return index_rows(read_index(sessions_dir / INDEX_FILENAME), status)
