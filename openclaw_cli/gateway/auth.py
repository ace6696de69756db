"""The gateway token and the limit on failed attempts.

The token comes from (first given wins) `--token`, `OPENCLAW_GATEWAY_TOKEN` (the CLI reads it), or
`$OPENCLAW_HOME/gateway/token`, which is generated (32 random bytes, URL-safe) on first run and kept 0600.
Tokens are compared with hmac.compare_digest, so the time taken says nothing about how much matched.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from openclaw_cli.errors import ConfigError
from openclaw_cli.fsutil import atomic_write_bytes

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
    """At most `max_failures` failed attempts per client within `window` seconds; then it is refused
    (even with the right token) until the oldest failure leaves the window."""

    max_failures: int = 10
    window: float = 60.0
    _failures: dict[str, deque[float]] = field(default_factory=dict)

    def _recent(self, client: str, now: float) -> deque[float]:
        failures = self._failures.setdefault(client, deque())
        while failures and now - failures[0] > self.window:
            failures.popleft()
        return failures

    def blocked_for(self, client: str, now: float | None = None) -> float:
        """Seconds until `client` may try again; 0 when it may now."""
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
