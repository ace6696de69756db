"""A test plugin that raises in every hook it can implement."""

from __future__ import annotations

from typing import Any

from openclaw_cli.plugins import hookimpl


def _fail(hook: str) -> None:
    raise RuntimeError(f"faulty fails in {hook}")


@hookimpl
def register_tools(register: Any) -> None:
    register(name="half_registered", description="never kept", parameters={"type": "object"}, fn=print)
    _fail("register_tools")


@hookimpl
def register_channels(register: Any) -> None:
    _fail("register_channels")


@hookimpl
def register_providers(register: Any) -> None:
    _fail("register_providers")


@hookimpl
def register_routes(register: Any) -> None:
    _fail("register_routes")


@hookimpl
def register_skills(register: Any) -> None:
    _fail("register_skills")


@hookimpl
def message_received(ctx: Any) -> None:
    _fail("message_received")


@hookimpl
def message_sending(ctx: Any) -> None:
    _fail("message_sending")


@hookimpl
def before_prompt_build(ctx: Any) -> None:
    _fail("before_prompt_build")


@hookimpl
def before_tool_call(ctx: Any) -> None:
    _fail("before_tool_call")


@hookimpl
def after_tool_call(ctx: Any) -> None:
    _fail("after_tool_call")


@hookimpl
def turn_end(ctx: Any) -> None:
    _fail("turn_end")


@hookimpl
def session_start(ctx: Any) -> None:
    _fail("session_start")


@hookimpl
def session_end(ctx: Any) -> None:
    _fail("session_end")


@hookimpl
def gateway_start(ctx: Any) -> None:
    _fail("gateway_start")


@hookimpl
def gateway_stop(ctx: Any) -> None:
    _fail("gateway_stop")
