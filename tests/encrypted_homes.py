"""Homes encrypted for the suite's privacy, purge and salvage tests (issue 52): the same tests, plain and
encrypted, through one `home_kind` parameter.

Cheap by construction: the key is wrapped with scrypt at N=2**10 (convert.init_home's `kdf_n`, the knob
tests use; the CLI always uses 2**17), so each process unwraps it in about a millisecond from the
OPENCLAW_PASSPHRASE that base_env adds for these homes, and no key agent (one more process per home, and
per copy of a home, to start and stop) is needed. A home is known by its key file's salt, so a copy of an
encrypted home (shutil.copytree) is known too; other encrypted homes (tests/test_security*.py) are not,
and get no passphrase from here.
"""

from __future__ import annotations

import json
from pathlib import Path

from openclaw_cli.security import convert, keyfile, unlocked

PASSPHRASE = "suite passphrase, not a secret"
TEST_KDF_N = 2**10
KINDS = ["plain", "encrypted"]
_salts: set[str] = set()


def _salt(root: Path) -> str | None:
    try:
        return str(json.loads(keyfile.key_path(root).read_bytes())["kdf"]["salt"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _provide(root: Path) -> str:
    if _salt(root) in _salts:
        return PASSPHRASE
    raise keyfile.PassphraseMissing(f"{root} is not a home of tests/encrypted_homes.py")


def encrypt(home: Path) -> Path:
    """Turn encryption on for `home` (empty or filled) and let this process and its children open it."""
    convert.init_home(home, PASSPHRASE, kdf_n=TEST_KDF_N)
    unlocked.forget()
    salt = _salt(home)
    assert salt is not None
    _salts.add(salt)
    unlocked.set_provider(_provide)  # in-process readers of the test (open_db, read_lines) unwrap too
    return home


def prepare(home: Path, kind: str) -> Path:
    """`home` created 0700, and encrypted when `kind` is "encrypted", before anything is written to it."""
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    return encrypt(home) if kind == "encrypted" else home


def env_for(home: Path) -> dict[str, str]:
    """What base_env adds for a home: the passphrase of a home encrypted here, nothing otherwise."""
    if not _salts or not keyfile.key_path(home).is_file():
        return {}
    return {"OPENCLAW_PASSPHRASE": PASSPHRASE} if _salt(home) in _salts else {}


def is_encrypted(home: Path) -> bool:
    return keyfile.is_encrypted(home)


def _plain_database(path: Path, key: bytes, scratch: Path) -> bytes:
    """The database at `path` with its -wal folded in, every page decrypted (free pages too: a purge's
    secure delete is checked on them as on a plain file), from a copy; the original is not touched."""
    import shutil

    copy = scratch / path.name
    for suffix in ("", "-wal"):
        if Path(f"{path}{suffix}").exists():
            shutil.copyfile(f"{path}{suffix}", f"{copy}{suffix}")
    convert._convert_database(copy, key, None)
    return copy.read_bytes()


def plain_bytes(home: Path, path: Path, scratch: Path) -> bytes:
    """What the file at `path` of `home` holds, decrypted: a sealed file's plaintext, an encrypted
    database's pages; other files as they are."""
    from openclaw_cli.security import records, workspace_file
    from openclaw_cli.security.database import is_plain_sqlite
    from openclaw_cli.security.files import read_lines

    data = path.read_bytes()
    if records.is_sealed(data):
        if path.suffix == ".md":
            return workspace_file.read(path)
        return read_lines(path)  # JSONL line by line; a sealed document is its one record the same way
    name = path.name
    if name.endswith((".sqlite", ".db")) and data and not is_plain_sqlite(path):
        return _plain_database(path, unlocked.key_for_home(home), scratch)
    return data


def files_holding(home: Path, needle: bytes) -> list[str]:
    """Files of `home` whose bytes hold `needle`. In an encrypted home none may hold it on disk (checked
    here), and the files whose decrypted content holds it are returned: a test's expectations about what
    holds a person's words are then the same for both kinds of home. A -wal file is folded into its
    database (the database is named, not the -wal)."""
    import tempfile

    raw = sorted(
        str(p.relative_to(home)) for p in home.rglob("*") if p.is_file() and needle in p.read_bytes()
    )
    if not is_encrypted(home):
        return raw
    assert raw == [], f"{needle!r} readable on disk in an encrypted home: {raw}"
    found = []
    with tempfile.TemporaryDirectory() as scratch:
        for path in sorted(home.rglob("*")):
            if not path.is_file() or path.is_symlink() or path.name.endswith(("-wal", "-shm", "-journal")):
                continue
            if needle in plain_bytes(home, path, Path(scratch)):
                found.append(str(path.relative_to(home)))
    return found


def seal_workspace(home: Path) -> list[Path]:
    """Seal the main agent's workspace notes as `security init` does with security.encryptWorkspace on."""
    from openclaw_cli.security import workspace_file

    key = unlocked.key_for_home(home)
    sealed = []
    for path in workspace_file.files_under(home / "agents" / "main" / "workspace"):
        if workspace_file.convert(path, key, True):
            sealed.append(path)
    assert sealed, "no workspace notes to seal"
    return sealed
