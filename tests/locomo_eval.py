"""The LoCoMo-like eval of transcript search (issue 54, fixtures/eval/locomo_like/conversations.json): two
named friends chat across many dated sessions; every turn is one session message sent by its speaker (a
group session per conversation, sessions in date order, each archived when the next starts), as in the
held-out LoCoMo check. Tuned on the `tune` conversations, reported on the `heldout` ones; scoring is
tests/transcript_eval.py's (recall@5, recall@10, MRR on turn-level evidence, per kind)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from openclaw_cli.core.paths import Home
from openclaw_cli.memory.transcripts.index import TranscriptIndex
from openclaw_cli.sessions.keys import parse_key
from openclaw_cli.sessions.store import SessionStore
from tests.transcript_eval import evaluate

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "eval" / "locomo_like" / "conversations.json"
PARTS = ("tune", "heldout")


def load(part: str) -> dict[str, Any]:
    """The sessions and questions of one half."""
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return {
        "sessions": [s for s in data["sessions"] if s["part"] == part],
        "questions": [q for q in data["questions"] if q["part"] == part],
    }


def speaker_ids(sessions: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    """(conversation, speaker's name) -> a person id (names may be Chinese; ids are ASCII)."""
    out: dict[tuple[str, str], str] = {}
    for session in sessions:
        for name, _ in session["turns"]:
            key = (session["conversation"], name)
            if key not in out:
                out[key] = f"{re.sub(r'[^a-z0-9]', '', session['conversation'])}p{len(out) + 1}"
    return out


def write_home(home: Path, data: dict[str, Any]) -> dict[str, str]:
    """Every session of the half (in date order per conversation); fixture id -> session id. Each turn is a
    user message whose sender is its speaker's name, a minute after the one before, on its session's date."""
    store = SessionStore(Home(home), "main")
    people = speaker_ids(data["sessions"])
    ids: dict[str, str] = {}
    previous: dict[str, str] = {}
    try:
        for session in sorted(data["sessions"], key=lambda s: (s["date"], s["id"])):
            conversation = session["conversation"]
            key = parse_key(f"agent:main:telegram:default:group:{conversation}")
            start = datetime.fromisoformat(session["date"]).replace(hour=19, tzinfo=UTC)
            if conversation in previous:
                store.set_status(previous[conversation], "archived", start)
            first = people[(conversation, session["turns"][0][0])]
            meta = store.create_session(key, start, user_id=first)
            previous[conversation] = ids[session["id"]] = meta["sessionId"]
            for number, (name, text) in enumerate(session["turns"]):
                store.append(
                    meta["sessionId"],
                    "user",
                    text,
                    start + timedelta(minutes=number),
                    sender=name,
                    user_id=people[(conversation, name)],
                )
    finally:
        store.close()
    return ids


def evaluate_part(index: TranscriptIndex, data: dict[str, Any], ids: dict[str, str]) -> dict[str, Any]:
    return evaluate(index, data, ids)
