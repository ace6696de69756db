"""Reading a session's meta.json, with one error per way it can be missing or damaged.

Below both the writer (which loads its checkpoint from meta.json) and the store (which reads meta for
callers), so neither imports the other to read it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openclaw_cli.core.errors import NotFound, StoreError
from openclaw_cli.security.files import read_document

FIX_HINT = "run `openclaw doctor --fix`"


def read_meta_file(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(read_document(path))  # sealed in an encrypted home
    except FileNotFoundError as exc:
        raise NotFound(f"no session at {path.parent}", hint="see `openclaw session list`") from exc
    except OSError as exc:  # e.g. a directory where meta.json should be
        raise StoreError(f"{path}: cannot read meta.json ({exc.strerror})", hint=FIX_HINT) from exc
    except ValueError as exc:
        raise StoreError(f"{path}: damaged meta.json ({exc})", hint=FIX_HINT) from exc
    if not isinstance(value, dict) or not isinstance(value.get("sessionId"), str):
        raise StoreError(f"{path}: damaged meta.json (unexpected shape)", hint=FIX_HINT)
    return value


def meta_problem(path: Path) -> tuple[dict[str, Any] | None, str]:
    """(meta, "") when meta.json reads and names its own directory, else (None, what is wrong)."""
    try:
        meta = read_meta_file(path)
    except (StoreError, NotFound) as exc:
        return None, exc.message
    if meta.get("sessionId") != path.parent.name:
        return None, f"{path}: sessionId {meta.get('sessionId')!r} does not match the directory"
    return meta, ""
