"""Small pieces of the channel host (channel_host.py): policies from settings, reply texts, bounded bodies."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openclaw_cli.channels.access import Policy

if TYPE_CHECKING:
    from starlette.requests import Request

    from openclaw_cli.agent.turn.requests import TurnResult


def policy_of(section: Any) -> Policy:
    return Policy(
        section.dm_policy,
        tuple(str(s) for s in section.allow_from),
        section.group_policy,
        tuple(str(g) for g in section.group_allow_from),
        section.pairing_ttl_minutes * 60.0,
    )


async def bounded_body(request: Request, limit: int) -> bytes | None:
    """The body, or None past `limit` bytes (without reading the rest): these routes take no token."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def one_part(text: str) -> list[str]:
    return [text] if text else []


def reply_text(result: TurnResult) -> str:
    if result.status == "ok":
        return result.reply
    return "Sorry, I could not answer that just now."
