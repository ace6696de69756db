"""Whose transcripts a search may read, and its date bounds (memory/transcripts/index.py searches with them)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, timedelta

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.memory.store.transcripts import TurnFilter
from openclaw_cli.memory.transcripts.files import ROLES
from openclaw_cli.sessions.ids import is_session_id
from openclaw_cli.sessions.keys import build_key, parse_key
from openclaw_cli.sessions.layout import iso, parse_time


def viewer_filter(
    viewer: str | None,
    *,
    owner: str,
    filter_user: str | None = None,
    sessions: Iterable[str] = (),
    role: str | None = None,
    since: str | None = None,
    until: str | None = None,
) -> TurnFilter:
    """Whose transcripts a search may read. `viewer` None is the operator (the CLI, a gateway call without
    `userId`): every session, or `filter_user`'s. A person other than the owner sees their own sessions
    only, whatever `filter_user` asks."""
    if role is not None and role not in ROLES:
        raise InvalidInput(f"unknown role {role!r}", hint="use user or assistant")
    if since is not None and until is not None and since >= until:
        raise InvalidInput("--since is not before --until", hint="give a start date before the end date")
    person = filter_user if viewer is None or viewer == owner else viewer
    if viewer is not None and viewer != owner and filter_user not in (None, viewer):
        raise InvalidInput("a person may search only their own sessions", hint="leave out the user filter")
    ids: list[str] = []
    keys: list[str] = []
    for value in sessions:
        if is_session_id(value):
            ids.append(value)
        else:
            keys.append(build_key(parse_key(value)))  # canonical, as stored; a malformed key is refused
    return TurnFilter(person, tuple(ids), tuple(keys), role, since, until)


def parse_bound(text: str, *, end: bool) -> str:
    """A --since/--until value as the index's timestamp: YYYY-MM-DD (a whole UTC day: `end` makes it the
    start of the next day, so --until includes the day) or an ISO date-time."""
    value = text.strip()
    if not value or "\x00" in value:
        raise InvalidInput(f"bad date {text!r}", hint="use YYYY-MM-DD or an ISO date-time")
    moment = parse_time(value)
    if moment is None:
        raise InvalidInput(f"bad date {text!r}", hint="use YYYY-MM-DD or an ISO date-time")
    if end and len(value) == 10:
        moment += timedelta(days=1)
    return iso(moment.astimezone(UTC))
