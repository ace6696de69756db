"""The errors of remote model calls (llm.py): the ones callers catch, which failures a retry may fix, and
the one line that describes a failure.

Exceptions are classified by the openai package's classes, which litellm's subclass: one test fits both
routes (llm.route), and classifying an error never imports litellm (seconds).
"""

from __future__ import annotations

import re

from openclaw_cli.core.errors import OpenclawError

# litellm prefixes its class names twice ("litellm.RateLimitError: RateLimitError: ..."), the openai package
# the status ("Error code: 429 - ..."), which describe() says its own way: noise.
_NOISE_PREFIX = re.compile(r"^(litellm\.\w+: )?(\w+Error: )?(Error code: \d+ - )?")
# How OpenAI-compatible servers word a prompt longer than the context (OpenAI, vLLM, llama.cpp, others).
_OVERFLOW_WORDS = re.compile(
    r"maximum context length|context length|context window|context size|context limit|prompt is too long",
    re.IGNORECASE,
)


class ModelUnavailable(OpenclawError):
    """A remote model could not answer (after retries, or with an error retrying cannot fix)."""


class InvalidReply(ModelUnavailable):
    """The model answered, but not with what was asked for (prose, truncated or mistyped JSON)."""


class ContextOverflow(ModelUnavailable):
    """The request was longer than the model's context window (the caller may compact and retry)."""


def refused_connection(exc: BaseException) -> ConnectionRefusedError | None:
    """The ConnectionRefusedError behind a failed call, if that is what it was.

    litellm reports a refused connection as an InternalServerError with status 500 ("Connection
    error."), so the cause chain is the only place that says nobody is listening. Retrying cannot help:
    the server is down or the address is wrong, and backing off only made `memory add` hang for 40 s.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, ConnectionRefusedError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def client_side(exc: BaseException) -> bool:
    """The OpenAI client refused to send anything (e.g. no API key); litellm still labels it HTTP 500."""
    current: BaseException | None = exc
    for _ in range(8):
        if current is None:
            return False
        if type(current).__name__ == "OpenAIError" and type(current).__module__.startswith("openai"):
            return True
        current = current.__cause__ or current.__context__
    return False


def is_retryable(exc: Exception) -> bool:
    """Rate limits, server errors, timeouts and dropped connections may pass; bad requests, bad keys and
    refused connections won't."""
    import openai

    if refused_connection(exc) is not None or client_side(exc):
        return False
    # APIConnectionError covers timeouts (APITimeoutError) and litellm's Timeout; litellm's
    # ServiceUnavailableError is an APIStatusError with status 503, caught by the status test below.
    retryable = (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError)
    if isinstance(exc, retryable):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


# The openai package's words when it has no key (litellm passes them on, or says "Missing credentials").
_NO_KEY_WORDS = re.compile(r"api_key client option must be set|missing credentials", re.IGNORECASE)
NO_KEY = (
    "no API key: set `openclaw config set llm.apiKey KEY` or OPENAI_API_KEY (a local server on loopback, "
    "llm.apiBase http://127.0.0.1:PORT/v1, needs none)"
)


def describe(exc: Exception) -> str:
    if refused_connection(exc) is not None:
        return "connection refused: nothing is listening at the configured address (check apiBase)"
    if _NO_KEY_WORDS.search(str(getattr(exc, "message", None) or exc)):
        return NO_KEY
    status = getattr(exc, "status_code", None)
    text = str(getattr(exc, "message", None) or exc).strip().splitlines()
    first = text[0] if text else type(exc).__name__
    first = _NOISE_PREFIX.sub("", first)
    if len(first) > 200:
        first = first[:197] + "..."
    return f"HTTP {status}: {first}" if isinstance(status, int) else f"{type(exc).__name__}: {first}"


def overflowed(exc: BaseException) -> bool:
    """Whether the request was longer than the model's context window: litellm says so with its own class;
    an OpenAI-compatible server answers HTTP 400 with OpenAI's code or, for some servers, only in words."""
    current: BaseException | None = exc
    for _ in range(8):
        if current is None:
            return False
        if type(current).__name__ == "ContextWindowExceededError":
            return True
        if getattr(current, "status_code", None) in (400, 413) and (
            getattr(current, "code", None) == "context_length_exceeded"
            or _OVERFLOW_WORDS.search(str(getattr(current, "message", None) or current))
        ):
            return True
        current = current.__cause__ or current.__context__
    return False
