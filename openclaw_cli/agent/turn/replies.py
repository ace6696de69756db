"""One model call of a turn and what it asks for: the reply streamed to the turn's sink (usage added to
the turn's result), and the memory tools it calls run, with the calls and their results stored as one
unit of the session's history.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from openclaw_cli.agent.tools.builtin import run_tool
from openclaw_cli.agent.turn import plugin_hooks

if TYPE_CHECKING:
    from openclaw_cli.agent.turn.state import TurnContext
    from openclaw_cli.llm.stream import ToolCall


def stream_reply(
    turn: TurnContext, model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> tuple[str, tuple[ToolCall, ...]]:
    from contextlib import closing

    from openclaw_cli.llm import stream as llm_stream

    settings = turn.settings.llm
    pieces: list[str] = []
    calls: tuple[ToolCall, ...] = ()
    turn.call_usage = None
    stream = llm_stream.complete_stream(
        model,
        messages,
        settings.api_base,
        api_key=settings.api_key,
        tools=tools or None,
        max_retries=settings.max_retries,
        timeout=settings.timeout_seconds,
    )
    with closing(stream):  # a cancelled turn hangs up on the model now, not when the stream is collected
        for piece in stream:
            if turn.cancel.is_set():
                break
            if piece.text:
                pieces.append(piece.text)
                turn.sink("delta", {"text": piece.text})
            if piece.tool_calls:
                calls = piece.tool_calls
            if piece.usage is not None:
                turn.add_usage(piece.usage)
                turn.call_usage = piece.usage if turn.call_usage is None else turn.call_usage + piece.usage
    return "".join(pieces), calls


def run_tools(turn: TurnContext, session_id: str, text: str, calls: tuple[ToolCall, ...]) -> None:
    """Store the assistant's tool calls, run each, store each result (one unit in the history)."""
    store = turn.services.sessions
    stored_calls = [
        {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
        for call in calls
    ]
    store.append(
        session_id,
        "assistant",
        text,
        turn.now(),
        tool_calls=stored_calls,
        model=turn.model,
        tokens=turn.reply_tokens(),
    )
    turn.appended += 1
    for call in calls:

        def builtin(call: ToolCall = call) -> dict[str, Any]:
            return run_tool(
                call.name,
                call.arguments,
                turn.services.memory,
                turn.request.user_id,
                lambda query, k: turn.services.search_transcripts(query, k, turn.request.user_id),
                expander=turn.expander(),
                lock=turn.services.memory_lock,
                notes=turn.notes,
                skill_reader=turn.skill_reader(),
            )

        # a plugin's tool, or a built-in one; the plugins' tool hooks around either (plugin_hooks.py)
        result = plugin_hooks.run_tool(turn, call.name, call.arguments, builtin)
        text_result = json.dumps(result, ensure_ascii=False)
        store.append(session_id, "tool", text_result, turn.now(), tool_call_id=call.id)
        turn.appended += 1
        turn.sink("tool", {"name": call.name, "arguments": call.arguments, "result": result})
