"""The key agent process: one home's data key in memory, served over a 0600 Unix socket until it expires.

Started by `openclaw security unlock` (unlock.py) as `python -m openclaw_cli.security.agent_server SOCKET
TTL` with the key on its standard input (never argv or the environment), it binds the socket, says
"ready" on standard output and serves one small JSON request per connection: `get` (the key, if the
asker's key-file digest matches), `status`, `put` (a new key and lifetime: unlock again), `lock` (forget
and exit). Peers of another uid are refused (SO_PEERCRED). At its expiry it forgets the key and exits;
a `get` after the expiry is refused even if the process has not woken yet. The process makes itself
undumpable, so another process cannot read the key out of its memory through ptrace or a core file.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openclaw_cli.security.agent import check_socket_path, peer_allowed, read_message

Clock = Callable[[], float]
# The longest a sleeping agent waits before looking at its clock again (a suspended laptop's clock jumps).
_WAKE_SECONDS = 30.0


@dataclass
class KeyHolder:
    """The agent's state and its answers, apart from sockets, so tests drive it with their own clock."""

    key: bytes
    check: str
    expires: float
    clock: Clock = time.time

    def remaining(self) -> float:
        return self.expires - self.clock()

    def expired(self) -> bool:
        return self.remaining() <= 0

    def forget(self) -> None:
        self.key = b""
        self.expires = 0.0

    def handle(self, message: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """The answer to one request, and whether the agent stops after sending it."""
        op = message.get("op")
        if self.expired():
            self.forget()
            return {"ok": False, "error": "expired"}, True
        base = {"ok": True, "expires": self.expires, "pid": os.getpid()}
        if op == "status":
            return {**base, "matches": message.get("check") == self.check}, False
        if op == "get":
            if message.get("check") != self.check:
                return {"ok": False, "error": "this agent holds the key of another key file"}, False
            return {**base, "key": self.key.hex()}, False
        if op == "put":
            try:
                key = bytes.fromhex(str(message["key"]))
                ttl = float(message["ttl"])
            except (KeyError, ValueError, TypeError):
                return {"ok": False, "error": "bad put"}, False
            if len(key) != 32 or not 0 < ttl < 366 * 86400:
                return {"ok": False, "error": "bad put"}, False
            self.key, self.check, self.expires = key, str(message.get("check", "")), self.clock() + ttl
            return {**base, "expires": self.expires}, False
        if op == "lock":
            self.forget()
            return {"ok": True}, True
        return {"ok": False, "error": f"unknown op {op!r}"}, False


def bind(path: Path) -> socket.socket:
    """A listening socket at `path`, 0600 from the start. A socket file left by an agent that died
    (killed -9) is removed; one that still answers belongs to a live agent and is an error."""
    check_socket_path(path)
    if os.path.lexists(path):
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(os.fsencode(path))
        except OSError:
            os.unlink(path)  # stale: nobody listens
        else:
            raise FileExistsError(f"an agent already listens on {path}")
        finally:
            probe.close()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(os.fsencode(path))
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    listener.listen(16)
    return listener


def serve(listener: socket.socket, path: Path, holder: KeyHolder) -> None:
    """Answer requests until the key expires or is locked; then remove the socket (if still ours)."""
    own_uid = os.getuid()
    ours = os.stat(path).st_ino
    try:
        while not holder.expired():
            listener.settimeout(max(0.01, min(holder.remaining(), _WAKE_SECONDS)))
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2.0)
                if not peer_allowed(conn, own_uid):
                    with contextlib.suppress(OSError):
                        conn.sendall(b'{"ok": false, "error": "another user"}\n')
                    continue
                try:
                    answer, stop = holder.handle(read_message(conn))
                except (OSError, ValueError):
                    continue
                with contextlib.suppress(OSError):
                    conn.sendall(json.dumps(answer).encode("utf-8") + b"\n")
                if stop:
                    break
    finally:
        holder.forget()
        listener.close()
        with contextlib.suppress(OSError):
            if os.stat(path).st_ino == ours:
                os.unlink(path)


def _undumpable() -> None:
    """prctl(PR_SET_DUMPABLE, 0): no core file, and no ptrace attach by other same-uid processes."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def main(argv: list[str]) -> int:
    path, ttl = Path(argv[0]), float(argv[1])
    _undumpable()
    start = json.loads(sys.stdin.buffer.readline())
    holder = KeyHolder(bytes.fromhex(start["key"]), str(start["check"]), time.time() + ttl)
    sys.stdin.close()
    try:
        listener = bind(path)
    except (OSError, ValueError) as exc:
        sys.stdout.write(f"error {exc}\n")
        sys.stdout.flush()
        return 1
    sys.stdout.write(f"ready {holder.expires}\n")
    sys.stdout.flush()
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    serve(listener, path, holder)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
