"""The long-term memory record (seed 000 §3) and the limits that apply to its fields."""

from __future__ import annotations

import os
import re
import time
import unicodedata
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from openclaw_cli.core.errors import InvalidInput

Category = Literal["profile", "preference", "event", "case", "lesson", "insight", "note"]
CATEGORIES: tuple[str, ...] = ("profile", "preference", "event", "case", "lesson", "insight", "note")
Scope = Literal["user", "agent"]
SCOPES: tuple[str, ...] = ("user", "agent")
DEFAULT_USER = "default"
# The workspace file of notes for everyone the agent talks to (workspace/markdown_index.py): its chunks are
# agent-scope memories, where every other workspace file's are the owner's.
SHARED_NOTES_FILE = "SHARED.md"
MAX_ID_LENGTH = 128
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")


class FsrsState(BaseModel):
    """Spaced-repetition state, as the `fsrs` package defines it (difficulty on its 1-10 scale)."""

    model_config = ConfigDict(populate_by_name=True)

    stability: float | None = None
    difficulty: float | None = None
    last_review: datetime | None = Field(None, alias="lastReview")
    next_review: datetime | None = Field(None, alias="nextReview")
    reps: int = 0
    lapses: int = 0


class MemoryRecord(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    id: str
    scope: Scope = "user"
    user_id: str | None = Field(None, alias="userId")
    agent_id: str = Field(alias="agentId")
    category: Category = "note"
    l0: str
    l1: str | None = None
    l2: str | None = None
    language: str = "other"
    l0_hash: str = Field("", alias="l0Hash")
    created_at: datetime = Field(alias="createdAt")
    updated_at: datetime = Field(alias="updatedAt")
    source: dict[str, Any] | None = None
    fsrs: FsrsState = Field(default_factory=FsrsState)
    deleted: bool = False
    vector_status: Literal["ready", "pending"] = Field("pending", alias="vectorStatus")
    # A profile fact's key ("job", "city"): a new value for the same user and key overwrites the old one.
    attribute: str | None = None
    reflected_at: datetime | None = Field(None, alias="reflectedAt")

    def public_dict(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, mode="json")

    @property
    def workspace_note(self) -> bool:
        """A chunk of the workspace Markdown (workspace/markdown_index.py): a note whose source names its file
        (statements.NOT_WORKSPACE_NOTE says the same in SQL)."""
        return (
            self.category == "note" and isinstance(self.source, dict) and self.source.get("path") is not None
        )

    @property
    def private_note(self) -> bool:
        """A chunk of the owner's private notes: any workspace file but SHARED_NOTES_FILE."""
        return self.workspace_note and (self.source or {}).get("path") != SHARED_NOTES_FILE


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime | None) -> str | None:
    return (
        None
        if moment is None
        else moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


def parse_iso(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# createdAt from imports: before the epoch or in the future is a mistake, and near datetime's limits the
# FSRS schedule (created + interval) overflows.
EARLIEST_CREATED = datetime(1970, 1, 1, tzinfo=UTC)
CLOCK_SKEW = timedelta(days=1)


def parse_created_at(text: str) -> datetime:
    """An import's createdAt: ISO 8601 with a timezone, between 1970 and now (plus a day of clock skew)."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidInput(f"createdAt {text!r} is not an ISO 8601 time") from exc
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise InvalidInput(
            f"createdAt {text!r} has no timezone", hint="end it with Z or an offset like +08:00"
        )
    try:
        in_range = EARLIEST_CREATED <= moment <= utc_now() + CLOCK_SKEW
    except OverflowError:  # an offset that pushes the time past datetime's range
        in_range = False
    if not in_range:
        raise InvalidInput(f"createdAt {text!r} is not between 1970 and now")
    return moment.astimezone(UTC)  # the same moment, as the store (and FSRS, which refuses others) keeps it


def new_record_id() -> str:
    """`mem-` + a UUIDv7: time-ordered, so ids sort by creation."""
    millis = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (millis & ((1 << 48) - 1)) << 80 | 0x7 << 76 | (rand >> 68 & 0xFFF) << 64 | 0b10 << 62
    value |= rand & ((1 << 62) - 1)
    hexed = f"{value:032x}"
    return f"mem-{hexed[:8]}-{hexed[8:12]}-{hexed[12:16]}-{hexed[16:20]}-{hexed[20:]}"


def validate_record_id(value: str) -> str:
    if not value or len(value) > MAX_ID_LENGTH or not _ID_RE.match(value) or ".." in value:
        raise InvalidInput(
            f"invalid memory id {value!r}",
            hint="ids hold letters, digits, '_', '.', ':' and '-' (at most 128, starting with a letter or digit)",
        )
    return value


def validate_category(value: str) -> str:
    if value not in CATEGORIES:
        raise InvalidInput(f"unknown category {value!r}", hint=f"use one of: {', '.join(CATEGORIES)}")
    return value


def validate_scope(value: str) -> str:
    if value not in SCOPES:
        raise InvalidInput(f"unknown scope {value!r}", hint="use 'user' or 'agent'")
    return value


def validate_user(value: str) -> str:
    if not value or len(value) > MAX_ID_LENGTH or "\x00" in value or not value.strip():
        raise InvalidInput(f"invalid user id {value!r}", hint="give a non-empty id of at most 128 characters")
    return value


MAX_ATTRIBUTE_LENGTH = 64


def validate_attribute(value: str | None) -> str | None:
    """What a profile fact is about ("job", "city"): one short name, no control characters (it keys the
    replacement of an old value, and is shown in every listing). Blank is none."""
    if value is None or not value.strip():
        return None
    name = value.strip()
    if len(name) > MAX_ATTRIBUTE_LENGTH or any(unicodedata.category(ch) in ("Cc", "Cf") for ch in name):
        raise InvalidInput(
            f"invalid attribute {value!r}",
            hint=f"name what the fact is about in at most {MAX_ATTRIBUTE_LENGTH} printable characters, e.g. job",
        )
    return name


def check_text(field: str, text: str | None, limit: int, *, required: bool = False) -> str | None:
    """Strip `text` and enforce the documented size limit (characters) before anything is stored."""
    if text is None:
        if required:
            raise InvalidInput(f"{field} is required")
        return None
    stripped = text.strip()
    if "\x00" in stripped:
        raise InvalidInput(f"{field} contains a NUL character")
    if required and not stripped:
        raise InvalidInput(f"{field} is empty", hint="give the memory's text")
    if len(stripped) > limit:
        raise InvalidInput(
            f"{field} is {len(stripped)} characters, over the limit of {limit}",
            hint="shorten it, or raise memory.maxTextChars",
        )
    return stripped or None
