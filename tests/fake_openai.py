"""A small OpenAI-compatible HTTP server on 127.0.0.1: the only stand-in the tests use (for remote models).

    from tests import fake_openai as fake_server
    fake_openai = fake_server.fake_openai  # makes the fixture available in a test file (or in conftest.py)

    def test_x(fake_openai):
        fake_openai.url          # "http://127.0.0.1:PORT/v1", the api_base to configure
        fake_openai.fail_next(2, status=429)
        fake_openai.script_chat("first reply", "second reply")
        fake_openai.requests     # every request: Recorded(path, body, headers)
        fake_openai.usages       # (body, usage) of every chat completion: the token counts reported
        fake_openai.delay = 0.5  # seconds before every answer (timeouts, aborts)
        fake_openai.respond_with(lambda body: "reply computed from the request")
        fake_openai.script_chat({"role": "assistant", "content": None, "tool_calls": [...]})
        fake_openai.expand = lambda query: '{"phrasings": ["..."]}'  # query expansion's answers
        fake_openai.fail_next_expansions(1, status=500)
        with fake_openai.holding() as hold:  # chat answers wait until the test lets them go
            ...; assert hold.wait_arrived(1); ...; hold.release()

Endpoints: POST /v1/embeddings (deterministic hashed bag-of-words vectors, `dimensions` honoured, float or
base64 encoding), POST /v1/chat/completions (scripted replies in order, then the `respond_with` function,
then `default_reply`; a reply is a text or a whole assistant message with `tool_calls`; `"stream": true`
answers as server-sent events, one chunk per word, `chunk_delay` seconds apart, and a usage chunk when
`stream_options.include_usage` asks), POST /v1/rerank and
/rerank (Cohere/Jina-style results scored by query-word overlap).

A query-expansion request (memory/search/legs/expansion.py: its system prompt) is answered apart, by `expand`
(default: no phrasings), and recorded in `expansion_requests` only: it takes none of the scripted replies,
failures or delay meant for the agent's requests, so a test that does not care about expansion sees the
requests it saw before it existed.

Run standalone (for a process that is not the test's, e.g. a chat in tmux):
`python -m tests.fake_openai [--port N]` prints its URL; POST /control/script {"replies": [...]},
/control/fail {"count", "status"} and /control/delay {"seconds"} steer it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

FAKE_API_KEY = "sk-fake-openclaw-test"
# How often a fake server's loop looks for a stop: `shutdown()` waits for the loop to notice, and the
# standard library's 0.5 s made every fake's stop (one per test using one) cost up to half a second.
STOP_POLL_S = 0.05
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class Recorded:
    path: str
    body: Any
    headers: dict[str, str]


Reply = str | dict[str, Any]


def last_user_text(body: dict[str, Any]) -> str | None:
    """The content of a chat request's last user message (None without one)."""
    users = [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    return str(users[-1].get("content")) if users else None


def asking(*texts: str) -> Callable[[dict[str, Any]], bool]:
    """For `holding(only=...)`: the chat requests whose last user message is one of `texts`."""
    return lambda body: last_user_text(body) in texts


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def hashed_vector(text: str, dimensions: int) -> list[float]:
    """Words hashed into `dimensions` signed buckets, L2-normalised: shared words give similar vectors."""
    vector = [0.0] * dimensions
    for word in words(text) or [""]:
        digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
        bucket = int.from_bytes(digest[:4], "little") % dimensions
        vector[bucket] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def overlap_score(query: str, document: str) -> float:
    """Share of the query's distinct words found in the document, in [0, 1]."""
    wanted = set(words(query))
    return len(wanted & set(words(document))) / len(wanted) if wanted else 0.0


# How long a held answer waits for its release at most: a test that failed before releasing must not
# leave the client it held (a gateway, a worker thread) hanging for ever.
HOLD_LIMIT = 120.0


class Hold:
    """Chat answers held back until the test releases them, in the order their requests arrived.

    What a test needs in flight (a model call under way while it steers, aborts or checks that a caller
    did not wait) stays in flight for exactly as long as the test needs, where a sleeping fake model only
    made it likely. A held answer is computed (the responder has seen the request) but not yet sent; a
    streamed one has sent its first chunk of content, so the client has seen the reply begin."""

    def __init__(self, only: Callable[[dict[str, Any]], bool] | None = None) -> None:
        self.only = only  # which chat requests are held (by their body); None: all
        self._cond = threading.Condition()
        self.arrived = 0  # chat requests that reached the hold so far
        self._released = 0  # the first `_released` of them may go on
        self._open = False

    def wait_arrived(self, count: int = 1, timeout: float = 30) -> bool:
        """Wait until `count` chat requests in all have reached the hold; False after `timeout`."""
        with self._cond:
            return self._cond.wait_for(lambda: self.arrived >= count, timeout)

    def release(self, count: int = 1) -> None:
        """Let the next `count` held (or yet to arrive) answers go on."""
        with self._cond:
            self._released += count
            self._cond.notify_all()

    def open(self) -> None:
        """Let every answer through, held now or later."""
        with self._cond:
            self._open = True
            self._cond.notify_all()

    def pass_through(self) -> None:
        """Called by the server thread of a chat request: wait for this request's turn to be released."""
        with self._cond:
            self.arrived += 1
            ticket = self.arrived
            self._cond.notify_all()
            self._cond.wait_for(lambda: self._open or self._released >= ticket, HOLD_LIMIT)


@dataclass
class FakeOpenAI:
    dimensions: int = 64
    default_reply: str = "ok"
    # When set, /rerank answers with at most this many results whatever top_n asks (as some APIs do).
    rerank_limit: int | None = None
    # Seconds before every answer, and between the chunks of a streamed one.
    delay: float = 0.0
    chunk_delay: float = 0.0
    requests: list[Recorded] = field(default_factory=list)
    # (request body, usage) of every chat completion answered: what its client should have been told.
    usages: list[tuple[dict[str, Any], dict[str, int]]] = field(default_factory=list)
    broken_streams: int = 0  # streamed answers the client hung up on before the end
    _replies: deque[Reply] = field(default_factory=deque)
    _responder: Callable[[dict[str, Any]], Reply] | None = None
    _failures: deque[tuple[int, str | None, str | None]] = field(default_factory=deque)
    # Query expansion (see the module docstring): query -> reply text.
    expand: Callable[[str], str] | None = None
    expansion_requests: list[Recorded] = field(default_factory=list)
    # (query, usage) of every expansion answered: what a turn that asked should count.
    expansion_usages: list[tuple[str, dict[str, int]]] = field(default_factory=list)
    _expansion_failures: deque[int] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None
    _hold: Hold | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def fail_next(
        self, count: int, status: int = 429, *, endpoint: str | None = None, message: str | None = None
    ) -> None:
        """The next `count` requests get HTTP `status` with an OpenAI-style error body (saying `message`,
        if given): to any endpoint, or only to the one whose path ends with `endpoint` (a client's
        background embedding must not take the failure meant for its chat request)."""
        with self._lock:
            self._failures.extend([(status, endpoint, message)] * count)

    def _take_failure(self, path: str) -> tuple[int, str | None] | None:
        route = path.rstrip("/")
        for index, (status, endpoint, message) in enumerate(self._failures):
            if endpoint is None or route.endswith(endpoint):
                del self._failures[index]
                return status, message
        return None

    def fail_next_expansions(self, count: int, status: int = 500) -> None:
        """The next `count` query-expansion requests get HTTP `status`."""
        with self._lock:
            self._expansion_failures.extend([status] * count)

    def script_chat(self, *replies: Reply) -> None:
        """Replies to the next chat requests, in order: a text, or a whole assistant message dict."""
        with self._lock:
            self._replies.extend(replies)

    def respond_with(self, responder: Callable[[dict[str, Any]], Reply] | None) -> None:
        """Compute the reply from the request body once the scripted replies are used up."""
        with self._lock:
            self._responder = responder

    @contextmanager
    def holding(self, only: Callable[[dict[str, Any]], bool] | None = None) -> Iterator[Hold]:
        """Hold every chat answer (not embeddings, reranking or query expansion), or those whose request
        body `only` accepts (a shared server may see other clients' calls meanwhile), until released; on
        leaving, whatever is still held goes on and answers are no longer held."""
        hold = Hold(only)
        self._hold = hold
        try:
            yield hold
        finally:
            self._hold = None
            hold.open()

    def held(self, path: str, body: Any) -> Hold | None:
        """The hold a request's answer waits at, if any: chat completions only."""
        hold = self._hold
        if hold is None or not path.rstrip("/").endswith("/chat/completions") or is_expansion(body):
            return None
        if hold.only is not None and not (isinstance(body, dict) and hold.only(body)):
            return None
        return hold

    def requests_to(self, suffix: str) -> list[Recorded]:
        return [r for r in self.requests if r.path.endswith(suffix)]

    def start(self, port: int = 0) -> FakeOpenAI:
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler_for(self))
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, args=(STOP_POLL_S,), name="fake-openai", daemon=True
        ).start()
        return self

    def stop(self) -> None:
        if self._hold is not None:
            self._hold.open()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # -- request handling (called from the server threads) --

    def handle(self, path: str, body: Any, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if path.startswith("/control/"):
            return self._control(path, body)
        if is_expansion(body):
            return self._expansion(path, body, headers)
        if self.delay:
            time.sleep(self.delay)
        with self._lock:
            self.requests.append(Recorded(path, body, headers))
            failure = self._take_failure(path)
        if failure is not None:
            return failure[0], _error(*failure)
        if not isinstance(body, dict):
            return 400, _error(400, "body must be a JSON object")
        route = path.rstrip("/")
        if route.endswith("/embeddings"):
            return 200, self._embeddings(body)
        if route.endswith("/chat/completions"):
            return 200, self._chat(body)
        if route.endswith("/rerank"):
            return 200, _rerank(body, self.rerank_limit)
        return 404, _error(404, f"no route {path}")

    def _expansion(
        self, path: str, body: dict[str, Any], headers: dict[str, str]
    ) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.expansion_requests.append(Recorded(path, body, headers))
            failure = self._expansion_failures.popleft() if self._expansion_failures else None
            expand = self.expand
        if failure is not None:
            return failure, _error(failure, None)
        query = str(body["messages"][-1].get("content") or "")
        reply = expand(query) if expand else '{"phrasings": []}'
        answer = completion(body, {"role": "assistant", "content": reply}, "chatcmpl-expansion")
        with self._lock:
            self.expansion_usages.append((query, answer["usage"]))
        return 200, answer

    def _control(self, path: str, body: Any) -> tuple[int, dict[str, Any]]:
        body = body if isinstance(body, dict) else {}
        if path == "/control/script":
            self.script_chat(*body.get("replies", []))
        elif path == "/control/fail":
            self.fail_next(int(body.get("count", 1)), int(body.get("status", 500)))
        elif path == "/control/delay":
            self.delay = float(body.get("seconds", 0))
        else:
            return 404, _error(404, f"no control {path}")
        return 200, {"ok": True}

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        texts = body.get("input", [])
        texts = [texts] if isinstance(texts, str) else list(texts)
        dims = int(body.get("dimensions") or self.dimensions)
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(texts):
            vector = hashed_vector(str(text), dims)
            encoded: Any = (
                base64.b64encode(struct.pack(f"<{dims}f", *vector)).decode() if as_base64 else vector
            )
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = sum(len(words(str(t))) for t in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return {"object": "list", "data": data, "model": body.get("model", "fake"), "usage": usage}

    def next_reply(self, body: dict[str, Any]) -> dict[str, Any]:
        """The assistant message for a chat request."""
        with self._lock:
            scripted = self._replies.popleft() if self._replies else None
            responder = self._responder
        reply = scripted if scripted is not None else responder(body) if responder else self.default_reply
        return {"role": "assistant", "content": reply} if isinstance(reply, str) else dict(reply)

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        message = self.next_reply(body)
        answer = completion(body, message, f"chatcmpl-fake-{len(self.requests)}")
        with self._lock:
            self.usages.append((body, answer["usage"]))
        return answer


def completion(body: dict[str, Any], message: dict[str, Any], completion_id: str) -> dict[str, Any]:
    """A chat completion answering `body` with `message`, with the fake's token counts."""
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": chat_usage(body, message),
    }


def is_expansion(body: Any) -> bool:
    """Whether a request is openclaw's query expansion (its system prompt)."""
    from openclaw_cli.memory.search.legs.expansion import SYSTEM_PROMPT

    if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
        return False
    first = body["messages"][0]
    return isinstance(first, dict) and first.get("role") == "system" and first.get("content") == SYSTEM_PROMPT


def chat_usage(body: dict[str, Any], message: dict[str, Any]) -> dict[str, int]:
    """Token counts as the fake counts them: words of the request's messages (each at least one), words
    of the reply (its text and tool calls)."""
    messages = body.get("messages") or []
    prompt = sum(1 + len(words(json.dumps(m.get("content"), ensure_ascii=False))) for m in messages)
    reply = str(message.get("content") or "") + json.dumps(message.get("tool_calls") or "")
    completion = len(words(reply))
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def stream_chunks(completion: dict[str, Any], *, usage: bool = False) -> Iterator[dict[str, Any]]:
    """A chat completion as the chunks of a streamed answer: the content word by word, tool calls whole;
    with `usage` (the request's stream_options.include_usage), a last chunk without choices carrying the
    usage, as OpenAI sends it."""
    message = completion["choices"][0]["message"]
    base = {
        "id": completion["id"],
        "object": "chat.completion.chunk",
        "created": 0,
        "model": completion["model"],
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    for piece in re.findall(r"\S+\s*|\s+", message.get("content") or ""):
        yield chunk({"content": piece})
    calls = message.get("tool_calls") or []
    if calls:
        yield chunk({"tool_calls": [{"index": i, **call} for i, call in enumerate(calls)]})
    yield chunk({}, completion["choices"][0]["finish_reason"])
    if usage:
        yield {**base, "choices": [], "usage": completion["usage"]}


def _rerank(body: dict[str, Any], limit: int | None) -> dict[str, Any]:
    documents = [d if isinstance(d, str) else str(d.get("text", "")) for d in body.get("documents", [])]
    query = str(body.get("query", ""))
    scored = sorted(
        ({"index": i, "relevance_score": overlap_score(query, doc)} for i, doc in enumerate(documents)),
        key=lambda r: r["relevance_score"],
        reverse=True,
    )
    top_n = min(int(body.get("top_n") or len(scored)), limit if limit is not None else len(scored))
    return {"id": "rerank-fake", "results": scored[:top_n], "meta": {"billed_units": {"search_units": 1}}}


def _error(status: int, message: str | None = None) -> dict[str, Any]:
    kind = {429: "rate_limit_error", 401: "authentication_error", 400: "invalid_request_error"}
    text = message or ("rate limited (fake)" if status == 429 else f"fake server error {status}")
    return {"error": {"message": text, "type": kind.get(status, "server_error"), "code": status}}


def _handler_for(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body: Any = json.loads(raw or b"null")
            except ValueError:
                body = None
            status, payload = fake.handle(self.path, body, {k.lower(): v for k, v in self.headers.items()})
            hold = fake.held(self.path, body) if status == 200 else None
            if status == 200 and isinstance(body, dict) and body.get("stream") and "choices" in payload:
                options = body.get("stream_options")
                usage = isinstance(options, dict) and options.get("include_usage") is True
                self._stream(payload, usage, hold)
                return
            if hold is not None:
                hold.pass_through()
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, completion: dict[str, Any], usage: bool, hold: Hold | None) -> None:
            # Server-sent events, ended by closing the connection (no length is known in advance).
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                chunks = list(stream_chunks(completion, usage=usage))
                # Held once the reply has begun: after the role and the first piece of content (or of
                # tool calls), before the rest; an empty reply is held before its finish.
                held_at = min(2, len(chunks) - 1)
                for number, chunk in enumerate(chunks):
                    if number and fake.chunk_delay:
                        time.sleep(fake.chunk_delay)
                    if number == held_at and hold is not None:
                        hold.pass_through()
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):  # the client went away mid-stream
                with fake._lock:
                    fake.broken_streams += 1

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            return

    return Handler


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """A started fake server; provider API keys point at a fake key so litellm's clients accept the call."""
    for variable in ("OPENAI_API_KEY", "COHERE_API_KEY", "JINA_AI_API_KEY"):
        monkeypatch.setenv(variable, FAKE_API_KEY)
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module", name="fake")
def module_fake() -> Iterator[FakeOpenAI]:
    """`fake`: one started fake server for a whole test module (tests set it with `respond_with`).
    Import `module_fake` into the module to use it."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


def main() -> None:
    """Serve until interrupted, printing the base URL on the first line."""
    import argparse

    parser = argparse.ArgumentParser(description="a fake OpenAI-compatible server on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--reply", default="ok", help="the default chat reply")
    args = parser.parse_args()
    server = FakeOpenAI(default_reply=args.reply).start(args.port)
    print(server.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
