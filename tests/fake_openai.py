"""A small OpenAI-compatible HTTP server on 127.0.0.1: the only stand-in the tests use (for remote models).

    from tests import fake_openai as fake_server
    fake_openai = fake_server.fake_openai  # makes the fixture available in a test file (or in conftest.py)

    def test_x(fake_openai):
        fake_openai.url          # "http://127.0.0.1:PORT/v1", the api_base to configure
        fake_openai.fail_next(2, status=429)
        fake_openai.script_chat("first reply", "second reply")
        fake_openai.requests     # every request: Recorded(path, body, headers)

Endpoints: POST /v1/embeddings (deterministic hashed bag-of-words vectors, `dimensions` honoured, float or
base64 encoding), POST /v1/chat/completions (scripted replies in order, then `default_reply`),
POST /v1/rerank and /rerank (Cohere/Jina-style results scored by query-word overlap).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import struct
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

FAKE_API_KEY = "sk-fake-openclaw-test"
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass
class Recorded:
    path: str
    body: Any
    headers: dict[str, str]


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


@dataclass
class FakeOpenAI:
    dimensions: int = 64
    default_reply: str = "ok"
    # When set, /rerank answers with at most this many results whatever top_n asks (as some APIs do).
    rerank_limit: int | None = None
    requests: list[Recorded] = field(default_factory=list)
    _replies: deque[str] = field(default_factory=deque)
    _failures: deque[int] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def fail_next(self, count: int, status: int = 429) -> None:
        """The next `count` requests (any endpoint) get HTTP `status` with an OpenAI-style error body."""
        with self._lock:
            self._failures.extend([status] * count)

    def script_chat(self, *replies: str) -> None:
        with self._lock:
            self._replies.extend(replies)

    def requests_to(self, suffix: str) -> list[Recorded]:
        return [r for r in self.requests if r.path.endswith(suffix)]

    def start(self) -> FakeOpenAI:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="fake-openai", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # -- request handling (called from the server threads) --

    def handle(self, path: str, body: Any, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.requests.append(Recorded(path, body, headers))
            failure = self._failures.popleft() if self._failures else None
        if failure is not None:
            return failure, _error(failure)
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

    def _chat(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            reply = self._replies.popleft() if self._replies else self.default_reply
        message = {"role": "assistant", "content": reply}
        return {
            "id": f"chatcmpl-fake-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": len(words(reply)), "total_tokens": 1},
        }


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
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

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
