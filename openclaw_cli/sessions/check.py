"""`openclaw doctor` checks for sessions: index vs directories, damaged lines, meta, stale locks.

With fix=True, sessions.json and meta.json are rebuilt from the session directories and their messages.
Nothing is deleted: a damaged file is moved aside as `<name>.corrupt-<timestamp>` first. Only lock files
(which hold no data) of sessions that no longer exist are removed.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openclaw_cli.errors import InvalidInput, StoreError
from openclaw_cli.findings import Finding
from openclaw_cli.fsutil import atomic_write_json
from openclaw_cli.paths import Home
from openclaw_cli.sessions import index as index_file
from openclaw_cli.sessions.ids import is_session_id
from openclaw_cli.sessions.jsonl import read_messages
from openclaw_cli.sessions.keys import parse_key
from openclaw_cli.sessions.locks import is_held_elsewhere
from openclaw_cli.sessions.store import (
    LOCKS_DIRNAME,
    MESSAGES_FILENAME,
    META_FILENAME,
    new_meta,
    read_meta_file,
)
from openclaw_cli.sessions.writer import meta_counters

FIX_HINT = "run `openclaw doctor --fix`"


def check_sessions(home: Home, agent: str, fix: bool) -> list[Finding]:
    """Findings about the sessions of `agent`; with `fix`, repair what can be repaired without loss."""
    root = home.sessions_dir(agent)
    if not root.is_dir():
        return [Finding("sessions", "ok", f"no sessions yet for agent {agent}", path=str(root))]
    findings: list[Finding] = []
    index = _check_index(root, findings, fix)
    owners = _index_owners(index) if index is not None else {}
    on_disk = sorted(p.name for p in root.iterdir() if p.is_dir() and is_session_id(p.name))
    metas: dict[str, dict[str, Any]] = {}
    for session_id in on_disk:
        directory = root / session_id
        _check_messages(directory, findings)
        meta = _check_meta(directory, agent, owners.get(session_id), findings, fix)
        if meta is not None:
            metas[session_id] = meta
    mismatched = _check_index_entries(root, index, on_disk, findings, fix)
    if fix and (index is None or mismatched):
        _write_rebuilt_index(root, index, metas)
    _check_locks(root, set(on_disk), findings, fix)
    if not any(f.severity != "ok" for f in findings):
        findings.append(
            Finding("sessions", "ok", f"{len(on_disk)} session(s) of agent {agent} are consistent")
        )
    return findings


def move_aside(path: Path) -> Path:
    """Rename a damaged file to `<name>.corrupt-<UTC timestamp>` (kept for inspection, never deleted)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    path.rename(target)
    return target


def _check_index(root: Path, findings: list[Finding], fix: bool) -> dict[str, Any] | None:
    path = root / index_file.INDEX_FILENAME
    try:
        return index_file.read_index(path)
    except StoreError as exc:
        moved = move_aside(path) if fix and path.exists() else None
        detail = f"; moved aside to {moved.name} and rebuilt" if moved else ""
        findings.append(
            Finding("sessions.index", "error", exc.message + detail, FIX_HINT, str(path), fixed=fix)
        )
        return None


def _index_owners(index: dict[str, Any]) -> dict[str, tuple[str | None, str]]:
    """session id -> (key, status) from the index."""
    owners: dict[str, tuple[str | None, str]] = {}
    for key, entry in index["sessions"].items():
        owners[entry["sessionId"]] = (key, str(entry.get("status", "active")))
    for session_id, entry in index["archived"].items():
        key = entry.get("sessionKey") if isinstance(entry, dict) else None
        owners[session_id] = (key if isinstance(key, str) else None, "archived")
    return owners


def _check_messages(directory: Path, findings: list[Finding]) -> None:
    path = directory / MESSAGES_FILENAME
    for problem in read_messages(path).problems:
        check = "sessions.torn-line" if problem.torn else "sessions.malformed-line"
        findings.append(
            Finding(
                check,
                "warning",
                f"{path} line {problem.line}: {'torn last line' if problem.torn else 'malformed line'} "
                f"({problem.reason}); it is skipped on read",
                "messages.jsonl is append-only and is not rewritten; the line is ignored by every reader",
                str(path),
            )
        )


def _check_meta(
    directory: Path, agent: str, owner: tuple[str | None, str] | None, findings: list[Finding], fix: bool
) -> dict[str, Any] | None:
    path = directory / META_FILENAME
    try:
        meta = read_meta_file(path)
        if meta.get("sessionId") != directory.name:
            raise StoreError(f"{path}: sessionId {meta.get('sessionId')!r} does not match the directory")
        return meta
    except StoreError as exc:
        reason = exc.message
    except Exception as exc:  # noqa: BLE001 - NotFound and anything odd: the meta is unusable either way
        reason = f"{path}: missing or unreadable ({exc})"
    if not fix:
        findings.append(Finding("sessions.meta", "error", reason, FIX_HINT, str(path)))
        return None
    moved = move_aside(path) if path.exists() else None
    meta = rebuild_meta(directory, agent, owner)
    atomic_write_json(path, meta)
    detail = f" (old file kept as {moved.name})" if moved else ""
    findings.append(
        Finding("sessions.meta", "error", f"{reason}; rebuilt from messages{detail}", None, str(path), True)
    )
    return meta


def rebuild_meta(directory: Path, agent: str, owner: tuple[str | None, str] | None) -> dict[str, Any]:
    """meta.json recomputed from messages.jsonl and what the index knows about the session."""
    result = read_messages(directory / MESSAGES_FILENAME)
    key_text, status = owner if owner is not None else (None, "archived")
    created = _first_ts(result.messages) or datetime.fromtimestamp(directory.stat().st_mtime, UTC)
    try:
        key = parse_key(key_text) if key_text else None
    except InvalidInput:
        key = None
    if key is not None:
        meta = new_meta(directory.name, key, created)
    else:
        meta = new_meta(directory.name, parse_key(f"agent:{agent.lower()}:main"), created)
        meta["sessionKey"] = None
    meta.update(meta_counters(result.messages, base={"lastActiveAt": meta["createdAt"]}))
    meta["status"] = status if key is not None else "archived"
    messages_path = directory / MESSAGES_FILENAME
    meta["messagesBytes"] = messages_path.stat().st_size if messages_path.exists() else 0
    return meta


def _first_ts(messages: list[dict[str, Any]]) -> datetime | None:
    for message in messages:
        try:
            moment = datetime.fromisoformat(str(message.get("ts")))
        except ValueError:
            continue
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return None


def _check_index_entries(
    root: Path, index: dict[str, Any] | None, on_disk: list[str], findings: list[Finding], fix: bool
) -> bool:
    if index is None:
        return True
    owners = _index_owners(index)
    mismatched = False
    for session_id in sorted(set(owners) - set(on_disk)):
        mismatched = True
        message = f"index entry {session_id} ({owners[session_id][0]}) has no session directory"
        findings.append(
            Finding("sessions.index-missing", "error", message, FIX_HINT, str(root / session_id), fix)
        )
    for session_id in sorted(set(on_disk) - set(owners)):
        mismatched = True
        message = f"session directory {session_id} is not in sessions.json"
        findings.append(
            Finding("sessions.index-extra", "warning", message, FIX_HINT, str(root / session_id), fix)
        )
    return mismatched


def _write_rebuilt_index(root: Path, old: dict[str, Any] | None, metas: dict[str, dict[str, Any]]) -> None:
    """sessions.json from the meta of every session directory: per key, the newest unarchived is current."""
    rebuilt = index_file.empty_index()
    rebuilt["generation"] = int((old or {}).get("generation") or 0) + 1
    by_age = sorted(metas.values(), key=lambda m: str(m.get("createdAt") or ""), reverse=True)
    for meta in by_age:
        key = meta.get("sessionKey")
        status = meta.get("status", "archived")
        stamp = meta.get("lastActiveAt") or meta.get("createdAt")
        if isinstance(key, str) and status != "archived" and key not in rebuilt["sessions"]:
            rebuilt["sessions"][key] = {"sessionId": meta["sessionId"], "status": status, "updatedAt": stamp}
        else:
            entry = {"sessionKey": key, "status": "archived", "updatedAt": stamp}
            rebuilt["archived"][meta["sessionId"]] = entry
    atomic_write_json(root / index_file.INDEX_FILENAME, rebuilt)


def _check_locks(root: Path, sessions: set[str], findings: list[Finding], fix: bool) -> None:
    locks = root / LOCKS_DIRNAME
    if not locks.is_dir():
        return
    for path in sorted(locks.iterdir()):
        if not path.name.startswith("session-") or not path.name.endswith(".lock"):
            continue
        session_id = path.name[len("session-") : -len(".lock")]
        if session_id in sessions or is_held_elsewhere(path):
            continue
        if fix:
            path.unlink(missing_ok=True)
        message = f"stale lock file {path.name}: its session no longer exists"
        findings.append(Finding("sessions.stale-lock", "warning", message, FIX_HINT, str(path), fix))
