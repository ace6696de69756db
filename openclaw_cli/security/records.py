"""Files sealed with AES-256-GCM, one authenticated record per line.

An encrypted file starts with a header line naming the format and a random file id:

    OPENCLAW-SEALED aes-256-gcm/1 <file id, base64>\n

then one line per record: base64(12-byte nonce || ciphertext || 16-byte tag) and a newline. The file id
is each record's associated data, so a record moved in from another file fails its tag. An append is one
write of one whole line, as for plain JSONL, so a crash leaves at most a last line without its newline:
a torn record, dropped and reported exactly like a torn plain line. A complete line whose tag fails was
changed on disk, and is an error (TamperedRecord), never skipped in silence. A reader tells the two
formats apart by the header, so a home half-way through `security init` or `decrypt` reads whole.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openclaw_cli.core.errors import StoreError

MAGIC = b"OPENCLAW-SEALED "
FORMAT = b"aes-256-gcm/1"
NONCE_BYTES = 12
TAG_BYTES = 16
FILE_ID_BYTES = 16


class TamperedRecord(StoreError):
    """A complete encrypted record whose tag does not verify: changed or damaged on disk."""


def is_sealed(data: bytes) -> bool:
    return data.startswith(MAGIC)


def is_sealed_file(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return is_sealed(handle.read(len(MAGIC)))
    except OSError:
        return False


@dataclass(frozen=True)
class Sealer:
    """Seals and opens the records of one file (its id is the associated data)."""

    key: bytes
    file_id: bytes
    _aead: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # One AES key schedule per file, not per record: an append costs the seal itself (~5 us).
        object.__setattr__(self, "_aead", _aead(self.key))

    @classmethod
    def new(cls, key: bytes) -> Sealer:
        return cls(key, os.urandom(FILE_ID_BYTES))

    def header(self) -> bytes:
        return MAGIC + FORMAT + b" " + base64.b64encode(self.file_id) + b"\n"

    def seal(self, record: bytes) -> bytes:
        """One line (with its newline) holding `record` (without one)."""
        nonce = os.urandom(NONCE_BYTES)
        return base64.b64encode(nonce + self._aead.encrypt(nonce, record, self.file_id)) + b"\n"

    def open(self, line: bytes, where: str) -> bytes:
        from cryptography.exceptions import InvalidTag

        try:
            raw = base64.b64decode(line, validate=True)
        except (binascii.Error, ValueError):
            raise _tampered(where, "not a sealed record") from None
        if len(raw) < NONCE_BYTES + TAG_BYTES:
            raise _tampered(where, "too short for a sealed record")
        try:
            return self._aead.decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], self.file_id)
        except InvalidTag:
            raise _tampered(where, "its authentication tag does not verify") from None


def _aead(key: bytes) -> Any:
    """AES-GCM from the compiled core of `cryptography`, which the public module re-exports: importing it
    directly skips the public cipher modules' imports (~5-10 ms of a short process such as `session
    append` on an encrypted home, measured). The public import stays the fallback."""
    try:
        from cryptography.hazmat.bindings._rust import openssl as rust_openssl

        aesgcm = rust_openssl.aead.AESGCM
    except (ImportError, AttributeError):
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM as aesgcm  # noqa: N813
    return aesgcm(key)


def _tampered(where: str, why: str) -> TamperedRecord:
    return TamperedRecord(
        f"{where}: encrypted record was changed or damaged on disk ({why}); nothing was read from it",
        hint="restore the file from a backup; `openclaw doctor` lists the others",
    )


def read_header(data: bytes, key: bytes, path: Path) -> tuple[Sealer, int]:
    """The sealer of a sealed file's content, and the offset of its first record."""
    end = data.find(b"\n")
    if end == -1:
        raise TamperedRecord(
            f"{path}: the encrypted file's header is cut short", hint="restore it from a backup"
        )
    parts = data[:end].split(b" ")
    if len(parts) != 3 or parts[1] != FORMAT:
        raise TamperedRecord(f"{path}: unknown encrypted format {data[:end][:60]!r}", hint="upgrade openclaw")
    try:
        file_id = base64.b64decode(parts[2], validate=True)
    except (binascii.Error, ValueError):
        raise TamperedRecord(
            f"{path}: damaged encrypted file header", hint="restore it from a backup"
        ) from None
    return Sealer(key, file_id), end + 1


def open_lines(data: bytes, key: bytes, path: Path) -> Iterator[tuple[int, bytes, bool]]:
    """(line number, plaintext record, complete) for each record of sealed `data`.

    A torn last line (no newline) yields (number, b"", False) without being decrypted: it is never
    authentic, and callers drop it as they drop a torn plain line. Line numbers count the header.
    """
    sealer, start = read_header(data, key, path)
    number = 2
    size = len(data)
    while start < size:
        end = data.find(b"\n", start)
        if end == -1:
            yield number, b"", False
            return
        line = data[start:end]
        if line.strip():
            yield number, sealer.open(line, f"{path} line {number}"), True
        number += 1
        start = end + 1


def seal_document(payload: bytes, key: bytes) -> bytes:
    """A whole file (meta.json, sessions.json, ...) as a header and one record."""
    sealer = Sealer.new(key)
    return sealer.header() + sealer.seal(payload)


def open_document(data: bytes, key: bytes | None, path: Path) -> bytes:
    """The plaintext of a whole file, sealed or plain. A sealed one without a key is an error."""
    if not is_sealed(data):
        return data
    if key is None:
        raise StoreError(
            f"{path} is encrypted but its home has no key file", hint="restore security/datakey.json"
        )
    records = list(open_lines(data, key, path))
    if len(records) != 1 or not records[0][2]:
        raise TamperedRecord(f"{path}: encrypted document is cut short", hint="restore it from a backup")
    return records[0][1]


def seal_lines(plain: bytes, key: bytes) -> bytes:
    """A plain JSONL file's content as a sealed one; a torn last line stays torn (empty and unsealed)."""
    sealer = Sealer.new(key)
    out = [sealer.header()]
    lines = plain.split(b"\n")
    for line in lines[:-1]:
        if line.strip():
            out.append(sealer.seal(line))
    return b"".join(out)


def unseal_lines(data: bytes, key: bytes, path: Path) -> bytes:
    """A sealed JSONL file's content as plain JSONL (a torn record is dropped)."""
    return b"".join(record + b"\n" for _, record, complete in open_lines(data, key, path) if complete)
