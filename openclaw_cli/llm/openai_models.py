"""Models behind the OpenAI-compatible protocol (`openai/...`: OpenAI itself, vLLM, llama.cpp, LM Studio, a
proxy), reached through the openai package directly instead of through litellm.

litellm serves these models with the same package, after ~3 s of import and ~10 ms of its own CPU per call:
on a model that answers at once, a streamed call cost 13.7 ms of CPU through litellm and 3.6 ms here, and a
process's first call 4.2 s against 0.8 s (issue 23: the first chat turn and every turn's overhead). Every
other provider, and OpenAI's reasoning models (whose parameters litellm rewrites: `max_completion_tokens`,
no `temperature`), still go through litellm (llm.py).

What callers see does not change: replies have the attributes litellm's have (choices, message, delta,
usage, data), litellm's exceptions are subclasses of this package's (so llm_errors.py classifies both
alike), retries stay ours (the client's own are off), and a price comes from the cost map litellm ships.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

PREFIX = "openai/"
# OpenAI's reasoning models refuse parameters the others take (temperature 0, max_tokens); litellm maps
# them, so they stay on its path.
_REASONING = re.compile(r"^(o\d|gpt-5|codex)", re.IGNORECASE)
_COST_MAP = "model_prices_and_context_window_backup.json"
# litellm's request fields that are not the OpenAI API's: the retry counts (ours do the retrying) and the
# connection settings, which belong to the client.
_NOT_FIELDS = frozenset({"model", "timeout", "api_base", "api_key", "num_retries", "max_retries"})

LOCAL_PLACEHOLDER_KEY = "openclaw-local-server-no-key"

_clients: dict[tuple[str | None, str | None, float], Any] = {}
_clients_lock = threading.Lock()


def handles(model: str) -> bool:
    """Whether `model` goes through the openai package: the `openai/` prefix, not a reasoning model."""
    return model.startswith(PREFIX) and not _REASONING.match(model[len(PREFIX) :])


def on_loopback(api_base: str | None) -> bool:
    """Whether `api_base` names a server on this machine (localhost, 127.0.0.0/8, ::1)."""
    import ipaddress
    from urllib.parse import urlsplit

    if not api_base:
        return False
    try:
        host = urlsplit(api_base).hostname
    except ValueError:
        return False
    if host is None:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def client(api_base: str | None, api_key: str | None, timeout: float) -> Any:
    """One openai.OpenAI per address, key and timeout, kept for the process: building one takes ~20 ms, and
    a kept one keeps its connections open. Its own retries are off (llm.with_retries does them)."""
    # The package reads OPENAI_API_KEY itself when no key is given; reading it here too keeps a client
    # built with one key from being reused after the key changed. A server on loopback (llama.cpp, vLLM,
    # LM Studio, Ollama) usually wants no key, but the package refuses to build a client without one
    # ("Missing credentials"): it gets a placeholder, which such a server ignores.
    key = (
        api_key
        or os.environ.get("OPENAI_API_KEY")
        or (LOCAL_PLACEHOLDER_KEY if on_loopback(api_base) else None)
    )
    slot = (api_base, key, timeout)
    with _clients_lock:
        found = _clients.get(slot)
        if found is None:
            import openai

            found = openai.OpenAI(base_url=api_base, api_key=key, timeout=timeout, max_retries=0)
            _clients[slot] = found
    return found


def _split(kwargs: dict[str, Any]) -> tuple[Any, str, dict[str, Any]]:
    """litellm-style keyword arguments (llm.request_kwargs) as (client, model name, API fields)."""
    model = str(kwargs["model"])[len(PREFIX) :]
    api = client(kwargs.get("api_base"), kwargs.get("api_key"), float(kwargs["timeout"]))
    return api, model, {name: value for name, value in kwargs.items() if name not in _NOT_FIELDS}


def completion(**kwargs: Any) -> Any:
    """A chat completion (a stream of chunks with `stream=True`), taking litellm.completion's arguments."""
    from openai import Stream
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

    api, model, fields = _split(kwargs)
    # The client's `post` sends the body as it is. `chat.completions.create` would first walk every message
    # and tool through the parameters' type annotations (2-3 ms of CPU a call, growing with the history),
    # which changes nothing in a body that is plain JSON already (tests/test_llm_routes.py compares them).
    return api.post(
        "/chat/completions",
        body={"model": model, **fields},
        cast_to=ChatCompletion,
        stream=bool(fields.get("stream")),
        stream_cls=Stream[ChatCompletionChunk],
    )


def embedding(**kwargs: Any) -> Any:
    """Embeddings, taking litellm.embedding's arguments. Floats are asked for, as litellm asks: the
    package's default (base64) would round the vectors to float32 on the way."""
    from openai.types import CreateEmbeddingResponse

    api, model, fields = _split(kwargs)
    fields.setdefault("encoding_format", "float")
    return api.post("/embeddings", body={"model": model, **fields}, cast_to=CreateEmbeddingResponse)


def preload(api_base: str | None, timeout: float, api_key: str | None = None) -> None:
    """Import the package and what its first request and first price need (~0.6 s), and build the client."""
    import openai.types.chat  # noqa: F401 - the reply types, imported by the first call otherwise

    # Without a key yet, the call will say so, in the provider's own words.
    with contextlib.suppress(Exception):
        client(api_base, api_key, timeout)
    _prices()


def price(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """USD for one call by the per-token prices of litellm's packaged cost map; None for a model it does
    not list (an unknown price is not a price of 0)."""
    prices = _prices()
    entry = prices.get(model) or prices.get(model[len(PREFIX) :] if model.startswith(PREFIX) else model)
    if not isinstance(entry, dict):
        return None
    per_prompt = entry.get("input_cost_per_token")
    per_completion = entry.get("output_cost_per_token")
    if not isinstance(per_prompt, int | float) or not isinstance(per_completion, int | float):
        return None
    return float(per_prompt) * prompt_tokens + float(per_completion) * completion_tokens


@functools.cache
def _prices() -> dict[str, Any]:
    """litellm's packaged cost map (3.5 MB, ~25 ms), found without importing litellm; {} without it."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(next(iter(spec.submodule_search_locations))) / _COST_MAP
    try:
        loaded = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}
