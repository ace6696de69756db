"""A plugin's model provider as llm.py routes it: an object with litellm's `completion(**kwargs)`, answering
in the shapes the agent reads (choices[0].message / choices[0].delta, usage), like llm_openai.py.

The plugin's callable is simpler: `completion(model=, messages=, tools=, stream=, **options)` gets the model
name without its `<provider>/` prefix and returns an OpenAI-style chat completion as a dict, or a plain str
(the reply text); with `stream=True` it may also return an iterable of OpenAI-style chunks (dicts). A whole
answer to a streamed request is sent as one chunk. Retries, timeouts and errors stay llm.py's: what the
callable raises is a failed model call (reported to the user; the turn's message is kept).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from types import SimpleNamespace
from typing import Any

# litellm's request fields that are the connection's, not the provider's.
_CONNECTION = frozenset(
    {"model", "timeout", "api_base", "api_key", "num_retries", "max_retries", "stream_options"}
)


def wrap(value: Any) -> Any:
    """A dict (recursively) as an object with attributes, as litellm's responses have."""
    if isinstance(value, dict):
        return SimpleNamespace(**{str(k): wrap(v) for k, v in value.items()})
    if isinstance(value, list):
        return [wrap(v) for v in value]
    return value


def _message(answer: Any) -> dict[str, Any]:
    if isinstance(answer, str):
        return {"role": "assistant", "content": answer}
    return dict(answer["choices"][0]["message"])


def _whole(answer: Any) -> dict[str, Any]:
    if isinstance(answer, str):
        return {"choices": [{"index": 0, "message": _message(answer), "finish_reason": "stop"}]}
    return dict(answer)


def _as_chunks(answer: Any) -> Iterator[Any]:
    """A whole answer as a stream: its text and tool calls in one chunk, then its usage."""
    message = _message(answer)
    calls = [{"index": i, **call} for i, call in enumerate(message.get("tool_calls") or [])]
    delta: dict[str, Any] = {"content": message.get("content")}
    if calls:
        delta["tool_calls"] = calls
    yield wrap({"choices": [{"index": 0, "delta": delta}]})
    usage = answer.get("usage") if isinstance(answer, dict) else None
    if usage:
        yield wrap({"choices": [], "usage": usage})


class PluginProvider:
    """What llm.route returns for `<name>/<model>`."""

    def __init__(self, name: str, completion: Any) -> None:
        self.name = name
        self._completion = completion

    def completion(self, **kwargs: Any) -> Any:
        model = str(kwargs["model"]).split("/", 1)[1]
        stream = bool(kwargs.get("stream"))
        fields = {k: v for k, v in kwargs.items() if k not in _CONNECTION and k != "stream"}
        fields.setdefault("tools", None)
        answer = self._completion(model=model, stream=stream, **fields)
        if not stream:
            return wrap(_whole(answer))
        if isinstance(answer, str | dict):
            return _as_chunks(answer)
        if isinstance(answer, Iterable):
            return (wrap(chunk) for chunk in answer)
        raise TypeError(f"provider {self.name} returned {type(answer).__name__}")

    def embedding(self, **kwargs: Any) -> Any:
        # A plugin provider is a chat model (issue 50 defines it so); an embedding model named after one is
        # the user's configuration to change, said in one line, not a failed call to retry.
        from openclaw_cli.core.errors import ConfigError

        raise ConfigError(
            f"memory.embedding.model {kwargs.get('model')!r} names the plugin provider {self.name!r}, which "
            "serves chat models only",
            hint="set memory.embedding.model to a local model or an API embedding model",
        )


def providers_of(host: Any) -> dict[str, PluginProvider]:
    return {name: PluginProvider(name, d.completion) for name, d in host.registered.providers.items()}
