"""The key agent's client side: where its socket is, how a process asks it for a home's data key.

`openclaw security unlock` starts a small per-user process (agent_server.py) that holds one home's
unwrapped data key in memory, for a while, and hands it over a Unix socket, as ssh-agent and gpg-agent do:
every later process of that home gets the key in well under a millisecond instead of paying scrypt's
~0.3 s and 128 MiB. The socket lies in a 0700 directory (`$XDG_RUNTIME_DIR/openclaw/`, or the home's
`run/`; the CLI edge picks it, this module is given it), is 0600, and the agent answers only peers of its
own uid (SO_PEERCRED). One agent per home: the socket's name is a digest of the home's path, and each
request carries a digest of the home's key file, so an agent started for a key file that was since
replaced (a rekey, a decrypt and a new init) is never believed.

Every failure to reach the agent (no socket, a stale one left by a killed agent, a hung agent, an
expired key) is "no key": the caller falls back to its passphrase sources.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import struct
from pathlib import Path
from typing import Any

from openclaw_cli.core.errors import StoreError
from openclaw_cli.core.fsutil import ensure_private_dir
from openclaw_cli.security.keyfile import KeyFile

RUN_SUBDIR = "openclaw"  # under $XDG_RUNTIME_DIR
HOME_RUN_DIR = "run"  # under the home, when there is no XDG_RUNTIME_DIR
DEFAULT_TTL_SECONDS = 15 * 60
CLIENT_TIMEOUT_SECONDS = 2.0
MAX_MESSAGE_BYTES = 4096
# sockaddr_un.sun_path is 108 bytes on Linux, with its NUL.
MAX_SOCKET_PATH = 107
_PEERCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


class AgentUnavailable(Exception):
    """The agent could not be reached or refused: the caller falls back to a passphrase."""


def runtime_dir(xdg_runtime_dir: str | None, root: Path) -> Path:
    """Where the agents' sockets live: the per-user runtime dir (tmpfs, cleared at logout) when the
    session has one, else `<home>/run` (0700 like the rest of the home)."""
    if xdg_runtime_dir:
        return Path(xdg_runtime_dir) / RUN_SUBDIR
    return root / HOME_RUN_DIR


def socket_path(run_dir: Path, root: Path) -> Path:
    """The socket of the agent for the home at `root` (one per home, named by its absolute path)."""
    digest = hashlib.sha256(str(Path(root).absolute()).encode("utf-8", "surrogateescape")).hexdigest()
    return run_dir / f"agent-{digest[:16]}.sock"


def key_check(keyfile: KeyFile) -> str:
    """A digest of the wrapped key as stored (not of the key): it names which key file a key came from."""
    return hashlib.sha256(keyfile.kdf.salt + keyfile.nonce + keyfile.wrapped).hexdigest()[:32]


def prepare_run_dir(path: Path) -> Path:
    """The socket's directory, made 0700 and checked: ours, and nobody else may write in it."""
    ensure_private_dir(path)
    info = path.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise StoreError(
            f"{path} is not private (owner uid {info.st_uid}, mode {oct(info.st_mode & 0o777)})",
            hint=f"run `chmod 700 {path}` (it must be yours), then unlock again",
        )
    return path


def check_socket_path(path: Path) -> None:
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise StoreError(
            f"the key agent's socket path is too long for a Unix socket: {path}",
            hint="set XDG_RUNTIME_DIR to a short directory (e.g. /run/user/$UID)",
        )


def peer_uid(conn: socket.socket) -> int:
    """The uid of the process at the other end of a connected Unix socket (the kernel's word, SO_PEERCRED)."""
    raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
    _pid, uid, _gid = _PEERCRED.unpack(raw)
    return int(uid)


def peer_allowed(conn: socket.socket, own_uid: int) -> bool:
    """Whether the peer may have the key: the same uid as the agent, nobody else (not even root's
    processes under another uid: root can read memory anyway, and nothing here needs it)."""
    try:
        return peer_uid(conn) == own_uid
    except OSError:
        return False


def read_message(conn: socket.socket) -> dict[str, Any]:
    """One JSON object, ended by a newline, of at most MAX_MESSAGE_BYTES."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(MAX_MESSAGE_BYTES)
        if not chunk:
            break
        data += chunk
        if len(data) > MAX_MESSAGE_BYTES:
            raise ValueError("message too long")
    value = json.loads(data)
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


def request(
    path: Path, message: dict[str, Any], *, timeout: float = CLIENT_TIMEOUT_SECONDS
) -> dict[str, Any]:
    """Send one request to the agent at `path` and return its answer; AgentUnavailable on any failure."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(timeout)
    try:
        conn.connect(os.fsencode(path))
        # The agent must be ours too: a socket another uid put in our runtime dir gets no key of ours.
        if not peer_allowed(conn, os.getuid()):
            raise AgentUnavailable(f"{path} is served by another user")
        conn.sendall(json.dumps(message).encode("utf-8") + b"\n")
        answer = read_message(conn)
    except (OSError, ValueError) as exc:  # no socket, a stale one (refused), a timeout, a bad answer
        raise AgentUnavailable(str(exc)) from None
    finally:
        conn.close()
    if not answer.get("ok"):
        raise AgentUnavailable(str(answer.get("error", "refused")))
    return answer


def fetch_key(path: Path, keyfile: KeyFile) -> bytes | None:
    """The data key the agent at `path` holds for this key file, or None (no agent, locked, expired,
    another key file): the caller then asks for the passphrase."""
    try:
        answer = request(path, {"op": "get", "check": key_check(keyfile)})
        key = bytes.fromhex(str(answer["key"]))
    except (AgentUnavailable, KeyError, ValueError):
        return None
    return key if len(key) == 32 else None


def key_from_agent(run_dir: Path, root: Path) -> bytes | None:
    """The key the agent of the home at `root` holds, or None (unlocked.set_agent's lookup)."""
    from openclaw_cli.security.keyfile import read_keyfile

    try:
        keyfile = read_keyfile(root)
    except StoreError:
        return None
    return fetch_key(socket_path(run_dir, root), keyfile)


def agent_status(path: Path, keyfile: KeyFile) -> dict[str, Any] | None:
    """{"expires": epoch seconds, "pid": ...} of a running agent that holds this key file's key, or None
    (none answers, or it holds the key of a key file since replaced). The key itself is not asked for."""
    try:
        answer = request(path, {"op": "status", "check": key_check(keyfile)})
    except AgentUnavailable:
        return None
    if not answer.get("matches"):
        return None
    return {"expires": answer.get("expires"), "pid": answer.get("pid")}


def refresh(path: Path, key: bytes, keyfile: KeyFile, ttl: float) -> dict[str, Any] | None:
    """Give a running agent the key again with a new lifetime; None when no agent answers."""
    try:
        answer = request(path, {"op": "put", "key": key.hex(), "check": key_check(keyfile), "ttl": ttl})
    except AgentUnavailable:
        return None
    return {"expires": answer.get("expires"), "pid": answer.get("pid")}


def lock(path: Path) -> bool:
    """Tell the agent at `path` to forget its key and exit; False when none was running."""
    try:
        request(path, {"op": "lock"})
    except AgentUnavailable:
        return False
    return True
