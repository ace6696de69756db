"""Homes with sessions for the transcript search tests: real session files written through the session
store, and the transcript index of memory/transcripts/index.py with the real (shared, converted) embedder."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openclaw_cli.config.loading import Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.transcripts.filters import viewer_filter
from openclaw_cli.memory.transcripts.index import TranscriptIndex
from openclaw_cli.memory.transcripts.search import TranscriptRequest
from openclaw_cli.sessions.keys import parse_key
from openclaw_cli.sessions.store import SessionStore
from tests.memory_helpers import service_for, with_shared_models

ALICE_KEY = "agent:main:telegram:default:direct:alice"
BOB_KEY = "agent:main:telegram:default:direct:bob"
OWNER_KEY = "agent:main:main"


def at(day: int, hour: int = 10) -> datetime:
    return datetime(2026, 3, day, hour, tzinfo=UTC)


# (key, person, day, [(role, text)]): Alice's and Bob's DMs never share a word that would find the other's.
DIALOGUES: list[tuple[str, str | None, int, list[tuple[str, str]]]] = [
    (
        ALICE_KEY,
        "alice",
        3,
        [
            ("user", "Can you help me plan the Lisbon trip? We fly on May 12th."),
            ("assistant", "Of course. Lisbon in May is warm; I would book the hotel in Alfama."),
            ("user", "Book nothing yet, I still have to ask my sister about the dates."),
        ],
    ),
    (
        ALICE_KEY,
        "alice",
        5,
        [
            ("user", "我下周要去上海出差，帮我记一下。"),
            ("assistant", "好的，你下周去上海出差。"),
        ],
    ),
    (
        BOB_KEY,
        "bob",
        4,
        [
            ("user", "My dentist appointment moved to Friday at nine."),
            ("assistant", "Noted: the dentist on Friday at nine."),
        ],
    ),
    (
        OWNER_KEY,
        "default",
        6,
        [
            ("user", "The quarterly report is due on the thirtieth."),
            ("assistant", "I will remind you about the quarterly report."),
        ],
    ),
]


def write_dialogues(
    home: Path, dialogues: list[tuple[str, str | None, int, list[tuple[str, str]]]] = DIALOGUES
) -> dict[str, list[str]]:
    """Write each dialogue as its own session (a key's earlier session is archived); key -> session ids."""
    store = SessionStore(Home(home), "main")
    ids: dict[str, list[str]] = {}
    try:
        for key, person, day, turns in dialogues:
            if key in ids:
                store.set_status(ids[key][-1], "archived", at(day))
            meta = store.create_session(parse_key(key), at(day), user_id=person)
            ids.setdefault(key, []).append(meta["sessionId"])
            for number, (role, text) in enumerate(turns):
                store.append(
                    meta["sessionId"],
                    role,
                    text,
                    at(day, 10 + number),
                    user_id=person if role == "user" else None,
                )
    finally:
        store.close()
    return ids


def open_index(home: Path) -> tuple[TranscriptIndex, Any]:
    """The transcript index of `home`'s main agent and the memory service whose embedder it uses."""
    service = service_for(home)
    settings = with_shared_models(Settings()).memory
    return TranscriptIndex(Home(home), "main", settings, service.embedder), service


@contextmanager
def repaired_index(home: Path) -> Iterator[TranscriptIndex]:
    """open_index with every session of `home` indexed and embedded (repair), closed after."""
    index, service = open_index(home)
    try:
        index.repair()
        yield index
    finally:
        index.close()
        service.close()


def search(index: TranscriptIndex, query: str, viewer: str | None = None, **where: Any) -> list[Any]:
    """The hits of `query` as `viewer` sees them (None: the operator); `k`/`all_results` go to the request."""
    k = where.pop("k", 10)
    all_results = where.pop("all_results", False)
    request = TranscriptRequest(
        query, k, viewer_filter(viewer, owner="default", **where), all_results=all_results
    )
    return index.search(request).hits
