"""The wrapped data key: scrypt turns the passphrase into a key-encryption key, AES-256-GCM wraps the data key.

`<home>/security/datakey.json` (0600) holds the KDF's name, parameters and salt beside the wrapped key, so
a later version can raise the parameters and still open an older home. The passphrase itself is never
stored: a wrong one fails the GCM tag of the wrapped key, which is the only check there is.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from openclaw_cli.core.errors import OpenclawError, StoreError

KEY_FORMAT = "openclaw-datakey/1"
SECURITY_DIR = "security"
KEY_FILENAME = "datakey.json"
DATA_KEY_BYTES = 32
# RFC 7914 / OWASP interactive parameters: 2**17 * 128 * 8 bytes = 128 MiB of memory, ~0.3 s here. Paid
# once per process that opens an encrypted home (the gateway once at start), never per database open.
SCRYPT_N = 2**17
SCRYPT_R = 8
SCRYPT_P = 1
DB_CIPHER = "chacha20"
FILE_CIPHER = "aes-256-gcm"
_WRAP_AAD = b"openclaw data key v1"


class WrongPassphrase(OpenclawError):
    """The passphrase does not unwrap the data key: nothing was changed."""


class PassphraseMissing(OpenclawError):
    """No source gave a passphrase (no OPENCLAW_PASSPHRASE, no terminal, nothing in the keyring)."""


@dataclass(frozen=True)
class Kdf:
    name: str
    n: int
    r: int
    p: int
    salt: bytes

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "n": self.n, "r": self.r, "p": self.p, "salt": _b64(self.salt)}


@dataclass(frozen=True)
class KeyFile:
    kdf: Kdf
    nonce: bytes
    wrapped: bytes
    db_cipher: str = DB_CIPHER
    file_cipher: str = FILE_CIPHER

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": KEY_FORMAT,
            "kdf": self.kdf.to_dict(),
            "wrap": {"cipher": "aes-256-gcm", "nonce": _b64(self.nonce), "key": _b64(self.wrapped)},
            "databaseCipher": self.db_cipher,
            "fileCipher": self.file_cipher,
        }


def key_path(root: Path) -> Path:
    return root / SECURITY_DIR / KEY_FILENAME


def is_encrypted(root: Path) -> bool:
    return key_path(root).is_file()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def derive_kek(passphrase: str, kdf: Kdf) -> bytes:
    from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

    if kdf.name != "scrypt":
        raise StoreError(f"unknown key derivation {kdf.name!r} in the key file", hint="upgrade openclaw")
    return Scrypt(salt=kdf.salt, length=32, n=kdf.n, r=kdf.r, p=kdf.p).derive(passphrase.encode("utf-8"))


def wrap(data_key: bytes, passphrase: str, *, n: int = SCRYPT_N) -> KeyFile:
    """A new key file for `data_key` under `passphrase`, with a fresh salt and nonce."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    kdf = Kdf("scrypt", n, SCRYPT_R, SCRYPT_P, os.urandom(16))
    nonce = os.urandom(12)
    wrapped = AESGCM(derive_kek(passphrase, kdf)).encrypt(nonce, data_key, _WRAP_AAD)
    return KeyFile(kdf=kdf, nonce=nonce, wrapped=wrapped)


def unwrap(keyfile: KeyFile, passphrase: str) -> bytes:
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    try:
        key = AESGCM(derive_kek(passphrase, keyfile.kdf)).decrypt(keyfile.nonce, keyfile.wrapped, _WRAP_AAD)
    except InvalidTag:
        raise WrongPassphrase(
            "wrong passphrase: it does not open this home's data key",
            hint="nothing was changed; check OPENCLAW_PASSPHRASE, the keyring entry or what you typed",
        ) from None
    if len(key) != DATA_KEY_BYTES:
        raise StoreError("the data key in the key file has the wrong length", hint="restore it from a backup")
    return key


def new_data_key() -> bytes:
    return os.urandom(DATA_KEY_BYTES)


def keyfile_bytes(keyfile: KeyFile) -> bytes:
    """What the key file holds (written by convert.write_keyfile, which owns the atomic replace: this
    module is below fsutil, whose JSON writer asks security/ whether to seal)."""
    return (json.dumps(keyfile.to_dict(), indent=2) + "\n").encode("ascii")


def read_keyfile(root: Path) -> KeyFile:
    path = key_path(root)
    try:
        doc = json.loads(path.read_bytes())
        kdf = doc["kdf"]
        wrapped = doc["wrap"]
        if doc.get("format") != KEY_FORMAT:
            raise ValueError(f"format {doc.get('format')!r}")
        return KeyFile(
            kdf=Kdf(
                str(kdf["name"]), int(kdf["n"]), int(kdf["r"]), int(kdf["p"]), base64.b64decode(kdf["salt"])
            ),
            nonce=base64.b64decode(wrapped["nonce"]),
            wrapped=base64.b64decode(wrapped["key"]),
            db_cipher=str(doc.get("databaseCipher", DB_CIPHER)),
            file_cipher=str(doc.get("fileCipher", FILE_CIPHER)),
        )
    except FileNotFoundError:
        raise StoreError(f"{path} is missing: this home is not encrypted") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise StoreError(
            f"{path} is damaged ({exc.__class__.__name__}: {exc})",
            hint="restore the key file from a backup of the home; without it the data cannot be read",
        ) from None


def rewrapped(keyfile: KeyFile, data_key: bytes, new_passphrase: str) -> KeyFile:
    fresh = wrap(data_key, new_passphrase, n=keyfile.kdf.n)
    return replace(fresh, db_cipher=keyfile.db_cipher, file_cipher=keyfile.file_cipher)
