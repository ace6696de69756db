"""`security init` and `security decrypt`: every file of a home turned sealed (or back), in place, resumable.

Each file is converted on a private copy that replaces the original in one rename, and a file already in
the wanted format is skipped, so a run killed anywhere leaves every file whole in one format or the other,
and running it again finishes the job. The key file is written first by init and removed last by decrypt:
while it exists the home is encrypted, and readers take each file by its own header (records.py,
database.py), so a half-converted home reads whole. `security/convert.journal` is an append-only log of
what was done, for `security status` and for the operator; correctness does not depend on it.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from openclaw_cli.core.errors import StoreError
from openclaw_cli.core.fsutil import FILE_MODE, atomic_write_bytes, ensure_private_dir, fsync_dir
from openclaw_cli.security import records
from openclaw_cli.security.database import apply_key, is_plain_sqlite, rekey_file
from openclaw_cli.security.files import MEDIA_DIR, SEALED_DOCUMENTS, SEALED_LINES
from openclaw_cli.security.keyfile import (
    SCRYPT_N,
    SECURITY_DIR,
    KeyFile,
    is_encrypted,
    key_path,
    keyfile_bytes,
    new_data_key,
    read_keyfile,
    unwrap,
    wrap,
)
from openclaw_cli.security.unlocked import forget, remember

JOURNAL = "convert.journal"
TMP_SUFFIX = ".sealing.tmp"
# Derived from packaged data (a dictionary, a model's pieces): nobody's words, and rebuilt at will.
# cache/words holds this home's words (word_table.py) and is converted like the rest.
_PACKAGED_CACHE = "cache"
_PERSONAL_CACHE = ("cache", "words")

# Called after each converted file with its path: the tests' way to stop a run at a chosen point.
Step = Callable[[Path], None]


@dataclass
class Converted:
    databases: list[str] = field(default_factory=list)
    documents: list[str] = field(default_factory=list)
    transcripts: list[str] = field(default_factory=list)
    workspace: list[str] = field(default_factory=list)
    already: int = 0

    def to_dict(self) -> dict[str, object]:
        return {
            "databases": self.databases,
            "documents": self.documents,
            "jsonl": self.transcripts,
            "workspace": self.workspace,
            "alreadyDone": self.already,
        }


def write_keyfile(root: Path, keyfile: KeyFile) -> None:
    """Atomic replace: a crash leaves the old key file or the new one, each of which opens the home."""
    atomic_write_bytes(key_path(root), keyfile_bytes(keyfile))


def journal_path(root: Path) -> Path:
    return root / SECURITY_DIR / JOURNAL


def _log(root: Path, event: str, **fields: object) -> None:
    """One line appended (O_APPEND, fsynced) to the conversion journal."""
    path = journal_path(root)
    ensure_private_dir(path.parent)
    line = json.dumps({"at": time.time(), "event": event, **fields}) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
    try:
        os.write(fd, line.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def last_event(root: Path) -> dict[str, object] | None:
    """The journal's last whole line: `begin` without `complete` after it means a run was cut short."""
    try:
        data = journal_path(root).read_bytes()
    except FileNotFoundError:
        return None
    for line in reversed(data.split(b"\n")):
        if line.strip():
            try:
                value = json.loads(line)
            except ValueError:
                continue  # a line torn by a kill
            return value if isinstance(value, dict) else None
    return None


# --- finding the files --------------------------------------------------------------------------------


def _skipped(rel: Path) -> bool:
    parts = rel.parts
    if parts[:1] == (SECURITY_DIR,):
        return True
    return parts[:1] == (_PACKAGED_CACHE,) and parts[:2] != _PERSONAL_CACHE


def home_files(root: Path) -> Iterator[tuple[str, Path]]:
    """("database" | "document" | "transcript" (any JSONL), path) for every file init and decrypt convert."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        here = Path(dirpath)
        for name in sorted(filenames):
            path = here / name
            rel = path.relative_to(root)
            if _skipped(rel) or name.endswith(TMP_SUFFIX) or not path.is_file() or path.is_symlink():
                continue
            if name in SEALED_DOCUMENTS:
                yield "document", path
            elif rel.parts[0] == MEDIA_DIR and name not in SEALED_LINES and not name.startswith("."):
                yield "document", path  # a media file: sealed whole, like a document
            elif name in SEALED_LINES:
                yield "transcript", path
            elif name.endswith((".sqlite", ".db")) and not name.endswith(("-wal", "-shm", "-journal")):
                yield "database", path


def _clean_leftovers(root: Path) -> None:
    """Copies a killed run left half-made: the originals they were made from are whole."""
    for dirpath, _dirs, filenames in os.walk(root):
        for name in filenames:
            if name.endswith(TMP_SUFFIX) or name.endswith(TMP_SUFFIX + "-journal"):
                Path(dirpath, name).unlink(missing_ok=True)


# --- one file ---------------------------------------------------------------------------------------


def _fold_wal(path: Path, key: bytes | None) -> None:
    """Bring the -wal's pages into the file and leave rollback-journal mode, so the file alone is the
    database (the app turns WAL back on at its next open)."""
    import apsw

    conn = apsw.Connection(str(path))
    try:
        conn.setbusytimeout(5000)
        if key is not None:
            apply_key(conn, key)
        conn.execute("PRAGMA journal_mode = DELETE")
    except apsw.BusyError as exc:
        raise StoreError(
            f"{path} is in use by another process",
            hint="stop the gateway and other openclaw commands, then run this again",
        ) from exc
    finally:
        conn.close()


def _convert_database(path: Path, old: bytes | None, new: bytes | None) -> None:
    _fold_wal(path, old)
    tmp = path.with_name(f".{path.name}{TMP_SUFFIX}")
    tmp.unlink(missing_ok=True)
    shutil.copyfile(path, tmp)
    os.chmod(tmp, FILE_MODE)
    rekey_file(tmp, old, new)
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def _drop_checkpoint(meta_path: Path, key: bytes | None) -> None:
    """meta.json's messagesBytes is an offset into messages.jsonl, which a conversion rewrites: drop it
    (readers then count the file from its start) before the rewrite, sealed or plain as asked."""
    try:
        data = meta_path.read_bytes()
        meta = json.loads(records.open_document(data, key, meta_path))
    except (OSError, ValueError):
        return
    if isinstance(meta, dict) and "messagesBytes" in meta:
        meta.pop("messagesBytes")
        text = (json.dumps(meta, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
        sealed = records.is_sealed(data)
        atomic_write_bytes(meta_path, records.seal_document(text, key) if sealed and key else text)


def _convert_lines(path: Path, key: bytes, seal: bool) -> None:
    data = path.read_bytes()
    _drop_checkpoint(path.parent / "meta.json", key)
    if seal:
        atomic_write_bytes(path, records.seal_lines(data, key))
    else:
        atomic_write_bytes(path, records.unseal_lines(data, key, path))


def _convert_document(path: Path, key: bytes, seal: bool) -> None:
    data = path.read_bytes()
    if seal:
        atomic_write_bytes(path, records.seal_document(data, key))
    else:
        atomic_write_bytes(path, records.open_document(data, key, path))


def _is_done(kind: str, path: Path, seal: bool) -> bool:
    if kind == "database":
        try:
            empty = path.stat().st_size == 0
        except OSError:
            return True
        return empty or (is_plain_sqlite(path) != seal)
    return records.is_sealed_file(path) == seal or path.stat().st_size == 0


def workspace_dirs(root: Path, extra: list[Path]) -> list[Path]:
    """Every agent's workspace in the home, and the configured ones outside it (`extra`)."""
    found = sorted(p for p in (root / "agents").glob("*/workspace") if p.is_dir() and not p.is_symlink())
    return found + [p for p in extra if p.is_dir() and p not in found]


def _convert_workspace(
    root: Path, key: bytes, seal: bool, dirs: list[Path], done: Converted, step: Step | None
) -> None:
    """security.encryptWorkspace: MEMORY.md, SHARED.md and the daily logs sealed (or opened) one by one."""
    from openclaw_cli.security import workspace_file

    for directory in dirs:
        for path in workspace_file.files_under(directory):
            if not workspace_file.convert(path, key, seal):
                done.already += 1
                continue
            rel = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
            done.workspace.append(rel)
            _log(root, "done", path=rel)
            if step is not None:
                step(path)


def _run(root: Path, key: bytes, seal: bool, step: Step | None) -> Converted:
    done = Converted()
    _clean_leftovers(root)
    _log(root, "begin", mode="init" if seal else "decrypt")
    for kind, path in list(home_files(root)):
        if _is_done(kind, path, seal):
            done.already += 1
            continue
        rel = str(path.relative_to(root))
        if kind == "database":
            _convert_database(path, None if seal else key, key if seal else None)
            done.databases.append(rel)
        elif kind == "document":
            _convert_document(path, key, seal)
            done.documents.append(rel)
        else:
            _convert_lines(path, key, seal)
            done.transcripts.append(rel)
        _log(root, "done", path=rel)
        if step is not None:
            step(path)
    return done


# --- the commands' cores -----------------------------------------------------------------------------


def init_home(
    root: Path,
    passphrase: str,
    *,
    kdf_n: int = SCRYPT_N,
    step: Step | None = None,
    workspaces: list[Path] | None = None,
) -> Converted:
    """Turn encryption on for the home at `root` (or finish a run that was cut short). `workspaces`
    (security.encryptWorkspace on): the configured workspaces outside the home, whose Markdown is sealed
    with every workspace in the home; None leaves all workspace Markdown plain.

    `kdf_n` is scrypt's cost: the CLI always uses SCRYPT_N; tests pass 2**10 for homes whose unwrap
    they do not measure (the cost is stored in the key file, so every later unwrap uses it)."""
    ensure_private_dir(root)
    if is_encrypted(root):
        key = unwrap(read_keyfile(root), passphrase)  # a rerun: the same passphrase, the same key
    else:
        key = new_data_key()
        write_keyfile(root, wrap(key, passphrase, n=kdf_n))
    remember(root, key)
    done = _run(root, key, True, step)
    if workspaces is not None:
        _convert_workspace(root, key, True, workspace_dirs(root, workspaces), done, step)
    _log(root, "complete", mode="init")
    return done


def decrypt_home(
    root: Path, passphrase: str, *, step: Step | None = None, workspaces: list[Path] | None = None
) -> Converted:
    """Turn encryption off: every file back to plain (sealed workspace Markdown too, in the home and in
    `workspaces` outside it, whatever the setting), then the key file removed (last)."""
    if not is_encrypted(root):
        raise StoreError(f"the home {root} is not encrypted", hint="see `openclaw security status`")
    key = unwrap(read_keyfile(root), passphrase)
    remember(root, key)
    done = _run(root, key, False, step)
    _convert_workspace(root, key, False, workspace_dirs(root, workspaces or []), done, step)
    key_path(root).unlink()
    fsync_dir(key_path(root).parent)
    _log(root, "complete", mode="decrypt")
    forget(root)
    return done


def rekey_home(root: Path, old: str, new: str) -> None:
    """A new passphrase: the same data key wrapped again, the key file replaced in one rename."""
    from openclaw_cli.security.keyfile import rewrapped

    if not is_encrypted(root):
        raise StoreError(f"the home {root} is not encrypted", hint="run `openclaw security init` first")
    keyfile = read_keyfile(root)
    key = unwrap(keyfile, old)
    write_keyfile(root, rewrapped(keyfile, key, new))
