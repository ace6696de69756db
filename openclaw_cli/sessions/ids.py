"""Session ids: `s-` + a UUIDv7 (time-ordered, so a directory listing sorts by creation)."""

from __future__ import annotations

import os
import re
import time
import uuid

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.core.paths import validate_name

_SESSION_ID_RE = re.compile(r"^s-[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def uuid7(unix_ms: int | None = None) -> uuid.UUID:
    """RFC 9562 UUID version 7: 48-bit millisecond timestamp, then 74 random bits."""
    ms = int(time.time() * 1000) if unix_ms is None else unix_ms
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & 0xFFFF_FFFF_FFFF) << 80
    value |= 0x7 << 76  # version
    value |= ((rand >> 62) & 0xFFF) << 64  # rand_a, 12 bits
    value |= 0b10 << 62  # variant
    value |= rand & ((1 << 62) - 1)  # rand_b, 62 bits
    return uuid.UUID(int=value)


def new_session_id() -> str:
    return f"s-{uuid7()}"


def is_session_id(text: str) -> bool:
    return bool(_SESSION_ID_RE.match(text))


def validate_session_id(text: str) -> str:
    """A session id given by a user: safe as a path component and of the `s-<uuid7>` shape."""
    validate_name(text, "session id")
    if not is_session_id(text):
        raise InvalidInput(
            f"invalid session id {text!r}",
            hint="session ids look like s-0190f0c2-...; see `openclaw session list`",
        )
    return text
