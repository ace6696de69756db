"""Who may reach the model through a channel: dmPolicy, allowFrom, pairing codes, groupPolicy.

A stranger meets this before the journal, the model or the memory: under dmPolicy `pairing` their first DM
gets one short reply with a code and nothing else happens (no turn, no transcript line, no memory). The
owner approves with `openclaw pairing approve CHANNEL CODE`, which adds the sender to the persisted
allowlist (allow.json beside the journal); `deny` drops the request. Codes expire after
`pairingTtlMinutes`. The CLI and the gateway both edit these files, so every change holds a lock file and
replaces the file atomically.
"""

from __future__ import annotations

import fcntl
import json
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from openclaw_cli.core.errors import NotFound
from openclaw_cli.core.fsutil import FILE_MODE, atomic_write_json, ensure_private_dir

Decision = Literal["allow", "pair", "ignore"]
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud or typed from a phone
CODE_LENGTH = 8


@dataclass(frozen=True)
class Policy:
    dm_policy: str
    allow_from: tuple[str, ...]
    group_policy: str
    group_allow_from: tuple[str, ...]
    pairing_ttl_seconds: float


def _read(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


class AccessStore:
    """allow.json (approved senders) and pairing.json (open requests) of one channel account."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.allow_path = directory / "allow.json"
        self.pairing_path = directory / "pairing.json"

    @contextmanager
    def _locked(self) -> Iterator[None]:
        ensure_private_dir(self.directory)
        lock = self.directory / "access.lock"
        with open(lock, "a", encoding="utf-8") as handle:
            lock.chmod(FILE_MODE)
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def approved(self) -> set[str]:
        return {str(s) for s in _read(self.allow_path).get("senders", [])}

    def requests(self, now: float | None = None) -> list[dict[str, Any]]:
        """Open pairing requests (expired ones left out)."""
        moment = time.time() if now is None else now
        found = _read(self.pairing_path).get("requests", [])
        return [r for r in found if isinstance(r, dict) and float(r.get("expiresAt", 0)) > moment]

    def request(self, sender: str, name: str | None, ttl: float) -> str | None:
        """A new pairing code for `sender`, or None when one is already open (it was told it once)."""
        now = time.time()
        with self._locked():
            open_requests = self.requests(now)
            if any(r.get("sender") == sender for r in open_requests):
                return None
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            open_requests.append(
                {"code": code, "sender": sender, "name": name, "createdAt": now, "expiresAt": now + ttl}
            )
            atomic_write_json(self.pairing_path, {"requests": open_requests})
        return code

    def _take(self, code: str) -> dict[str, Any]:
        wanted = code.strip().upper()
        open_requests = self.requests()
        found = next((r for r in open_requests if r.get("code") == wanted), None)
        if found is None:
            raise NotFound(f"no open pairing request with code {wanted}", hint="see `openclaw pairing list`")
        atomic_write_json(self.pairing_path, {"requests": [r for r in open_requests if r is not found]})
        return found

    def approve(self, code: str) -> dict[str, Any]:
        with self._locked():
            found = self._take(code)
            senders = sorted(self.approved() | {str(found["sender"])})
            atomic_write_json(self.allow_path, {"senders": senders})
        return found

    def deny(self, code: str) -> dict[str, Any]:
        with self._locked():
            return self._take(code)


def dm_decision(policy: Policy, store: AccessStore, sender: str) -> Decision:
    """What a DM from `sender` gets: a turn, a pairing code, or nothing."""
    if policy.dm_policy == "disabled":
        return "ignore"
    if policy.dm_policy == "open" or sender in policy.allow_from or sender in store.approved():
        return "allow"
    return "pair" if policy.dm_policy == "pairing" else "ignore"


def group_allowed(policy: Policy, group_id: str) -> bool:
    if policy.group_policy == "disabled":
        return False
    return policy.group_policy == "open" or group_id in policy.group_allow_from


def pairing_reply(code: str, channel: str) -> str:
    return (
        f"Hi! I only talk to people my owner has approved. Your pairing code is {code}. "
        f"Ask the owner to run: openclaw pairing approve {channel} {code}"
    )
