"""Token counts of the messages of recently read sessions, kept in the process (issue 23).

tokens.json keeps counts across processes, but checking a message against it means hashing its JSON
(sha256) on every read of the session: a cost that grows with the session, paid every turn. Here a
message's count is kept with Python's hash of what was counted, which is much cheaper to compare.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

MEMO_SESSIONS = 256  # sessions whose counts a process keeps (the most recently read)


class TokenMemo:
    """Token counts of the messages of recently read sessions, by idx, each with a hash of what was
    counted: a message rewritten since (a purge redacts in place) no longer matches and is counted anew."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._sessions: OrderedDict[str, dict[int, tuple[int, int]]] = OrderedDict()

    def fill(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        """Give the messages this process has counted before their `tokens`."""
        with self._guard:
            known = self._sessions.get(session_id)
            if known is None:
                return
            self._sessions.move_to_end(session_id)
        for message in messages:
            entry = known.get(message["idx"])
            if entry is not None and entry[0] == _hashed(message):
                message["tokens"] = entry[1]

    def remember(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        counted = {m["idx"]: (_hashed(m), m["tokens"]) for m in messages if isinstance(m.get("tokens"), int)}
        with self._guard:
            self._sessions[session_id] = counted
            self._sessions.move_to_end(session_id)
            while len(self._sessions) > MEMO_SESSIONS:
                self._sessions.popitem(last=False)


def _hashed(message: dict[str, Any]) -> int:
    calls = message.get("toolCalls")
    return hash((message.get("content"), json.dumps(calls, sort_keys=True) if calls else None))
