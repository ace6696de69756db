"""A test plugin that blocks the model's memory_forget calls and cancels messages saying "drop this"."""

from __future__ import annotations

from typing import Any

from openclaw_cli.plugins import hookimpl
from openclaw_cli.plugins.contexts import Block, Rewrite


@hookimpl
def before_tool_call(ctx: Any) -> Block | None:
    return Block("forgetting is switched off") if ctx.tool == "memory_forget" else None


@hookimpl
def message_received(ctx: Any) -> Rewrite | None:
    return Rewrite(cancel=True) if ctx.text and "drop this" in ctx.text else None
