"""A test plugin registering one of each of the five kinds: a tool, a channel, a provider, routes and event
hooks (every one: it records what it is given; message_sending hides the word SECRET)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import JSONResponse

from openclaw_cli.channels.base import Inbound, Target
from openclaw_cli.plugins import hookimpl
from openclaw_cli.plugins.contexts import Rewrite

__version__ = "1.2.3"


class Config(BaseModel):
    greeting: str = "hello"


config_model = Config
SEEN: list[tuple[str, Any]] = []  # (hook, context) of every event hook call
STATE: dict[str, Any] = {}
CHANNELS: list[LoopChannel] = []


def add_numbers(a: int, b: int) -> dict[str, int]:
    SEEN.append(("tool add_numbers", (a, b)))
    return {"sum": a + b}


@hookimpl
def register_tools(register: Any) -> None:
    STATE["greeting"] = register.config.greeting
    register(
        name="add_numbers",
        description="Add two integers.",
        parameters={
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": False,
        },
        fn=add_numbers,
    )


class LoopChannel:
    """A chat platform in the gateway's own process: messages come in as POST /channels/loopchat/events,
    replies are kept in `sent` (read back through the plugin's route GET /plugins/kitchen/sent)."""

    name = "loopchat"
    account_id = "default"

    def __init__(self, section: Any) -> None:
        self.section = section
        self.sink: Any = None
        self.sent: list[dict[str, str]] = []
        CHANNELS.append(self)

    async def start(self, sink: Any) -> None:
        self.sink = sink

    async def stop(self) -> None:
        self.sink = None

    async def send(self, target: Target, text: str) -> str | None:
        self.sent.append({"chat": target.chat_id, "text": text})
        return str(len(self.sent))

    async def typing(self, target: Target) -> None:
        return None

    def split(self, text: str) -> list[str]:
        return [text] if text else []

    def status(self) -> dict[str, Any]:
        return {"connected": self.sink is not None, "mode": "loop", "lastError": None}

    async def http_event(self, raw: bytes, headers: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
        event = json.loads(raw)
        message = Inbound(
            channel=self.name,
            account_id=self.account_id,
            event_id=str(event["event_id"]),
            peer_kind="direct",
            peer_id=str(event["sender"]),
            sender=str(event["sender"]),
            text=str(event["text"]),
            target=Target(str(event["sender"])),
        )
        await self.sink.deliver(self, message)
        return 200, b"{}", {"Content-Type": "application/json"}


@hookimpl
def register_channels(register: Any) -> None:
    register("loopchat", LoopChannel)


def kitchen_model(model: str, messages: list[dict[str, Any]], **options: Any) -> str:
    users = [m for m in messages if m.get("role") == "user"]
    return f"kitchen {model} heard: {users[-1]['content'] if users else ''}"


@hookimpl
def register_providers(register: Any) -> None:
    register("kitchen", kitchen_model)


async def hello(request: Request) -> JSONResponse:
    return JSONResponse({"greeting": STATE.get("greeting")})


async def sent(request: Request) -> JSONResponse:
    return JSONResponse({"sent": [m for channel in CHANNELS for m in channel.sent]})


async def boom(request: Request) -> JSONResponse:
    raise RuntimeError("the kitchen route broke")


@hookimpl
def register_routes(register: Any) -> None:
    register("GET", "/hello", hello)
    register("GET", "/public", hello, public=True)
    register("GET", "/sent", sent)
    register("POST", "/boom", boom)


@hookimpl
def message_received(ctx: Any) -> None:
    SEEN.append(("message_received", ctx))


@hookimpl
def message_sending(ctx: Any) -> Rewrite | None:
    SEEN.append(("message_sending", ctx))
    if ctx.text and "SECRET" in ctx.text:
        return Rewrite(text=ctx.text.replace("SECRET", "[hidden]"))
    return None


@hookimpl
def before_prompt_build(ctx: Any) -> str:
    SEEN.append(("before_prompt_build", ctx))
    return "KITCHEN-BLOCK: the kitchen plugin is here."


@hookimpl
def before_tool_call(ctx: Any) -> None:
    SEEN.append(("before_tool_call", ctx))


@hookimpl
def after_tool_call(ctx: Any) -> None:
    SEEN.append(("after_tool_call", ctx))


@hookimpl
def turn_end(ctx: Any) -> None:
    SEEN.append(("turn_end", ctx))


@hookimpl
def session_start(ctx: Any) -> None:
    SEEN.append(("session_start", ctx))


@hookimpl
def session_end(ctx: Any) -> None:
    SEEN.append(("session_end", ctx))


@hookimpl
def gateway_start(ctx: Any) -> None:
    SEEN.append(("gateway_start", ctx))


@hookimpl
def gateway_stop(ctx: Any) -> None:
    SEEN.append(("gateway_stop", ctx))
