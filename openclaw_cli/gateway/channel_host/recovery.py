"""What a channel message left in its session when the gateway died before its reply was recorded.

The core drops an inbox entry whose user message the session already holds (core._already_stored), so the
channel looks for itself: the stored user message and, after it, the assistant's reply. A reply found is
sent as it is (no second model call); a question stored without a reply is answered by a replay turn, which
answers the stored message instead of storing it again (as steer-backlog's followups do).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from openclaw_cli.sessions.layout import parse_time
from openclaw_cli.sessions.store import SessionStore

if TYPE_CHECKING:
    from openclaw_cli.core.paths import Home


@dataclass(frozen=True)
class Stored:
    user_idx: int | None = None  # where the question is stored (None: not stored)
    reply: str | None = None  # the assistant's reply stored after it


def find_stored(home: Home, record: dict[str, Any]) -> Stored:
    """The question of a journal record in its session, stored at or after the record was written."""
    text = str(record.get("text") or "")
    # a little early: a stored timestamp may be rounded down
    accepted = datetime.fromtimestamp(float(record.get("at") or 0) - 2.0, UTC)
    store = SessionStore(home, str(record["agentId"]))
    try:
        session_id = store.current_session_id(str(record["sessionKey"]))
        if session_id is None or not text:
            return Stored()
        messages = store.read_messages(session_id).messages
    finally:
        store.close()
    for position, message in enumerate(messages):
        ts = parse_time(message.get("ts"))
        if ts is None or ts < accepted or message.get("role") != "user":
            continue
        if text not in str(message.get("content", "")) or not isinstance(message.get("idx"), int):
            continue
        for later in messages[position + 1 :]:
            if later.get("role") == "assistant" and later.get("content"):
                return Stored(int(message["idx"]), str(later["content"]))
            if later.get("role") == "user":
                break
        return Stored(int(message["idx"]))
    return Stored()
