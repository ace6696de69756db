"""The plugins' event hooks and tools in a turn (plugins/): the calls loop.py and replies.py make.

Each function returns at its first line when no loaded plugin implements its hook, so a process without
plugins pays an attribute read or two per call (benchmarks/test_bench_plugins.py measures it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openclaw_cli.sessions.keys import parse_key

if TYPE_CHECKING:
    from openclaw_cli.agent.turn.requests import EventSink
    from openclaw_cli.agent.turn.state import TurnContext
    from openclaw_cli.plugins.host import PluginHost


def _host(turn: TurnContext, hook: str) -> PluginHost | None:
    host = turn.services.plugins
    return host if host is not None and host.implements(hook) else None


def _channel(session_key: str) -> str | None:
    try:
        return parse_key(session_key).channel
    except Exception:  # noqa: BLE001 - an unusual key: the hook just gets no channel
        return None


def received(turn: TurnContext) -> str | None:
    """message_received: the text to store and answer (maybe rewritten), or None when a plugin cancelled."""
    return _rewritten(turn, "message_received", turn.request.text)


def sending(turn: TurnContext, text: str) -> str | None:
    """message_sending: the reply to store and send (maybe rewritten), or None when a plugin cancelled it."""
    return _rewritten(turn, "message_sending", text)


def _rewritten(turn: TurnContext, hook: str, text: str) -> str | None:
    """`text` as the plugins implementing `hook` leave it: rewritten, unchanged, or None when cancelled."""
    host = _host(turn, hook)
    if host is None:
        return text
    from openclaw_cli.plugins.contexts import MessageEvent

    request = turn.request
    event = MessageEvent(
        turn.services.agent_id,
        request.session_key,
        _channel(request.session_key),
        request.sender,
        request.user_id,
        text,
    )
    answer = host.rewrite(hook, event)
    return None if answer.cancel else answer.text


class HeldDeltas:
    """A turn's sink that keeps the streamed pieces of the reply back (loop._reply sends the final text)."""

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink

    def __call__(self, kind: str, payload: dict[str, Any]) -> None:
        if kind != "delta":
            self.sink(kind, payload)


def holds_deltas(turn: TurnContext) -> bool:
    """Whether the streamed reply must wait for message_sending (a rewrite must not follow the original)."""
    return _host(turn, "message_sending") is not None


def prompt_blocks(turn: TurnContext, session_id: str) -> list[str]:
    host = _host(turn, "before_prompt_build")
    if host is None:
        return []
    from openclaw_cli.plugins.contexts import PromptEvent

    request = turn.request
    event = PromptEvent(
        turn.services.agent_id, request.session_key, session_id, request.user_id, request.text
    )
    return host.collect("before_prompt_build", event)


def session_event(turn: TurnContext, hook: str, session_id: str, reason: str) -> None:
    host = _host(turn, hook)
    if host is None:
        return
    from openclaw_cli.plugins.contexts import SessionEvent

    host.notify(hook, SessionEvent(turn.services.agent_id, turn.request.session_key, session_id, reason))


def turn_end(turn: TurnContext) -> None:
    host = _host(turn, "turn_end")
    if host is None:
        return
    from openclaw_cli.plugins.contexts import TurnEndEvent

    result = turn.result
    event = TurnEndEvent(
        turn.services.agent_id,
        turn.request.session_key,
        result.session_id,
        result.run_id,
        result.status,
        result.reply,
        result.error,
        dict(result.stages),
    )
    host.notify("turn_end", event)


# -- tools ---------------------------------------------------------------------------------------------


def tool_specs(turn: TurnContext) -> list[dict[str, Any]]:
    """The plugin tools this turn's agent offers its model (agents.list[].tools may restrict them)."""
    host = turn.services.plugins
    if host is None or not host.registered.tools:
        return []
    from openclaw_cli.plugins.tools import specs

    return specs(host, _allowed(turn))


def _allowed(turn: TurnContext) -> list[str] | None:
    for entry in turn.settings.agents.entries:
        if entry.id == turn.services.agent_id:
            return entry.tools
    return None


def run_tool(turn: TurnContext, name: str, arguments: str, builtin: Any) -> dict[str, Any]:
    """One tool call: before_tool_call may block it; a plugin's tool runs isolated, a built-in one as
    `builtin()`; after_tool_call hears of it."""
    host = turn.services.plugins
    tool = host.registered.tools.get(name) if host is not None else None
    if tool is not None and (allowed := _allowed(turn)) is not None and name not in allowed:
        return {"error": f"unknown tool {name!r}"}  # not offered to this agent
    if host is None or not (host.implements("before_tool_call") or host.implements("after_tool_call")):
        return _run(host, tool, arguments, builtin)
    from openclaw_cli.plugins.contexts import ToolCallEvent, ToolResultEvent

    agent, key, owner = turn.services.agent_id, turn.request.session_key, tool.plugin_id if tool else None
    reason = host.check("before_tool_call", ToolCallEvent(agent, key, name, owner, arguments))
    result = {"error": f"the call was not run: {reason}"} if reason else _run(host, tool, arguments, builtin)
    host.notify(
        "after_tool_call", ToolResultEvent(agent, key, name, owner, arguments, result, blocked=bool(reason))
    )
    return result


def _run(host: PluginHost | None, tool: Any, arguments: str, builtin: Any) -> dict[str, Any]:
    if tool is None or host is None:
        result: dict[str, Any] = builtin()
        return result
    from openclaw_cli.plugins.tools import run

    return run(host, tool, arguments)
