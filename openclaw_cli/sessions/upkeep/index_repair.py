"""`openclaw doctor` for sessions.json against the session directories: entries without a directory are
dropped, directories left out of the index are filed back (or removed when empty and superseded), and a
damaged index is rebuilt from every meta.json.

Called by check.py, which reads the index and the directories first; every change is made under the
writers' locks (key, then index or session), re-checked there.
"""

from __future__ import annotations

import contextlib
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.findings import Finding
from openclaw_cli.sessions import index as index_file
from openclaw_cli.sessions.archive import transcript_file
from openclaw_cli.sessions.layout import MESSAGES_FILENAME, META_FILENAME, NEW_PREFIX
from openclaw_cli.sessions.meta_file import FIX_HINT, meta_problem

if TYPE_CHECKING:
    from openclaw_cli.sessions.store import SessionStore


def index_owners(index: dict[str, Any]) -> dict[str, tuple[str | None, str]]:
    """session id -> (key, status) from the index."""
    owners: dict[str, tuple[str | None, str]] = {}
    for key, entry in index["sessions"].items():
        owners[entry["sessionId"]] = (key, str(entry.get("status", "active")))
    for session_id, entry in index["archived"].items():
        key = entry.get("sessionKey") if isinstance(entry, dict) else None
        owners[session_id] = (key if isinstance(key, str) else None, "archived")
    return owners


def check_index_entries(
    store: SessionStore,
    index: dict[str, Any],
    on_disk: list[str],
    metas: dict[str, dict[str, Any]],
    findings: list[Finding],
    fix: bool,
) -> None:
    owners = index_owners(index)
    for session_id in sorted(set(owners) - set(on_disk)):
        message = f"index entry {session_id} ({owners[session_id][0]}) has no session directory"
        fixed = fix and _drop_entry(store, session_id)
        findings.append(
            Finding("sessions.index-missing", "error", message, FIX_HINT, str(store.root / session_id), fixed)
        )
    for session_id in sorted(set(on_disk) - set(owners)):
        message = f"session directory {session_id} is not in sessions.json"
        outcome = _add_entry(store, metas[session_id]) if fix and session_id in metas else None
        if outcome == "removed":
            message += "; it held no message and its key has a newer session, so it was removed"
        findings.append(
            Finding(
                "sessions.index-extra",
                "warning",
                message,
                FIX_HINT,
                str(store.root / session_id),
                outcome is not None,
            )
        )


def _drop_entry(store: SessionStore, session_id: str) -> bool:
    def drop(index: dict[str, Any]) -> None:
        if (store.root / session_id).is_dir():
            return  # created meanwhile (directories appear before their index entry)
        index["archived"].pop(session_id, None)
        for key, entry in list(index["sessions"].items()):
            if entry.get("sessionId") == session_id:
                del index["sessions"][key]

    store.update_index(drop)
    return True


def _add_entry(store: SessionStore, meta: dict[str, Any]) -> str:
    """Put a directory left out of the index (a crash between its creation and the index update) back.

    Under the key lock no writer is creating a session for that key, so a directory still missing
    from the index then is a genuine leftover: it becomes current only if the key has no current
    session, else it is filed as archived. Never two current sessions for one key. A leftover that
    holds no message while its key has moved on to another session is removed instead: it holds no
    data, and filing it would list an empty archived session the user never had.
    Returns what was done: "filed" or "removed".
    """
    key = meta.get("sessionKey")
    session_id = meta["sessionId"]
    key_lock = store.key_lock(key).hold() if isinstance(key, str) else contextlib.nullcontext()
    outcome = "filed"
    with key_lock:

        def add(index: dict[str, Any]) -> None:
            nonlocal outcome
            if session_id in index_owners(index):
                return
            fresh, _ = meta_problem(store.root / session_id / META_FILENAME)
            current = fresh or meta
            if _superseded_and_empty(store.root / session_id, index, current):
                outcome = "removed"
                return
            _file_entry(index, current)

        store.update_index(add)
        if outcome == "removed" and not _remove_if_still_empty(store, session_id):
            outcome = "filed"  # a message arrived by session id meanwhile: keep it, archived
            store.update_index(lambda index: _file_entry(index, meta))
    return outcome


def _superseded_and_empty(directory: Path, index: dict[str, Any], meta: dict[str, Any]) -> bool:
    key = meta.get("sessionKey")
    current = index["sessions"].get(key) if isinstance(key, str) else None
    if current is None or current.get("sessionId") == directory.name:
        return False
    return not _holds_messages(directory)


def _holds_messages(directory: Path) -> bool:
    messages = transcript_file(directory / MESSAGES_FILENAME)  # plain, or compressed (sessions/archive.py)
    return messages.exists() and messages.stat().st_size > 0


def _remove_if_still_empty(store: SessionStore, session_id: str) -> bool:
    """Remove a session directory if it still holds no message, under its session lock (appends by
    session id take it). Renamed to the half-built prefix first: an interrupted removal leaves a
    leftover that check.py's leftover check removes, never a session directory without its meta.json."""
    directory = store.root / session_id
    with store.session_lock(session_id).hold():
        if _holds_messages(directory):
            return False
        doomed = store.root / f"{NEW_PREFIX}{session_id}"
        directory.rename(doomed)
    shutil.rmtree(doomed, ignore_errors=True)
    return True


def _file_entry(index: dict[str, Any], meta: dict[str, Any]) -> None:
    key = meta.get("sessionKey")
    status = meta.get("status", "archived")
    stamp = meta.get("lastActiveAt") or meta.get("createdAt")
    if isinstance(key, str) and status != "archived" and key not in index["sessions"]:
        index["sessions"][key] = {"sessionId": meta["sessionId"], "status": status, "updatedAt": stamp}
    else:
        entry = {"sessionKey": key, "status": "archived", "updatedAt": stamp}
        index["archived"][meta["sessionId"]] = entry


def rebuilt_index(metas: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """sessions.json from the meta of every session directory: per key, the newest unarchived is current."""
    rebuilt = index_file.empty_index()
    rebuilt["generation"] = int(time.time() * 1000)  # above any generation a cached reader may hold
    by_age = sorted(metas.values(), key=lambda m: str(m.get("createdAt") or ""), reverse=True)
    for meta in by_age:
        _file_entry(rebuilt, meta)
    return rebuilt
