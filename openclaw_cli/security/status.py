"""`security status`: what of a home is encrypted, with which cipher and KDF. Needs no passphrase."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openclaw_cli.security import records
from openclaw_cli.security.convert import home_files, last_event
from openclaw_cli.security.database import is_plain_sqlite
from openclaw_cli.security.keyfile import is_encrypted, key_path, read_keyfile
from openclaw_cli.security.unlock import unlock_state

WORKSPACE_NOTE = (
    "workspace Markdown (MEMORY.md, daily logs) is sealed only with security.encryptWorkspace "
    "(then read and edit it with `openclaw memory notes`); otherwise it stays plain for any editor"
)
POSTGRES_NOTE = "a PostgreSQL backend's server data is the operator's: use disk or tablespace encryption"


def home_status(root: Path, run_dir: Path | None = None) -> dict[str, Any]:
    """What is encrypted; with `run_dir` (the key agents' socket directory) also until when it is unlocked."""
    counts: dict[str, dict[str, int]] = {}
    plain_files: list[str] = []
    for kind, path in home_files(root):
        try:
            if path.stat().st_size == 0:
                continue
        except OSError:
            continue
        sealed = not is_plain_sqlite(path) if kind == "database" else records.is_sealed_file(path)
        bucket = counts.setdefault(kind + "s", {"encrypted": 0, "plain": 0})
        bucket["encrypted" if sealed else "plain"] += 1
        if not sealed:
            plain_files.append(str(path.relative_to(root)))
    from openclaw_cli.security import workspace_file
    from openclaw_cli.security.convert import workspace_dirs

    for directory in workspace_dirs(root, []):
        for path in workspace_file.files_under(directory):
            sealed = records.is_sealed_file(path)
            bucket = counts.setdefault("workspace notes", {"encrypted": 0, "plain": 0})
            bucket["encrypted" if sealed else "plain"] += 1
    event = last_event(root)
    interrupted = event is not None and event.get("event") != "complete"
    result: dict[str, Any] = {
        "home": str(root),
        "encrypted": is_encrypted(root),
        "files": counts,
        "plainFiles": plain_files[:50],
        "interrupted": interrupted,
        "lastRun": None if event is None else event.get("mode") or event.get("event"),
        "notes": [WORKSPACE_NOTE, POSTGRES_NOTE],
    }
    if result["encrypted"]:
        keyfile = read_keyfile(root)
        result["keyFile"] = str(key_path(root))
        result["databaseCipher"] = f"SQLite3 Multiple Ciphers {keyfile.db_cipher} (ChaCha20-Poly1305)"
        result["fileCipher"] = f"{keyfile.file_cipher}, one record per line"
        result["kdf"] = {k: v for k, v in keyfile.kdf.to_dict().items() if k != "salt"}
        held = None if run_dir is None else unlock_state(root, run_dir)
        result["unlockedUntil"] = None if held is None else held["expires"]
    return result
