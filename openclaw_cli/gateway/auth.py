"""The gateway token and the limit on failed attempts.

The token comes from (first given wins) `--token`, `OPENCLAW_GATEWAY_TOKEN` (the CLI reads it), or
`$OPENCLAW_HOME/gateway/token`, which is generated (32 random bytes, URL-safe) on first run and kept 0600.
Tokens are compared with hmac.compare_digest, so the time taken says nothing about how much matched.

Every authenticated request carries the token itself: HTTP requests and WebSocket upgrades alike, as
`Authorization: Bearer TOKEN`. The right token is always let in. Wrong or missing ones count as failures
of the client (its host); once a client has `max_failures` within `window` seconds, its wrong attempts are
answered 429 instead of 401 until the oldest failure leaves the window. So a process that guesses cannot
lock the owner out, and a guesser learns nothing but "slow down".
"""

from __future__ import annotations

import hmac
import math
import secrets
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from openclaw_cli.core.errors import ConfigError
from openclaw_cli.core.fsutil import atomic_write_bytes

MIN_TOKEN_LENGTH = 16


def read_token_file(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the gateway token ({exc})", hint="remove the file") from exc
    return text or None


def load_or_create_token(path: Path) -> tuple[str, bool]:
    """(token, created): the stored token, or a new one written 0600."""
    existing = read_token_file(path)
    if existing is not None:
        return existing, False
    token = secrets.token_urlsafe(32)
    atomic_write_bytes(path, (token + "\n").encode("ascii"))
    return token, True


def check_token_strength(token: str) -> None:
    if len(token) < MIN_TOKEN_LENGTH:
        raise ConfigError(
            f"the gateway token is shorter than {MIN_TOKEN_LENGTH} characters",
            hint="use a longer one, or leave it unset so a random token is generated",
        )


def token_matches(expected: str, given: str | None) -> bool:
    if given is None:
        return False
    return hmac.compare_digest(expected.encode("utf-8"), given.encode("utf-8"))


def bearer(header: str | None) -> str | None:
    """The token of an `Authorization: Bearer T` header."""
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        return None
    return value.strip()


@dataclass
class FailureLimiter:
    """Failed attempts per client: after `max_failures` within `window` seconds the client is over the
    limit until the oldest of them leaves the window. It never refuses a right token (see authenticate)."""

    max_failures: int = 10
    window: float = 60.0
    _failures: dict[str, deque[float]] = field(default_factory=dict)

    def _recent(self, client: str, now: float) -> deque[float]:
        failures = self._failures.setdefault(client, deque())
        while failures and now - failures[0] > self.window:
            failures.popleft()
        return failures

    def blocked_for(self, client: str, now: float | None = None) -> float:
        """Seconds until `client`'s failures are under the limit again; 0 when they are now."""
        moment = time.monotonic() if now is None else now
        failures = self._recent(client, moment)
        if len(failures) < self.max_failures:
            if not failures:
                self._failures.pop(client, None)
            return 0.0
        return max(0.0, self.window - (moment - failures[0]))

    def failed(self, client: str, now: float | None = None) -> None:
        moment = time.monotonic() if now is None else now
        self._recent(client, moment).append(moment)
        if len(self._failures) > 10_000:  # a flood of addresses must not grow this without bound
            self._failures.pop(next(iter(self._failures)))


@dataclass(frozen=True)
class Refusal:
    """Why a request is not let in: 401 (wrong or missing token) or 429 (too many of those lately)."""

    status: int
    message: str
    retry_after: int = 0  # seconds, for a 429


def authenticate(expected: str, given: str | None, client: str, limiter: FailureLimiter) -> Refusal | None:
    """None when `given` is the token, whatever `client` did before; else the refusal, counted as a
    failure of `client` unless it is over the limit already (its failures then age out of the window)."""
    if token_matches(expected, given):
        return None
    wait = limiter.blocked_for(client)
    if wait > 0:
        seconds = max(1, math.ceil(wait))
        return Refusal(429, f"too many failed attempts; retry in {seconds} s", seconds)
    limiter.failed(client)
    return Refusal(401, "wrong or missing token: send Authorization: Bearer TOKEN")


def auth_headers(token: str | None) -> dict[str, str]:
    """What a client sends to authenticate (on HTTP requests and WebSocket upgrades)."""
    return {"Authorization": f"Bearer {token}"} if token else {}
