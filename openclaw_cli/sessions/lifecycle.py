"""Session lifecycle: get-or-create per key, resets (daily, idle, explicit), dormancy, archiving, sweep.

Every operation on a key runs under that key's lock, so two writers never create two sessions for one
key and a reset never races an append. "now" is always a parameter; its timezone is the local time
in which the daily reset hour is read (the CLI passes the machine's local time).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any

from openclaw_cli.core.errors import NotFound, StoreError
from openclaw_cli.sessions.compress import Compressed, compress_archived, compress_session
from openclaw_cli.sessions.keys import SessionKey, build_key, looks_like_key, parse_key
from openclaw_cli.sessions.store import SessionStore, parse_time

REASON_CREATED = "created"
REASON_DAILY = "daily-reset"
REASON_IDLE = "idle-reset"
REASON_EXPLICIT = "explicit-reset"


@dataclass(frozen=True)
class ResetPolicy:
    at_hour: int | None = 4
    idle_minutes: int | None = None
    dormant_minutes: int = 60
    compress: bool = True  # an archived session's transcript is compressed (session.archive.compress)

    @classmethod
    def from_settings(cls, session_settings: Any) -> ResetPolicy:
        reset = session_settings.reset
        compress = session_settings.archive.compress
        return cls(reset.at_hour, reset.idle_minutes, session_settings.dormant_minutes, compress)


def daily_boundary(now: datetime, at_hour: int) -> datetime:
    """The most recent reset moment at or before `now`: at_hour:00 local time, in now's timezone.

    The day before is found on the calendar, not by subtracting 24 hours, and each candidate gets the
    UTC offset of its own date: across a DST change yesterday's at_hour is 23 or 25 hours back. That
    needs a real zone (zoneinfo); a fixed UTC offset cannot know about DST, so callers pass local time
    as a ZoneInfo-aware datetime. Comparisons are made in UTC (same-zone comparisons ignore the offset).
    """
    local = now if now.tzinfo is not None else now.astimezone()
    zone = local.tzinfo
    moment = local.astimezone(UTC)
    for back in range(3):  # today, else yesterday (a third day only guards against odd zone data)
        day = local.date() - timedelta(days=back)
        boundary = datetime.combine(day, time(at_hour), tzinfo=zone)
        if boundary.astimezone(UTC) <= moment:
            return boundary
    return boundary


def stale_reason(last_active: datetime | None, now: datetime, policy: ResetPolicy) -> str | None:
    """Why a session last active at `last_active` must not take new messages at `now`, or None."""
    if last_active is None:
        return None
    if policy.at_hour is not None and last_active < daily_boundary(now, policy.at_hour):
        return REASON_DAILY
    if policy.idle_minutes is not None and now - last_active > timedelta(minutes=policy.idle_minutes):
        return REASON_IDLE
    return None


def is_dormant(last_active: datetime | None, now: datetime, policy: ResetPolicy) -> bool:
    return last_active is not None and now - last_active > timedelta(minutes=policy.dormant_minutes)


@dataclass
class AppendResult:
    """What an append did. `new_session` is True when this message started a session (tell the user)."""

    message: dict[str, Any]
    session_id: str
    session_key: str
    new_session: bool
    reason: str | None = None  # created, daily-reset, idle-reset
    previous_session_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "sessionKey": self.session_key,
            "sessionId": self.session_id,
            "newSession": self.new_session,
            "reason": self.reason,
            "previousSessionId": self.previous_session_id,
            "message": self.message,
        }


@dataclass
class Transition:
    session_key: str | None
    session_id: str
    change: str  # dormant, archived
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "sessionKey": self.session_key,
            "sessionId": self.session_id,
            "change": self.change,
            "reason": self.reason,
        }


@dataclass
class SessionManager:
    store: SessionStore
    policy: ResetPolicy = field(default_factory=ResetPolicy)
    compressed: Compressed = field(default_factory=Compressed)  # what the last sweep's pass compressed

    def key(self, text: str | SessionKey) -> str:
        parsed = parse_key(text) if isinstance(text, str) else text
        self.store.check_key_agent(parsed)
        return build_key(parsed)

    def get_or_create(self, key: str | SessionKey, now: datetime) -> tuple[dict[str, Any], bool]:
        """(meta, created) of the key's current session; serialised per key across threads and processes."""
        text = self.key(key)
        with self.store.key_lock(text).hold():
            session_id = self.store.current_session_id(text)
            if session_id is not None:
                return self.store.read_meta(session_id), False
            return self.store.create_session(parse_key(text), now), True

    def append(
        self,
        key: str | SessionKey,
        role: str,
        content: str,
        now: datetime,
        *,
        sender: str | None = None,
        tool_calls: list[dict[str, Any]] | None = None,
        tool_call_id: str | None = None,
        user_id: str | None = None,
        anonymous: bool = False,
    ) -> AppendResult:
        """Append to the key's session, first starting a new one if the current one is stale.

        The message that finds the session stale is never dropped: it opens the new session.
        """
        text = self.key(key)
        with self.store.key_lock(text).hold():
            entry = self.store.cached_index()["sessions"].get(text)
            reason: str | None = None
            previous: str | None = None
            if entry is None:
                session_id = self.store.create_session(parse_key(text), now, user_id)["sessionId"]
                reason = REASON_CREATED
            else:
                session_id = entry["sessionId"]
                last = parse_time(self.store.writer(session_id).counters().get("lastActiveAt"))
                reason = stale_reason(last, now, self.policy)
                if reason is not None:
                    previous = session_id
                    session_id = self._replace(text, session_id, now, user_id)
                elif entry.get("status") != "active":
                    self.store.set_status(session_id, "active", now)
            message = self.store.append(
                session_id,
                role,
                content,
                now,
                sender=sender,
                tool_calls=tool_calls,
                tool_call_id=tool_call_id,
                user_id=user_id,
                anonymous=anonymous,
            )
        return AppendResult(message, session_id, text, reason is not None, reason, previous)

    def _replace(
        self, key: str, old_session_id: str | None, now: datetime, user_id: str | None = None
    ) -> str:
        """Archive the key's session (if any) and start a new one; the caller holds the key lock."""
        if old_session_id is not None:
            self.store.set_status(old_session_id, "archived", now)
            self.store.release(old_session_id)
        return str(self.store.create_session(parse_key(key), now, user_id)["sessionId"])

    def new(
        self, key: str | SessionKey, now: datetime, user_id: str | None = None
    ) -> tuple[dict[str, Any], str | None]:
        """Start a new session for the key (archiving the current one). Returns (meta, previous id)."""
        text = self.key(key)
        with self.store.key_lock(text).hold():
            previous = self.store.current_session_id(text)
            session_id = self._replace(text, previous, now, user_id)
            return self.store.read_meta(session_id), previous

    def reset(self, key: str | SessionKey, now: datetime) -> tuple[dict[str, Any], str]:
        """Like new, but the key must already have a session."""
        text = self.key(key)
        with self.store.key_lock(text).hold():
            previous = self.store.current_session_id(text)
            if previous is None:
                raise NotFound(
                    f"no session for key {text}", hint=f"start one with `openclaw session new {text}`"
                )
            session_id = self._replace(text, previous, now)
            return self.store.read_meta(session_id), previous

    def _key_of(self, key_or_id: str) -> tuple[str | None, str]:
        session_id = self.store.resolve(key_or_id)
        if looks_like_key(key_or_id):
            return self.key(key_or_id), session_id
        key = self.store.read_meta(session_id).get("sessionKey")
        return (key if isinstance(key, str) else None), session_id

    def archive(self, key_or_id: str, now: datetime) -> dict[str, Any]:
        key, session_id = self._key_of(key_or_id)
        if key is None:
            return self._archive(session_id, now)
        with self.store.key_lock(key).hold():
            return self._archive(session_id, now)

    def _archive(self, session_id: str, now: datetime) -> dict[str, Any]:
        meta = self.store.set_status(session_id, "archived", now)
        self.store.release(session_id)
        if self.policy.compress:
            with suppress(StoreError):  # archived all the same; the transcript stays plain, doctor says why
                compress_session(self.store, session_id)
        return meta

    def delete(self, key_or_id: str) -> str:
        key, session_id = self._key_of(key_or_id)
        if key is None:
            self.store.delete(session_id)
        else:
            with self.store.key_lock(key).hold():
                self.store.delete(session_id)
        return session_id

    def sweep(
        self, now: datetime, before_archive: Callable[[str], None] | None = None
    ) -> list[Transition]:
        """Apply daily/idle resets (archive) and dormancy to every current session; what changed.
        `before_archive(session_id)` runs before a session is archived (its facts extracted first)."""
        changes: list[Transition] = []
        for key, entry in list(self.store.read_index()["sessions"].items()):
            with self.store.key_lock(key).hold():
                current = self.store.read_index()["sessions"].get(key)
                if current is None or current.get("sessionId") != entry.get("sessionId"):
                    continue  # changed meanwhile by someone else
                change = self._sweep_one(key, current, now, before_archive)
            if change is not None:
                changes.append(change)
        if self.policy.compress:  # those archived before (an older home, a sweep cut short) too
            self.compressed = compress_archived(self.store)
        return changes

    def _sweep_one(
        self,
        key: str,
        entry: dict[str, Any],
        now: datetime,
        before_archive: Callable[[str], None] | None,
    ) -> Transition | None:
        session_id = entry["sessionId"]
        last = parse_time(self.store.read_meta(session_id).get("lastActiveAt"))
        reason = stale_reason(last, now, self.policy)
        if reason is not None:
            if before_archive is not None:
                before_archive(session_id)
            self._archive(session_id, now)
            return Transition(key, session_id, "archived", reason)
        if entry.get("status") == "active" and is_dormant(last, now, self.policy):
            self.store.set_status(session_id, "dormant", now)
            self.store.release(session_id)  # dormant: drop the in-process state, keep meta.json
            return Transition(key, session_id, "dormant", "idle")
        return None
