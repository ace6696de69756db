"""The params of the gateway's `session.search` as a transcript search request (memory/transcripts/index.py)."""

from __future__ import annotations

from typing import Any

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.gateway.rpc import protocol as p
from openclaw_cli.memory.search.result import MAX_K
from openclaw_cli.memory.transcripts.filters import parse_bound, viewer_filter
from openclaw_cli.memory.transcripts.search import TranscriptRequest

MAX_QUERY = 1_000_000


def transcript_request(params: dict[str, Any], reader: str | None, owner: str) -> TranscriptRequest:
    """`query`, `k`, `sessions` (keys or ids), `filterUserId` (the operator's), `role`, `since`, `until`
    (ISO dates or times), `explain`, `all`; `reader` is the person the call acts for (None: the operator)."""
    sessions = params.get("sessions", [])
    if not isinstance(sessions, list) or not all(isinstance(v, str) and v for v in sessions):
        raise InvalidInput('parameter "sessions" must be a list of session keys or ids')
    since = p.param_str(params, "since", required=False, max_length=64)
    until = p.param_str(params, "until", required=False, max_length=64)
    where = viewer_filter(
        reader,
        owner=owner,
        filter_user=p.param_str(params, "filterUserId", required=False, max_length=256),
        sessions=sessions,
        role=p.param_str(params, "role", required=False, max_length=16),
        since=None if since is None else parse_bound(since, end=False),
        until=None if until is None else parse_bound(until, end=True),
    )
    return TranscriptRequest(
        query=p.param_str(params, "query", max_length=MAX_QUERY) or "",
        k=p.param_int(params, "k", 10, 1, MAX_K),
        where=where,
        explain=p.param_bool(params, "explain"),
        all_results=p.param_bool(params, "all"),
    )
