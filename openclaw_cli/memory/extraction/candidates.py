"""Turning messages into memory candidates: from the model's JSON reply, or from explicit patterns.

Each candidate carries L0 (one line), L1 (detail) and L2 (the source messages verbatim with their
timestamps, seed 000 §6.2 trap 3), the user it belongs to (the speaker, in a group chat) and its source.
What cannot be used (an unknown category, message indexes the model made up) is kept as a note.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from openclaw_cli.memory.extraction import patterns
from openclaw_cli.memory.extraction.person import category_of
from openclaw_cli.memory.extraction.prompt import (
    MAX_L0_CHARS,
    MAX_L1_CHARS,
    ExtractedItem,
    normal_category,
    verbatim,
)
from openclaw_cli.memory.store.records import parse_iso
from openclaw_cli.memory.text.bounded import bounded
from openclaw_cli.memory.writing.candidate import Candidate, WriteOutcome

_ATTRIBUTE = re.compile(r"[^a-z0-9_]+")


@dataclass
class Harvest:
    """What one pass over some messages produced."""

    candidates: list[Candidate] = field(default_factory=list)
    skipped: list[WriteOutcome] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Origin:
    """Where candidates come from: the session, the user they belong to, the L2 size limit."""

    session_id: str
    user_id: str | None
    l2_limit: int


def one_line(text: str, limit: int) -> str:
    return bounded(" ".join(text.split()), limit)


def attribute_key(raw: str | None) -> str | None:
    if not raw:
        return None
    key = _ATTRIBUTE.sub("_", raw.strip().lower()).strip("_")[:64]
    return key or None


def _created_at(messages: Sequence[dict[str, Any]]) -> datetime | None:
    stamps = [moment for m in messages if (moment := _parse_ts(m.get("ts"))) is not None]
    return max(stamps) if stamps else None


def _parse_ts(value: Any) -> datetime | None:
    try:
        return parse_iso(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _candidate(
    origin: Origin,
    category: str,
    l0: str,
    sources: Sequence[dict[str, Any]],
    *,
    method: str,
    l1: str | None = None,
    attribute: str | None = None,
) -> Candidate:
    return Candidate(
        l0=one_line(l0, MAX_L0_CHARS),
        category=category,
        l1=bounded(l1.strip(), MAX_L1_CHARS) if l1 and l1.strip() else None,
        l2=verbatim(sources, origin.l2_limit),
        user_id=origin.user_id,
        attribute=attribute if category == "profile" else None,
        source={
            "sessionId": origin.session_id,
            "messages": [m["idx"] for m in sources],
            "extractedBy": method,
        },
        created_at=_created_at(sources),
    )


def from_model(
    items: Sequence[ExtractedItem], chunk: Sequence[dict[str, Any]], origin: Origin, speaker: str | None
) -> Harvest:
    """Candidates from the model's reply about `chunk`; unusable items become notes or skips."""
    harvest = Harvest()
    by_idx = {m["idx"]: m for m in chunk}
    own = [m for m in chunk if m.get("role") == "user" and m.get("sender") == speaker]
    for item in items:
        made_up = sorted({i for i in item.messages if i not in by_idx})
        if made_up:
            harvest.notes.append(f"ignored message indexes the model made up: {made_up}")
        sources = [by_idx[i] for i in sorted(set(item.messages)) if i in by_idx] or own or list(chunk)
        category = normal_category(item.category)
        l0 = item.l0.strip()
        if category is None or not l0:
            reason = f"unknown category {item.category!r}" if category is None else "empty summary"
            rejected = Candidate(l0=one_line(l0 or "-", MAX_L0_CHARS), category=item.category)
            harvest.skipped.append(WriteOutcome(rejected, "skipped", reason))
            continue
        harvest.candidates.append(
            _candidate(
                origin,
                category,
                l0,
                sources,
                method="model",
                l1=item.l1,
                attribute=attribute_key(item.attribute),
            )
        )
    return harvest


def explicit_text(message: dict[str, Any], previous: dict[str, Any] | None) -> str:
    """What "remember this" points at: the message's other sentences, else the speaker's previous one."""
    content = str(message.get("content") or "")
    rest = [s for s in patterns.sentences(content) if not patterns.asks_to_remember(s)]
    if rest:
        return " ".join(rest)
    return str(previous.get("content") or "") if previous else ""


def from_patterns(
    messages: Sequence[dict[str, Any]],
    origin: Origin,
    *,
    explicit_only: bool = False,
    previous: dict[str, Any] | None = None,
) -> Harvest:
    """Candidates from explicit statements in the user messages (all of them belong to origin's user);
    `previous` is the message before the first, which "remember this" may point at."""
    harvest = Harvest()
    for message in messages:
        if message.get("role") != "user":
            continue
        for found in patterns.find_memories(str(message.get("content") or "")):
            if explicit_only and not found.explicit:
                continue
            l0, sources, category = found.l0, [message], found.category
            if not l0:  # "remember this": the fact is elsewhere
                pointed = explicit_text(message, previous)
                said = patterns.clean(one_line(pointed, MAX_L0_CHARS)) if pointed else ""
                l0 = patterns.said_of_user(said) if said else ""
                category = category_of(said) if said else category
                if not l0:
                    harvest.notes.append(
                        f"message {message['idx']} asks to remember, but nothing precedes it"
                    )
                    continue
                if previous is not None and pointed == previous.get("content"):
                    sources = [previous, message]
            harvest.candidates.append(
                _candidate(origin, category, l0, sources, method="pattern", attribute=found.attribute)
            )
        previous = message
    return harvest
