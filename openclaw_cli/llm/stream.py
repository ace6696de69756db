"""Streamed chat completions with tools, for the agent loop: text piece by piece, tool calls whole, then
the call's usage (priced by litellm's cost map where it knows the model).

The client, its settings and the retries are llm.py's: this module never imports litellm itself. An
`openai/` model is priced by llm_openai (the same packaged cost map, without importing litellm).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

from openclaw_cli.core.errors import OpenclawError
from openclaw_cli.llm.calls import DEFAULT_TIMEOUT_SECONDS, request_kwargs, route, with_retries
from openclaw_cli.llm.errors import ContextOverflow, ModelUnavailable, describe, overflowed
from openclaw_cli.llm.usage import Usage, call_usage


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it (it may be invalid: the caller checks)


@dataclass(frozen=True)
class StreamPiece:
    """One step of a streamed reply: a piece of text, the tool calls the model asked for (whole), or
    (last) the usage the provider reported for the call."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None


def _close_stream(stream: Any) -> None:
    close = getattr(stream, "close", None)
    if callable(close):
        try:
            close()
        except Exception:  # noqa: BLE001 - a stream that cannot be closed is already gone
            return


def complete_stream(
    model: str,
    messages: Sequence[dict[str, Any]],
    api_base: str | None = None,
    *,
    tools: Sequence[dict[str, Any]] | None = None,
    max_retries: int = 2,
    base_delay: float = 0.5,
    api_key: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    **options: Any,
) -> Generator[StreamPiece, None, None]:
    """A chat completion streamed piece by piece; tool calls come whole, then the call's usage (asked
    for with stream_options.include_usage; litellm drops that option for providers without it).

    Opening the stream is retried like complete(); once text has been yielded a failure is not retried
    (the caller has shown it), it raises ModelUnavailable. A context-window overflow raises ContextOverflow.
    """
    completion = route(model).completion
    extra: dict[str, Any] = {"tools": list(tools)} if tools else {}
    options.setdefault("stream_options", {"include_usage": True})
    kwargs = request_kwargs(
        model, timeout, api_base, api_key, messages=list(messages), stream=True, **extra, **options
    )
    try:
        stream = with_retries(
            lambda: completion(**kwargs),
            f"completion with {model}",
            max_retries=max_retries,
            base_delay=base_delay,
        )
    except ModelUnavailable as exc:
        if overflowed(exc):
            raise ContextOverflow(f"the conversation is too long for {model} ({exc.message})") from exc
        raise
    calls: dict[int, dict[str, str]] = {}
    reported: Any = None
    try:
        for chunk in stream:
            reported = getattr(chunk, "usage", None) or reported  # the last chunk, without choices
            choices = getattr(chunk, "choices", None) or []
            delta = getattr(choices[0], "delta", None) if choices else None
            if delta is None:
                continue
            text = getattr(delta, "content", None)
            if text:
                yield StreamPiece(text=text)
            for call in getattr(delta, "tool_calls", None) or []:
                _merge_tool_call(calls, call)
    except Exception as exc:
        if isinstance(exc, OpenclawError):
            raise
        if overflowed(exc):
            raise ContextOverflow(f"the conversation is too long for {model}") from exc
        raise ModelUnavailable(f"completion with {model} broke off ({describe(exc)})") from exc
    finally:
        # Close the HTTP response here, in the caller's thread, also when the caller stops early (a
        # cancelled turn). Left to the garbage collector, litellm's stream is closed at whatever
        # allocation triggers the collection: inside httpx's connection pool, with its lock held, that
        # close waits for the same lock, and every request of the process hangs behind it.
        _close_stream(stream)
    if calls:
        yield StreamPiece(
            tool_calls=tuple(
                ToolCall(c["id"] or f"call_{i}", c["name"], c["arguments"] or "{}")
                for i, c in sorted(calls.items())
            )
        )
    if reported is not None:
        yield StreamPiece(usage=call_usage(model, reported))


def _merge_tool_call(calls: dict[int, dict[str, str]], delta: Any) -> None:
    """Tool calls stream in fragments keyed by index: the id and name once, the arguments in pieces."""
    index = getattr(delta, "index", None)
    index = index if isinstance(index, int) else len(calls)
    entry = calls.setdefault(index, {"id": "", "name": "", "arguments": ""})
    if getattr(delta, "id", None):
        entry["id"] = str(delta.id)
    function = getattr(delta, "function", None)
    if function is not None:
        if getattr(function, "name", None):
            entry["name"] = str(function.name)
        if getattr(function, "arguments", None):
            entry["arguments"] += str(function.arguments)
