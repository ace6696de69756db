"""`openclaw doctor` checks for sessions: index vs directories, damaged files, leftover locks.

With fix=True, sessions.json and meta.json are rebuilt from the session directories and their messages,
and a damaged context.json is set aside. Nothing holding data is deleted: a damaged file is moved aside
as `<name>.corrupt-<timestamp>` (context.json as `.damaged-<timestamp>`) first.
Repairs run while writers may be appending, so they take the writers' locks (key, then index or
session, the writers' order), re-read under the lock, and only then change anything. Lock files are
removed only when free (remove_if_free) and their session is settled. The index against the directories
(entries to drop, directories to file back, a rebuild) is index_repair.py's part.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openclaw_cli.core.errors import InvalidInput, NotFound, StoreError
from openclaw_cli.core.findings import Finding
from openclaw_cli.core.fsutil import atomic_write_json
from openclaw_cli.core.paths import Home
from openclaw_cli.security.files import read_document
from openclaw_cli.sessions import index as index_file
from openclaw_cli.sessions.archive import DamagedArchive, leftover_archive, transcript_file
from openclaw_cli.sessions.ids import is_session_id
from openclaw_cli.sessions.jsonl import read_messages
from openclaw_cli.sessions.keys import parse_key
from openclaw_cli.sessions.layout import (
    CONTEXT_FILENAME,
    LOCKS_DIRNAME,
    MESSAGES_FILENAME,
    META_FILENAME,
    NEW_PREFIX,
    new_meta,
)
from openclaw_cli.sessions.locks import remove_if_free
from openclaw_cli.sessions.meta_file import FIX_HINT, meta_problem, read_meta_file
from openclaw_cli.sessions.store import SessionStore
from openclaw_cli.sessions.upkeep.index_repair import check_index_entries, index_owners, rebuilt_index
from openclaw_cli.sessions.writer import meta_counters

LEFTOVER_AGE_S = 300  # a half-built session directory younger than this may still be being built


def check_sessions(home: Home, agent: str, fix: bool) -> list[Finding]:
    """Findings about the sessions of `agent`; with `fix`, repair what can be repaired without loss."""
    root = home.sessions_dir(agent)
    if not root.is_dir():
        return [Finding("sessions", "ok", f"no sessions yet for agent {agent}", path=str(root))]
    store = SessionStore(home, agent)
    findings: list[Finding] = []
    index = _check_index(root, findings)
    owners = index_owners(index) if index is not None else {}
    on_disk = _session_dirs(root)
    metas: dict[str, dict[str, Any]] = {}
    for session_id in on_disk:
        directory = root / session_id
        _check_messages(directory, findings)
        meta = _check_meta(store, directory, owners.get(session_id), findings, fix)
        if meta is not None:
            metas[session_id] = meta
        _check_context(store, directory, findings, fix)
    if index is None:
        if fix:
            findings[:] = [f for f in findings if f.check != "sessions.index"]  # replaced by the repair's
            _rebuild_index(store, findings)
    else:
        check_index_entries(store, index, on_disk, metas, findings, fix)
    _check_leftovers(root, findings, fix)
    _check_locks(store, findings, fix)
    store.close()
    if not any(f.severity != "ok" for f in findings):
        findings.append(
            Finding("sessions", "ok", f"{len(on_disk)} session(s) of agent {agent} are consistent")
        )
    return findings


def _session_dirs(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if is_session_id(p.name) and p.is_dir())


def move_aside(path: Path, label: str = "corrupt") -> Path:
    """Rename a damaged file to `<name>.<label>-<UTC timestamp>` (kept for inspection, never deleted)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = path.with_name(f"{path.name}.{label}-{stamp}")
    path.rename(target)
    return target


def _check_index(root: Path, findings: list[Finding]) -> dict[str, Any] | None:
    path = root / index_file.INDEX_FILENAME
    try:
        return index_file.read_index(path)
    except StoreError as exc:
        findings.append(Finding("sessions.index", "error", exc.message, FIX_HINT, str(path)))
        return None


def _rebuild_index(store: SessionStore, findings: list[Finding]) -> None:
    """Replace a damaged sessions.json, under the index lock, from the meta.json of every directory."""
    path = store.index_path
    with store.index_lock().hold():
        try:
            index_file.read_index(path)
            return  # repaired meanwhile
        except StoreError:
            pass
        moved = move_aside(path) if path.exists() or path.is_symlink() else None
        metas = {}
        for session_id in _session_dirs(store.root):
            with contextlib.suppress(StoreError, NotFound):
                metas[session_id] = read_meta_file(store.root / session_id / META_FILENAME)
        rebuilt = rebuilt_index(metas)
        atomic_write_json(path, rebuilt)
    detail = f"; moved aside to {moved.name}" if moved else ""
    message = f"damaged session index: rebuilt from {len(metas)} session director(ies){detail}"
    findings.append(Finding("sessions.index", "error", message, None, str(path), fixed=True))


def _check_messages(directory: Path, findings: list[Finding]) -> None:
    plain = directory / MESSAGES_FILENAME
    path = transcript_file(plain)  # the compressed archive of an archived session (sessions/archive.py)
    try:
        problems = read_messages(plain).problems
    except StoreError as exc:
        hint = "move it aside (`mv messages.jsonl messages.jsonl.bad`); the session then starts empty"
        hint = exc.hint if isinstance(exc, DamagedArchive) and exc.hint else hint
        findings.append(Finding("sessions.messages", "error", exc.message, hint, str(path)))
        return
    leftover = leftover_archive(plain)
    if leftover is not None:
        findings.append(
            Finding(
                "sessions.leftover-archive",
                "warning",
                f"{leftover}: an archive beside {plain.name} (compressing or restoring was cut short); "
                f"{plain.name} is the one read",
                "nothing to do: the next `openclaw session sweep` or message for the session replaces it",
                str(leftover),
            )
        )
    for problem in problems:
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
    store: SessionStore,
    directory: Path,
    owner: tuple[str | None, str] | None,
    findings: list[Finding],
    fix: bool,
) -> dict[str, Any] | None:
    path = directory / META_FILENAME
    meta, reason = meta_problem(path)
    if meta is not None:
        return meta
    if not fix:
        findings.append(Finding("sessions.meta", "error", reason, FIX_HINT, str(path)))
        return None
    with store.session_lock(directory.name).hold():  # writers rewrite meta.json under this lock
        meta, reason = meta_problem(path)
        if meta is not None:
            return meta  # rewritten meanwhile by a writer
        moved = move_aside(path) if path.exists() or path.is_symlink() else None
        meta = rebuild_meta(directory, store.agent_id, owner)
        atomic_write_json(path, meta)
    detail = f" (old file kept as {moved.name})" if moved else ""
    findings.append(
        Finding("sessions.meta", "error", f"{reason}; rebuilt from messages{detail}", None, str(path), True)
    )
    return meta


def _check_context(store: SessionStore, directory: Path, findings: list[Finding], fix: bool) -> None:
    """A damaged context.json blocks `session context`; --fix sets it aside (the summary is then unused)."""
    path = directory / CONTEXT_FILENAME
    if _context_ok(path):
        return
    message = f"{path}: damaged context.json (summary unreadable)"
    if not fix:
        findings.append(Finding("sessions.context", "error", message, FIX_HINT, str(path)))
        return
    with store.session_lock(directory.name).hold():
        if _context_ok(path):
            return
        moved = move_aside(path, "damaged")
    message += f"; set aside as {moved.name}, the session's context starts from its messages again"
    findings.append(Finding("sessions.context", "error", message, None, str(path), fixed=True))


def _context_ok(path: Path) -> bool:
    try:
        value = json.loads(read_document(path))  # sealed in an encrypted home
    except FileNotFoundError:
        return True  # a session without a summary yet
    except (OSError, ValueError):
        return False
    return isinstance(value, dict)


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


def _check_leftovers(root: Path, findings: list[Finding], fix: bool) -> None:
    """Half-built session directories (`.new-s-...`) left by a crash during creation hold no message."""
    now = time.time()
    for path in sorted(root.glob(f"{NEW_PREFIX}*")):
        with contextlib.suppress(FileNotFoundError):
            if now - path.stat().st_mtime < LEFTOVER_AGE_S:
                continue  # possibly still being built
            if fix:
                shutil.rmtree(path, ignore_errors=True)
            message = f"half-built session directory {path.name} left by an interrupted creation"
            findings.append(Finding("sessions.leftover", "warning", message, FIX_HINT, str(path), fix))


def _check_locks(store: SessionStore, findings: list[Finding], fix: bool) -> None:
    """Lock files of settled sessions and keys hold no data; remove those nobody holds (with --fix)."""
    locks = store.root / LOCKS_DIRNAME
    if not locks.is_dir():
        return
    try:
        index = index_file.read_index(store.index_path)
    except StoreError:
        return  # without the index, which keys are settled is unknown: leave every lock alone
    unsettled = _unsettled_lock_names(index)
    leftover = [p for p in sorted(locks.iterdir()) if _is_removable_name(p.name) and p.name not in unsettled]
    if not leftover:
        return
    removed = sum(1 for path in leftover if fix and _remove_settled(store, path))
    if fix:
        message = f"{removed} of {len(leftover)} unused lock file(s) removed (the others are in use)"
    else:
        message = f"{len(leftover)} lock file(s) of settled sessions or keys are left over"
    findings.append(Finding("sessions.stale-lock", "warning", message, FIX_HINT, str(locks), fix))


def _is_removable_name(name: str) -> bool:
    return name.endswith(".lock") and (name.startswith("session-") or name.startswith("key-"))


def _unsettled_lock_names(index: dict[str, Any]) -> set[str]:
    """Lock files of active keys and their sessions: kept even when free (they will be used again)."""
    names: set[str] = set()
    for key, entry in index["sessions"].items():
        if entry.get("status") == "dormant":
            continue
        names.add(key_lock_name(key))
        names.add(f"session-{entry['sessionId']}.lock")
    return names


def key_lock_name(key: str) -> str:
    return f"key-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:32]}.lock"


def _remove_settled(store: SessionStore, path: Path) -> bool:
    # Re-check against the index as it is now: a session may have been created since it was read.
    with contextlib.suppress(StoreError):
        if path.name in _unsettled_lock_names(index_file.read_index(store.index_path)):
            return False
    return remove_if_free(path)
