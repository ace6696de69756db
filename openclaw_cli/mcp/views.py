"""What the MCP tools answer, built from the payloads of the gateway's methods (or their in-process
stand-ins, local.py): one shape per kind of result, whichever path answered.

Every result carries its id, its relevance in [0, 1] (the search's own score: relevance times how well
it is remembered, as `memory search` shows it), its category or kind, its date and, for a chunk of the
workspace notes, `path:line`.
"""

from __future__ import annotations

from typing import Any


def memory_hit(hit: dict[str, Any]) -> dict[str, Any]:
    """One `memory.search` result (search/result.SearchHit.to_dict)."""
    out: dict[str, Any] = {
        "source": "memory",
        "id": hit["id"],
        "text": hit["l0"],
        "relevance": _unit(hit["score"]),
        "category": hit["category"],
        "scope": hit["scope"],
        "date": hit["createdAt"],
    }
    location = hit.get("location")
    if isinstance(location, str):
        out.update(note_location(location))
    return out


def note_location(location: str) -> dict[str, Any]:
    """`MEMORY.md:3-5` (search/result.note_location) as `location` MEMORY.md:3 and `endLine` 5."""
    path, _, lines = location.rpartition(":")
    start, _, end = lines.partition("-")
    return {"location": f"{path}:{start}", "endLine": int(end or start)}


def session_hit(hit: dict[str, Any]) -> dict[str, Any]:
    """One `session.search` result (search/transcripts.TranscriptHit.to_dict)."""
    return {
        "source": "sessions",
        "id": f"{hit['sessionId']}#{hit['index']}",
        "text": hit["text"],
        "relevance": _unit(hit["score"]),
        "kind": hit["kind"],  # a message, or the summary of the turns up to `index`
        "role": hit["role"],
        "sender": hit.get("sender"),
        "date": hit.get("ts"),
        "sessionKey": hit["sessionKey"],
    }


def added(payload: dict[str, Any]) -> dict[str, Any]:
    """A `memory.add` answer: what was done and, when nothing new was stored, what it matched."""
    return {
        "id": payload.get("id"),
        "action": payload.get("action"),
        "said": payload.get("said"),
        "category": payload.get("category"),
        "date": payload.get("createdAt"),
        **({"existingId": payload["existingId"]} if payload.get("existingId") else {}),
        **({"warning": payload["warning"]} if payload.get("warning") else {}),
    }


def history_entry(entry: dict[str, Any]) -> dict[str, Any]:
    """One row of a memory's history: what changed, when, from what to what."""

    def value(side: Any) -> dict[str, Any] | None:
        if not isinstance(side, dict):
            return None
        return {"text": side.get("l0"), "category": side.get("category"), "attribute": side.get("attribute")}

    return {
        "date": entry.get("at"),
        "action": entry.get("action"),
        "old": value(entry.get("old")),
        "new": value(entry.get("new")),
        "reason": entry.get("reason"),
    }


def _unit(score: Any) -> float:
    return round(min(1.0, max(0.0, float(score))), 4)
