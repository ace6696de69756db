"""HTTP endpoints: health probes, the OpenAI-compatible chat endpoint and the channel hook.

`/v1/chat/completions`: `model` names the agent, `user` picks the session (agent:{agent}:openai:direct:
{user}) and the person (identity.py: `openai:{user}` unless identityLinks names it); without it the call
is anonymous: session agent:{agent}:openai:direct:anonymous and no memory about anyone, unless
gateway.anonymousIsOwner makes it the owner's (the main session). The reply's `openclaw` field says who. The gateway keeps the history itself, so only the last
user message of `messages` is taken as the new turn. `stream: true` answers with server-sent events.
Every request is its own turn (queue mode followup), queued on the session's lane like any message.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from openclaw_cli.agent.turn.stages import server_timing
from openclaw_cli.core.errors import InvalidInput, OpenclawError
from openclaw_cli.core.textcheck import HINT as TEXT_HINT
from openclaw_cli.core.textcheck import find_bad_text
from openclaw_cli.gateway.auth import Refusal, authenticate, bearer
from openclaw_cli.gateway.routing import DEFAULT_ACCOUNT, Inbound, Peer, route
from openclaw_cli.identity import claims
from openclaw_cli.identity import persons as identity
from openclaw_cli.sessions.keys import build_key, dm_key

if TYPE_CHECKING:
    from openclaw_cli.gateway.app import GatewayApp
    from openclaw_cli.gateway.lanes.queues import Turn

# The session of anonymous /v1 calls (not the owner's main session, which holds their conversations).
ANONYMOUS_PEER = "anonymous"


class HttpError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        kind: str = "invalid_request_error",
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind
        self.headers = headers

    @classmethod
    def refused(cls, refusal: Refusal) -> HttpError:
        if refusal.status == 429:
            headers = {"Retry-After": str(refusal.retry_after)}
            return cls(429, refusal.message, "rate_limit_error", headers)
        return cls(refusal.status, refusal.message, "authentication_error", {"WWW-Authenticate": "Bearer"})

    def response(self) -> JSONResponse:
        return JSONResponse(
            {"error": {"message": self.message, "type": self.kind}},
            status_code=self.status,
            headers=self.headers,
        )


def check_auth(gateway: GatewayApp, request: Request) -> None:
    """The request's token is the gateway's, or HttpError 401 (429 for a client over the failure limit)."""
    client = request.client.host if request.client else "unknown"
    token = bearer(request.headers.get("authorization"))
    refusal = authenticate(gateway.core.options.token, token, client, gateway.failures)
    if refusal is not None:
        raise HttpError.refused(refusal)


async def read_json(gateway: GatewayApp, request: Request) -> dict[str, Any]:
    """The body as a JSON object, refused (413) past gateway.maxMessageBytes without reading it all."""
    limit = gateway.core.settings.gateway.max_message_bytes
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HttpError(413, f"the body is larger than {limit} bytes (gateway.maxMessageBytes)")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HttpError(413, f"the body is larger than {limit} bytes (gateway.maxMessageBytes)")
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks))
    except (ValueError, RecursionError) as exc:
        raise HttpError(400, "the body is not JSON") from exc
    if not isinstance(body, dict):
        raise HttpError(400, "the body must be a JSON object")
    bad = find_bad_text(body)  # a lone `\ud800` escape parses, but no handler can store or send it
    if bad is not None:
        raise HttpError(400, f"{bad.describe()}; {TEXT_HINT}")
    return body


def _known_agent(gateway: GatewayApp, model: Any) -> str:
    agents = gateway.core.settings.agents
    known = {entry.id.lower() for entry in agents.entries} | {agents.default.lower()}
    if not isinstance(model, str) or not model:
        return gateway.core.agent_id(None)
    name = model.removeprefix("openclaw/").lower()
    if name not in known:
        raise HttpError(
            404,
            f"no agent {model!r}: the model field names an agent ({', '.join(sorted(known))})",
            "model_not_found",
        )
    return gateway.core.agent_id(name)


def _last_user_text(messages: Any) -> str:
    if not isinstance(messages, list) or not messages:
        raise HttpError(400, '"messages" must be a non-empty list')
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts: keep the text ones
                content = "\n".join(
                    str(part.get("text", ""))
                    for part in content
                    if isinstance(part, dict) and part.get("type") == "text"
                )
            if isinstance(content, str) and content.strip():
                return content
            break
    raise HttpError(400, "the last user message has no text")


def _completion(
    run_id: str,
    agent: str,
    text: str,
    finish: str | None,
    *,
    chunk: bool,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": f"chatcmpl-{run_id}",
        "object": "chat.completion.chunk" if chunk else "chat.completion",
        "created": int(time.time()),
        "model": agent,
    }
    if chunk:
        delta = {"role": "assistant", "content": text} if text else {}
        body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
    else:
        body["choices"] = [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}
        ]
        body["usage"] = openai_usage(usage)
    return body


def openai_usage(usage: dict[str, Any] | None) -> dict[str, int]:
    """A turn's usage (TurnResult.usage_dict: every model call of the turn) in OpenAI's shape; zeros
    for a turn that called no model."""
    prompt = int((usage or {}).get("inputTokens") or 0)
    completion = int((usage or {}).get("outputTokens") or 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _wants_usage(body: dict[str, Any]) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and options.get("include_usage") is True


async def chat_completions(gateway: GatewayApp, request: Request) -> Response:
    started = time.perf_counter()
    check_auth(gateway, request)
    body = await read_json(gateway, request)
    agent = _known_agent(gateway, body.get("model"))
    text = _last_user_text(body.get("messages"))
    key, who = _v1_session(gateway, agent, body.get("user"))
    events: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()
    accepting = time.perf_counter()
    turn = gateway.core.send(
        agent,
        key,
        text,
        user_id=who.person,
        mode="followup",
        listener=lambda e, pl: events.put_nowait((e, pl)),
    )
    front = {
        "request": (accepting - started) * 1000,
        "journal accept": (time.perf_counter() - accepting) * 1000,
    }
    if body.get("stream") is True:
        stream = _stream(turn, agent, events, who, front, usage=_wants_usage(body))
        return StreamingResponse(stream, media_type="text/event-stream")
    result = await turn.done
    if result.status != "ok":
        raise HttpError(
            502 if result.status == "error" else 499,
            result.error or "the turn was aborted",
            "upstream_error" if result.status == "error" else "aborted",
        )
    answer = _completion(turn.run_id, agent, result.reply, "stop", chunk=False, usage=result.usage_dict())
    timing = server_timing(_http_stages(front, turn, result.stages))
    return JSONResponse({**answer, "openclaw": who.public_dict()}, headers={"Server-Timing": timing})


def _http_stages(front: dict[str, float], turn: Turn, stages: dict[str, float]) -> dict[str, float]:
    """The request's stages in order: reading it, journaling and queuing it, waiting on its lane, the
    turn's own (agent/turn/stages.py) and marking it done in the journal."""
    return {**front, "lane wait": (turn.started_at - turn.created_at) * 1000, **stages}


def _v1_session(gateway: GatewayApp, agent: str, user: Any) -> tuple[str, identity.Identity]:
    """The session and the person of a /v1 call: `user` is a peer on channel `openai`; without one the
    call is anonymous (the owner's only when gateway.anonymousIsOwner says so)."""
    settings = gateway.core.settings
    if user is None:
        who = identity.identify(None, settings)
        peer = None if who.owner else ANONYMOUS_PEER
    else:
        person = claims.claimed_person(user, settings, '"user"', channel="openai")
        peer = str(user).strip()
        who = identity.identify(person, settings)
    if peer is None:
        return f"agent:{agent}:main", who
    key = dm_key(
        agent,
        "openai",
        DEFAULT_ACCOUNT,
        peer,
        dm_scope="per-channel-peer",
        identity_links=settings.session.identity_links,
    )
    return build_key(key), who


async def _stream(
    turn: Turn,
    agent: str,
    events: asyncio.Queue[tuple[str, dict[str, Any]]],
    who: identity.Identity,
    front: dict[str, float],
    *,
    usage: bool,
) -> AsyncIterator[str]:
    """Server-sent chunks of the run; with `usage` (stream_options.include_usage) a last chunk without
    choices carries the usage, as OpenAI sends it. Before `[DONE]`, a comment line (which SSE clients
    skip) gives the stages' split as the plain answer's Server-Timing header does."""
    run_id = turn.run_id

    def sse(value: Any) -> str:
        return f"data: {json.dumps(value, ensure_ascii=False)}\n\n"

    yield sse({**_completion(run_id, agent, "", None, chunk=True), "openclaw": who.public_dict()})
    while True:
        event, payload = await events.get()
        if event != "chat" or payload.get("runId") != run_id:
            continue
        state = payload.get("state")
        if state == "delta":
            yield sse(_completion(run_id, agent, str(payload.get("text", "")), None, chunk=True))
        elif state == "final":
            yield sse(_completion(run_id, agent, "", "stop", chunk=True))
            if usage:
                last = _completion(run_id, agent, "", None, chunk=True)
                yield sse({**last, "choices": [], "usage": openai_usage(payload.get("usage"))})
            break
        else:
            yield sse({"error": {"message": payload.get("text") or str(state), "type": "upstream_error"}})
            break
    if turn.done.done():
        yield f": server-timing {server_timing(_http_stages(front, turn, turn.done.result().stages))}\n\n"
    yield "data: [DONE]\n\n"


def _peer(value: Any, what: str) -> Peer | None:
    if value is None:
        return None
    if isinstance(value, str) and value:
        return Peer("direct", value)
    if isinstance(value, dict) and isinstance(value.get("id"), str) and value["id"]:
        kind = value.get("kind", "direct")
        if kind not in ("direct", "group", "channel"):
            raise HttpError(400, f'"{what}.kind" must be direct, group or channel')
        return Peer(kind, value["id"])
    raise HttpError(400, f'"{what}" must be an id or {{"kind", "id"}}')


def _text_field(body: dict[str, Any], name: str, *, required: bool = False) -> str | None:
    value = body.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise HttpError(400, f'"{name}" must be a non-empty string')
    return value


def inbound_from(body: dict[str, Any]) -> Inbound:
    peer = _peer(body.get("peer"), "peer")
    if peer is None:
        raise HttpError(400, '"peer" is required')
    roles = body.get("roles") or []
    if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
        raise HttpError(400, '"roles" must be a list of strings')
    return Inbound(
        channel=_text_field(body, "channel", required=True) or "",
        text=_text_field(body, "text", required=True) or "",
        peer=peer,
        account_id=_text_field(body, "accountId") or DEFAULT_ACCOUNT,
        sender=_text_field(body, "sender"),
        parent_peer=_peer(body.get("parentPeer"), "parentPeer"),
        guild_id=_text_field(body, "guildId"),
        team_id=_text_field(body, "teamId"),
        roles=tuple(roles),
    )


async def hooks_agent(gateway: GatewayApp, request: Request) -> Response:
    """An inbound channel message: routed by the bindings, queued, answered; the reply is returned."""
    check_auth(gateway, request)
    message = inbound_from(await read_json(gateway, request))
    settings = gateway.core.settings
    try:  # who speaks is settled first: a refused claim stores nothing
        who = claims.inbound_identity(settings, message.channel, message.peer, message.sender)
        target = route(settings, message)
    except InvalidInput as exc:
        raise HttpError(400, exc.message) from exc
    turn = gateway.core.send(
        target.agent_id, target.session_key, message.text, sender=message.sender, user_id=who.person
    )
    if target.rerouted:
        await gateway.core.note_reroute(target.agent_id)
    result = await turn.done
    answer = {
        "runId": turn.run_id,
        "agentId": target.agent_id,
        "sessionKey": target.session_key,
        "matchedBy": target.level,
        "openclaw": who.public_dict(),
        **({"rerouted": claims.REROUTED} if target.rerouted else {}),
        **{k: v for k, v in result.public_dict().items() if k != "runId"},
    }
    return JSONResponse(answer, status_code=200 if result.status == "ok" else 502)


async def guarded(gateway: GatewayApp, request: Request, handler: Any) -> Response:
    try:
        response: Response = await handler(gateway, request)
        return response
    except HttpError as exc:
        return exc.response()
    except OpenclawError as exc:
        return HttpError(400, exc.message).response()
