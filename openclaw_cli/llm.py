"""The one gateway to remote models (embeddings, rerankers, chat) through litellm.

No other module imports litellm (llm_errors.py only looks at the exceptions it raised). It is imported
lazily (it takes seconds) and configured so that it never phones home, never sends telemetry and never
prints to stdout, which belongs to `--json` output.
Retries are ours, not litellm's or the OpenAI client's, so that their count and backoff follow settings.
Which failures are retried, and how they are described, is llm_errors.py; reading a JSON reply is
llm_reply.py.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, TypeVar

from openclaw_cli.errors import OpenclawError
from openclaw_cli.llm_errors import (
    ContextOverflow,
    InvalidReply,
    ModelUnavailable,
    describe,
    is_retryable,
    overflowed,
)
from openclaw_cli.llm_reply import M, parse_json_reply

T = TypeVar("T")

# Longest single wait between retries, whatever the attempt count.
MAX_BACKOFF_SECONDS = 30.0
DEFAULT_TIMEOUT_SECONDS = 60.0
# Both litellm's own retry loop and the OpenAI client's must be off, or one failure becomes many requests.
_NO_RETRIES: dict[str, Any] = {"num_retries": 0, "max_retries": 0}

_setup_lock = threading.Lock()
_litellm: ModuleType | None = None


def _client() -> ModuleType:
    """litellm, imported once and silenced."""
    global _litellm
    with _setup_lock:
        if _litellm is None:
            # litellm fetches a model price list from GitHub at import time unless told otherwise; the
            # variable is only read by litellm, so setting it here changes nothing else.
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            os.environ.setdefault("LITELLM_TELEMETRY", "False")
            import litellm

            litellm.telemetry = False
            litellm.suppress_debug_info = True
            litellm.set_verbose = False
            litellm.turn_off_message_logging = True
            litellm.drop_params = True
            # litellm turns max_retries=0 into this default (`max_retries or DEFAULT_MAX_RETRIES`) for
            # OpenAI-style clients; our own loop does the retrying.
            litellm.DEFAULT_MAX_RETRIES = 0  # type: ignore[misc]  # declared Final, but read at call time
            litellm.num_retries = None
            for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx", "openai"):
                logging.getLogger(name).setLevel(logging.CRITICAL)
            _litellm = litellm
        return _litellm


def preload(model: str | None = None) -> None:
    """Import and set up litellm now (seconds), so that the first model call does not wait for it.

    With a model, one streamed completion is also made with litellm's `mock_response` (nothing is sent
    anywhere): a first call imports another second of provider, cost and tokenizer code. The HTTP
    transport's modules, which the first real request imports, are loaded too."""
    litellm = _client()
    if model is None:
        return
    stream = litellm.completion(
        **_request(model, 5.0, None, "preload-no-key", messages=[{"role": "user", "content": "hi"}]),
        stream=True,
        stream_options={"include_usage": True},
        mock_response="ok",
    )
    for _piece in stream:
        pass
    import importlib

    transport = ("httpcore._sync.connection_pool", "httpcore._sync.http11", "h11", "h2.connection")
    for name in (*transport, "litellm._service_logger"):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def with_retries(
    call: Callable[[], T],
    what: str,
    *,
    max_retries: int,
    base_delay: float,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """call(), retried with exponential backoff and jitter on transient errors; then ModelUnavailable."""
    attempt = 0
    while True:
        try:
            return call()
        except Exception as exc:
            if isinstance(exc, OpenclawError):
                raise
            retryable = is_retryable(exc)
            if not retryable or attempt >= max_retries:
                tries = f" after {attempt + 1} attempts" if retryable else ""
                raise ModelUnavailable(f"{what} failed{tries} ({describe(exc)})") from exc
            delay = min(MAX_BACKOFF_SECONDS, base_delay * (2**attempt))
            sleep(delay * random.uniform(0.8, 1.2))
            attempt += 1


def _request(
    model: str, timeout: float, api_base: str | None, api_key: str | None, **fields: Any
) -> dict[str, Any]:
    """The keyword arguments of one litellm call; litellm's own retries are off (with_retries does them)."""
    kwargs: dict[str, Any] = {"model": model, "timeout": timeout, **_NO_RETRIES, **fields}
    if api_base:
        kwargs["api_base"] = api_base
    if api_key:
        kwargs["api_key"] = api_key
    return kwargs


def embed(
    model: str,
    texts: Sequence[str],
    api_base: str | None = None,
    dimensions: int | None = None,
    *,
    batch_size: int = 100,
    max_retries: int = 5,
    base_delay: float = 0.5,
    api_key: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
) -> list[list[float]]:
    """One embedding per text, in order. Requests carry at most `batch_size` texts each."""
    if not texts:
        return []
    litellm = _client()
    vectors: list[list[float]] = []
    for start in range(0, len(texts), batch_size):
        batch = list(texts[start : start + batch_size])
        kwargs = _request(model, timeout, api_base, api_key, input=batch)
        if dimensions:
            kwargs["dimensions"] = dimensions
        response = with_retries(
            functools.partial(litellm.embedding, **kwargs),
            f"embedding with {model}",
            max_retries=max_retries,
            base_delay=base_delay,
        )
        vectors.extend(_embedding_rows(response, len(batch), model))
    return vectors


def _embedding_rows(response: Any, expected: int, model: str) -> list[list[float]]:
    items = list(response.data)
    if len(items) != expected:
        raise ModelUnavailable(f"embedding with {model} returned {len(items)} vectors for {expected} texts")

    def field(item: Any, name: str) -> Any:
        return item[name] if isinstance(item, dict) else getattr(item, name)

    # The API may answer out of order; `index` says which input each vector belongs to.
    items.sort(key=lambda item: field(item, "index"))
    return [list(field(item, "embedding")) for item in items]


def rerank(
    model: str,
    query: str,
    documents: Sequence[str],
    api_base: str | None = None,
    top_n: int | None = None,
    *,
    max_retries: int = 2,
    base_delay: float = 0.5,
    api_key: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
) -> list[tuple[int, float]]:
    """(document index, relevance score) pairs, best first, from a Cohere/Jina-style rerank endpoint."""
    if not documents:
        return []
    litellm = _client()
    kwargs = _request(
        model,
        timeout,
        api_base,
        api_key,
        query=query,
        documents=list(documents),
        top_n=top_n or len(documents),
    )
    response = with_retries(
        lambda: litellm.rerank(**kwargs),
        f"rerank with {model}",
        max_retries=max_retries,
        base_delay=base_delay,
    )
    results = response.results or []
    pairs = [(int(r["index"]), float(r["relevance_score"])) for r in results]
    if any(not 0 <= index < len(documents) for index, _ in pairs):
        raise ModelUnavailable(f"rerank with {model} returned an index beyond its {len(documents)} documents")
    return sorted(pairs, key=lambda pair: pair[1], reverse=True)


def complete(
    model: str,
    messages: Sequence[dict[str, Any]],
    api_base: str | None = None,
    *,
    max_retries: int = 2,
    base_delay: float = 0.5,
    api_key: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    **options: Any,
) -> str:
    """The assistant text of one chat completion (options such as temperature pass through to litellm)."""
    litellm = _client()
    kwargs = _request(model, timeout, api_base, api_key, messages=list(messages), **options)
    response = with_retries(
        lambda: litellm.completion(**kwargs),
        f"completion with {model}",
        max_retries=max_retries,
        base_delay=base_delay,
    )
    try:
        content = response.choices[0].message.content
    except (AttributeError, IndexError) as exc:
        raise ModelUnavailable(f"completion with {model} returned no message") from exc
    return content or ""


def complete_json(
    model: str,
    messages: Sequence[dict[str, Any]],
    schema: type[M],
    api_base: str | None = None,
    *,
    max_retries: int = 2,
    base_delay: float = 0.5,
    api_key: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    **options: Any,
) -> M:
    """A chat completion whose reply must be JSON fitting `schema`.

    An invalid reply is answered once with what was wrong, and the model asked again; a second invalid
    reply raises InvalidReply, so the caller can fall back. Transport errors are retried by complete().
    """
    conversation = list(messages)
    for attempt in range(2):
        text = complete(
            model,
            conversation,
            api_base,
            max_retries=max_retries,
            base_delay=base_delay,
            api_key=api_key,
            timeout=timeout,
            **options,
        )
        try:
            return parse_json_reply(text, schema)
        except InvalidReply as exc:
            if attempt == 1:
                raise
            conversation += [
                {"role": "assistant", "content": text},
                {"role": "user", "content": f"That reply was not valid: {exc}. Answer with the JSON only."},
            ]
    raise AssertionError("unreachable")


# -- streaming chat with tools (the agent loop) ----------------------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it (it may be invalid: the caller checks)


@dataclass(frozen=True)
class Usage:
    """Tokens model calls used, as the provider reported them; cost in USD where litellm knows the
    model's price (None where it does not: an unknown price is not a price of 0)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None

    def __add__(self, other: Usage) -> Usage:
        cost = None if self.cost is None and other.cost is None else (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(
            self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens, cost
        )


@dataclass(frozen=True)
class StreamPiece:
    """One step of a streamed reply: a piece of text, the tool calls the model asked for (whole), or
    (last) the usage the provider reported for the call."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None


def _usage(litellm: ModuleType, model: str, reported: Any) -> Usage:
    """The provider's usage of one call, priced by litellm's cost map (None for a model it has not)."""
    prompt = int(getattr(reported, "prompt_tokens", 0) or 0)
    completion = int(getattr(reported, "completion_tokens", 0) or 0)
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt, completion_tokens=completion
        )
        cost: float | None = float(prompt_cost) + float(completion_cost)
    except Exception:  # noqa: BLE001 - an unpriced model; the turn never fails over its cost
        cost = None
    return Usage(prompt, completion, cost)


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
    litellm = _client()
    extra: dict[str, Any] = {"tools": list(tools)} if tools else {}
    options.setdefault("stream_options", {"include_usage": True})
    kwargs = _request(
        model, timeout, api_base, api_key, messages=list(messages), stream=True, **extra, **options
    )
    try:
        stream = with_retries(
            lambda: litellm.completion(**kwargs),
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
        yield StreamPiece(usage=_usage(litellm, model, reported))


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
