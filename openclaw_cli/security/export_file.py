"""`memory export --encrypt`: an export sealed under its own passphrase, readable by any home's import.

The first line names the format and carries the scrypt parameters, salt and file id (as base64 JSON);
every line of the plain export follows as one AES-256-GCM record (records.Sealer). A home's data key is
not used: an export is for moving memories to another home or keeping them elsewhere.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import BinaryIO

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.security.keyfile import SCRYPT_N, SCRYPT_P, SCRYPT_R, Kdf, derive_kek
from openclaw_cli.security.records import FILE_ID_BYTES, Sealer, TamperedRecord

MAGIC = b"OPENCLAW-SEALED-EXPORT "
FORMAT = b"scrypt+aes-256-gcm/1"


def is_sealed_export(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


class SealingWriter:
    """A binary file-like object that seals each complete line written to it into `out`."""

    def __init__(self, out: BinaryIO, passphrase: str, *, n: int = SCRYPT_N) -> None:
        kdf = Kdf("scrypt", n, SCRYPT_R, SCRYPT_P, os.urandom(16))
        self._sealer = Sealer(derive_kek(passphrase, kdf), os.urandom(FILE_ID_BYTES))
        params = {**kdf.to_dict(), "file": base64.b64encode(self._sealer.file_id).decode("ascii")}
        out.write(MAGIC + FORMAT + b" " + base64.b64encode(json.dumps(params).encode()) + b"\n")
        self._out = out
        self._pending = b""

    def write(self, data: bytes) -> int:
        self._pending += data
        *lines, self._pending = self._pending.split(b"\n")
        for line in lines:
            self._out.write(self._sealer.seal(line))
        return len(data)

    def flush(self) -> None:
        self._out.flush()

    def finish(self) -> None:
        """Seal a last line written without its newline; the plain export then ends in one."""
        if self._pending:
            self._out.write(self._sealer.seal(self._pending))
            self._pending = b""
        self._out.flush()


def unseal_export(source: Path, passphrase: str, out: BinaryIO) -> None:
    """Write the plain export sealed in `source` to `out`; a wrong passphrase or a changed record is an
    InvalidInput / TamperedRecord naming the file, before anything is imported."""
    with source.open("rb") as handle:
        header = handle.readline()
        try:
            magic, fmt, params_b64 = header.rstrip(b"\n").split(b" ")
            params = json.loads(base64.b64decode(params_b64))
            kdf = Kdf(
                "scrypt",
                int(params["n"]),
                int(params["r"]),
                int(params["p"]),
                base64.b64decode(params["salt"]),
            )
            file_id = base64.b64decode(params["file"])
        except (ValueError, KeyError, TypeError):
            raise InvalidInput(f"{source}: damaged encrypted export header", hint="export it again") from None
        if fmt != FORMAT:
            raise InvalidInput(f"{source}: unknown encrypted export format {fmt!r}", hint="upgrade openclaw")
        sealer = Sealer(derive_kek(passphrase, kdf), file_id)
        for number, line in enumerate(handle, start=2):
            if not line.endswith(b"\n"):
                raise TamperedRecord(f"{source} line {number}: cut short", hint="export it again")
            try:
                out.write(sealer.open(line.rstrip(b"\n"), f"{source} line {number}") + b"\n")
            except TamperedRecord:
                if number == 2:  # the first record: far likelier a wrong passphrase than damage
                    raise InvalidInput(
                        f"{source}: wrong passphrase for this encrypted export (or its first record is damaged)",
                        hint="set OPENCLAW_EXPORT_PASSPHRASE (or OPENCLAW_PASSPHRASE) to the one it was "
                        "exported with",
                    ) from None
                raise
