"""The one gateway to remote models (embeddings, rerankers, chat) through litellm.

No other module imports litellm. It is imported lazily (it takes seconds) and configured so that it never
phones home, never sends telemetry and never prints to stdout, which belongs to `--json` output. Models
behind the OpenAI-compatible protocol (`openai/...`) skip it: llm_openai.py calls them through the openai
package, which litellm would call for them (`route` picks).
Retries are ours, not litellm's or the OpenAI client's, so that their count and backoff follow settings.
Which failures are retried, and how they are described, is llm_errors.py; reading a JSON reply is
llm_reply.py; the agent loop's streamed chat with tools is llm_stream.py, through this module's client.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, TypeVar

from openclaw_cli.core.errors import OpenclawError
from openclaw_cli.llm import openai_models as llm_openai
from openclaw_cli.llm.errors import InvalidReply, ModelUnavailable, describe, is_retryable
from openclaw_cli.llm.reply import M, parse_json_reply

T = TypeVar("T")

# Longest single wait between retries, whatever the attempt count.
MAX_BACKOFF_SECONDS = 30.0
DEFAULT_TIMEOUT_SECONDS = 60.0
# Both litellm's own retry loop and the OpenAI client's must be off, or one failure becomes many requests.
_NO_RETRIES: dict[str, Any] = {"num_retries": 0, "max_retries": 0}

_setup_lock = threading.Lock()
_litellm: ModuleType | None = None


def client() -> ModuleType:
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
            # No logging callbacks are registered, yet by default every streamed chunk is handed to a
            # thread pool that runs litellm's (empty) success logging in a new event loop: work that
            # competes with the turn for the interpreter, for nothing (issue 23).
            litellm.disable_streaming_logging = True
            # litellm turns max_retries=0 into this default (`max_retries or DEFAULT_MAX_RETRIES`) for
            # OpenAI-style clients; our own loop does the retrying.
            litellm.DEFAULT_MAX_RETRIES = 0  # type: ignore[misc]  # declared Final, but read at call time
            litellm.num_retries = None
            for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx", "openai"):
                logging.getLogger(name).setLevel(logging.CRITICAL)
            _litellm = litellm
        return _litellm


# Model providers that plugins registered (plugins/providers.py), by the prefix of `<provider>/<model>`:
# filled by the process that loaded its plugins (use_providers), empty otherwise.
_plugin_providers: dict[str, Any] = {}


def use_providers(providers: dict[str, Any]) -> None:
    """The plugin providers this process routes to (set once its plugins are loaded)."""
    _plugin_providers.clear()
    _plugin_providers.update(providers)


def plugin_provider(model: str) -> Any:
    """The plugin provider that answers `model`, or None."""
    return _plugin_providers.get(model.split("/", 1)[0]) if _plugin_providers and "/" in model else None


def route(model: str) -> Any:
    """What calls `model`: a plugin's provider for its `<provider>/` prefix, llm_openai for an `openai/`
    model (its functions take litellm's arguments and answer in litellm's shapes), litellm for any other."""
    provider = plugin_provider(model)
    if provider is not None:
        return provider
    return llm_openai if llm_openai.handles(model) else client()


def preload(
    model: str | None = None,
    api_base: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    api_key: str | None = None,
) -> None:
    """Load now (seconds) what the first call of `model` would load, so that it does not wait for it.

    An `openai/` model needs the openai package and its client. Any other model needs litellm, and one
    streamed completion made with litellm's `mock_response` (nothing is sent anywhere): a first call
    imports another second of provider, cost and tokenizer code. The HTTP transport's modules, which the
    first real request imports, are loaded too."""
    if model is not None and plugin_provider(model) is not None:
        return  # a plugin's: nothing of ours to load
    if model is not None and llm_openai.handles(model):
        llm_openai.preload(api_base, timeout, api_key)
        _import_transport()
        return
    litellm = client()
    if model is None:
        return
    stream = litellm.completion(
        **request_kwargs(model, 5.0, None, "preload-no-key", messages=[{"role": "user", "content": "hi"}]),
        stream=True,
        stream_options={"include_usage": True},
        mock_response="ok",
    )
    for _piece in stream:
        pass
    _import_transport("litellm._service_logger")


def _import_transport(*extra: str) -> None:
    import importlib

    transport = ("httpcore._sync.connection_pool", "httpcore._sync.http11", "h11", "h2.connection")
    for name in (*transport, *extra):
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


def request_kwargs(
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
    embedding = route(model).embedding
    vectors: list[list[float]] = []
    for start in range(0, len(texts), batch_size):
        batch = list(texts[start : start + batch_size])
        kwargs = request_kwargs(model, timeout, api_base, api_key, input=batch)
        if dimensions:
            kwargs["dimensions"] = dimensions
        response = with_retries(
            functools.partial(embedding, **kwargs),
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
    litellm = client()
    kwargs = request_kwargs(
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
    model: str, messages: Sequence[dict[str, Any]], api_base: str | None = None, **options: Any
) -> str:
    """The assistant text of one chat completion: `completion_response`'s options (retries, timeout, key)
    and the request's own (temperature, max_tokens) pass through."""
    return completion_response(model, messages, api_base, **options)[0]


def completion_response(
    model: str,
    messages: Sequence[dict[str, Any]],
    api_base: str | None = None,
    *,
    max_retries: int = 2,
    base_delay: float = 0.5,
    api_key: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    **options: Any,
) -> tuple[str, Any]:
    """`complete`'s text and the provider's whole response (its `usage`: llm_usage.complete_counted)."""
    completion = route(model).completion
    kwargs = request_kwargs(model, timeout, api_base, api_key, messages=list(messages), **options)
    response = with_retries(
        lambda: completion(**kwargs),
        f"completion with {model}",
        max_retries=max_retries,
        base_delay=base_delay,
    )
    try:
        content = response.choices[0].message.content
    except (AttributeError, IndexError) as exc:
        raise ModelUnavailable(f"completion with {model} returned no message") from exc
    return content or "", response


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
