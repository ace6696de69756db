"""The gateway as a real process: WebSocket frames, auth, HTTP endpoints, faults, config reload.

One gateway (and one fake model server) serves most tests of this module; tests that need their own
configuration start their own.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from tests.conftest import run_cli
from tests.fake_openai import FAKE_API_KEY, FakeOpenAI, Hold, asking
from tests.gateway_helpers import (
    Gateway,
    answering_port,
    chat_until_final,
    echo_last_user,
    echo_server,
    frames_until,
    http_json,
    request,
    running_gateway,
    send,
    send_all,
    write_config,
)

BINDINGS = [
    {"agentId": "work", "match": {"channel": "telegram", "peer": {"kind": "direct", "id": "4242"}}},
    {"agentId": "work", "match": {"channel": "slack"}},
]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    with echo_server() as server:
        yield server


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAI) -> Iterator[Gateway]:
    home = tmp_path_factory.mktemp("gw") / "home"
    write_config(home, fake, agents={"list": [{"id": "main"}, {"id": "work"}]}, bindings=BINDINGS)
    with running_gateway(home) as gw:
        yield gw


@pytest.fixture
def fresh_fake(fake: FakeOpenAI) -> Iterator[FakeOpenAI]:
    """The shared fake, put back as it was after the test."""
    yield fake
    fake.delay = 0.0
    fake.chunk_delay = 0.0
    fake.respond_with(echo_last_user)


def _status(gw: Gateway) -> dict[str, Any]:
    with gw.ws() as conn:
        reply = request(conn, "status")
    assert reply["ok"], reply
    return dict(reply["payload"])


def _rewrite_config(gw: Gateway, text: str) -> None:
    """Replace openclaw.json and wait until the gateway has looked at it."""
    before = _status(gw)["config"]
    # Written whole and renamed into place, as editors save: a truncate-then-write could be polled half
    # written, and the status change this waits for would be that transient parse error.
    staged = gw.home / ".openclaw.json.edit"
    staged.write_text(text, encoding="utf-8")
    staged.chmod(0o600)
    os.replace(staged, gw.home / "openclaw.json")
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        now = _status(gw)["config"]
        if now != before:
            return
        time.sleep(0.05)
    raise AssertionError("the gateway did not reload openclaw.json")


# ---------------------------------------------------------------- open endpoints and auth


def test_health_endpoints_are_open_and_the_rest_needs_the_token(gateway: Gateway) -> None:
    assert http_json(gateway.http + "/healthz") == (200, {"ok": True})
    deadline = time.monotonic() + 120  # ready once the start-up warm-up is done (test_gateway_ready.py)
    while (ready := http_json(gateway.http + "/readyz")) != (200, {"ok": True}):
        assert ready == (503, {"ok": False}) and time.monotonic() < deadline, ready
        time.sleep(0.05)
    status, body = http_json(gateway.http + "/v1/models")
    assert status == 401 and "token" in body["error"]["message"]
    status, body = http_json(gateway.http + "/v1/models", token=gateway.token)
    assert status == 200 and {m["id"] for m in body["data"]} == {"main", "work"}


def test_wrong_token_over_http_is_401(gateway: Gateway) -> None:
    body = {"model": "main", "messages": [{"role": "user", "content": "hi"}]}
    status, reply = http_json(gateway.http + "/v1/chat/completions", body, token="not-the-token-at-all")
    assert status == 401
    assert reply["error"]["type"] == "authentication_error"


def test_generated_token_is_private_and_env_token_wins(tmp_path: Path, fake: FakeOpenAI) -> None:
    home = tmp_path / "home"
    write_config(home, fake)
    with running_gateway(home) as gw:
        token_file = home / "gateway" / "token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert gw.token == token_file.read_text().strip() and len(gw.token) >= 32
    env_token = "an-env-token-of-enough-length"
    with running_gateway(home, env={"OPENCLAW_GATEWAY_TOKEN": env_token}) as gw:
        assert http_json(gw.http + "/v1/models", token=env_token)[0] == 200
        assert http_json(gw.http + "/v1/models", token=token_file.read_text().strip())[0] == 401


def test_refuses_to_bind_beyond_loopback_without_a_token(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = run_cli(home, "gateway", "run", "--bind", "lan", "--port", "0", timeout=60)
    assert result.returncode == 1
    assert "refusing to listen beyond loopback without a token" in result.stderr
    assert not (home / "gateway" / "token").exists()


def test_lan_bind_with_a_given_token(tmp_path: Path, fake: FakeOpenAI) -> None:
    home = tmp_path / "home"
    write_config(home, fake)
    token = "a-lan-token-that-is-long-enough"
    with running_gateway(home, "--bind", "lan", "--token", token) as gw:
        assert json.loads((home / "gateway" / "gateway.pid").read_text())["host"] == "0.0.0.0"
        assert http_json(gw.http + "/v1/models", token=token)[0] == 200
    assert not (home / "gateway" / "token").exists()  # a given token is never written down


def test_short_token_is_refused(tmp_path: Path) -> None:
    result = run_cli(tmp_path / "home", "gateway", "run", "--port", "0", "--token", "short", timeout=60)
    assert result.returncode == 1 and "shorter than 16 characters" in result.stderr


def test_port_in_use_is_a_one_line_error(gateway: Gateway, tmp_path: Path) -> None:
    result = run_cli(tmp_path / "other", "gateway", "run", "--port", str(gateway.port), timeout=60)
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{gateway.port}" in result.stderr
    assert "Traceback" not in result.stderr


# ---------------------------------------------------------------- frames


def test_malformed_frames_get_invalid_request_and_the_connection_stays(gateway: Gateway) -> None:
    with gateway.ws() as conn:
        for bad in (
            "{not json",
            "[1, 2]",
            '{"type": "req", "method": "status"}',
            '{"type": "event", "id": "7", "method": "status"}',
            '{"type": "req", "id": "8", "method": "status", "params": [1]}',
            '{"type": "req", "id": "9", "method": 5}',
        ):
            conn.send(bad)
            frame = json.loads(conn.recv(timeout=10))
            assert frame["type"] == "res" and frame["ok"] is False, bad
            assert frame["error"]["code"] == "INVALID_REQUEST", bad
        assert request(conn, "health")["ok"]


def test_unknown_method(gateway: Gateway) -> None:
    with gateway.ws() as conn:
        reply = request(conn, "no.such.method")
        assert reply["ok"] is False and reply["error"]["code"] == "UNKNOWN_METHOD"
        assert "no.such.method" in reply["error"]["message"]


def test_invalid_params_are_reported(gateway: Gateway) -> None:
    with gateway.ws() as conn:
        assert request(conn, "chat.send", {"text": 5})["error"]["code"] == "INVALID_PARAMS"
        assert request(conn, "chat.send", {"text": "  "})["error"]["code"] == "INVALID_PARAMS"
        assert request(conn, "chat.send", {"text": "x", "sessionKey": "agent:work:main"})["error"][
            "code"
        ] == ("INVALID_PARAMS")
        assert (
            request(conn, "chat.send", {"text": "x", "agentId": "../etc"})["error"]["code"]
            == "INVALID_PARAMS"
        )


LONE = "\ud800"  # json.dumps writes it as the escape `\\ud800`, which parses back to U+D800 alone
SURROGATE_PARAMS = [
    pytest.param("memory.add", {"text": f"tea {LONE}"}, "params.text", id="memory.add-text"),
    pytest.param("memory.add", {"text": "tea", "userId": LONE}, "params.userId", id="memory.add-userId"),
    pytest.param("memory.add", {"text": "tea", "l1": LONE}, "params.l1", id="memory.add-l1"),
    pytest.param("memory.search", {"query": LONE}, "params.query", id="memory.search-query"),
    pytest.param("memory.delete", {"id": LONE}, "params.id", id="memory.delete-id"),
    pytest.param("chat.send", {"text": LONE}, "params.text", id="chat.send-text"),
    pytest.param("chat.send", {"text": "hi", "sessionKey": LONE}, "params.sessionKey", id="chat.send-key"),
    pytest.param("sessions.get", {"sessionKey": LONE}, "params.sessionKey", id="sessions.get-key"),
    pytest.param("sessions.list", {f"x{LONE}": 1}, 'the key params["x\\ud800"]', id="a-key"),
]


@pytest.mark.parametrize(("method", "params", "where"), SURROGATE_PARAMS)
def test_a_lone_surrogate_in_params_is_invalid_params(
    gateway: Gateway, method: str, params: dict[str, Any], where: str
) -> None:
    with gateway.ws() as conn:
        reply = request(conn, method, params)
        assert reply["ok"] is False and reply["error"]["code"] == "INVALID_PARAMS", reply
        assert where in reply["error"]["message"] and "lone surrogate" in reply["error"]["message"]
        assert request(conn, "health")["ok"]


def test_a_lone_surrogate_in_the_request_id_is_invalid_request(gateway: Gateway) -> None:
    with gateway.ws() as conn:
        conn.send(json.dumps({"type": "req", "id": f"1{LONE}", "method": "health"}))
        reply = json.loads(conn.recv(timeout=10))
        assert (reply["id"], reply["ok"], reply["error"]["code"]) == (None, False, "INVALID_REQUEST")
        assert "'id' holds a lone surrogate" in reply["error"]["message"]


SURROGATE_BODIES = [
    pytest.param(
        "/v1/chat/completions",
        {"model": "main", "messages": [{"role": "user", "content": f"hi {LONE}"}]},
        "'messages[0].content'",
        id="completions-message",
    ),
    pytest.param(
        "/v1/chat/completions",
        {"model": "main", "messages": [{"role": "user", "content": "hi"}], "user": LONE},
        "'user'",
        id="completions-user",
    ),
    pytest.param(
        "/v1/chat/completions",
        {"model": "main", "messages": [{"role": "user", "content": [{"type": "text", "text": LONE}]}]},
        "'messages[0].content[0].text'",
        id="completions-content-part",
    ),
    pytest.param(
        "/hooks/agent", {"channel": "telegram", "peer": "7", "text": LONE}, "'text'", id="hooks-text"
    ),
    pytest.param(
        "/hooks/agent",
        {"channel": "telegram", "peer": "7", "sender": LONE, "text": "hi"},
        "'sender'",
        id="hooks-sender",
    ),
]


@pytest.mark.parametrize(("path", "body", "where"), SURROGATE_BODIES)
def test_a_lone_surrogate_in_an_http_body_is_400(
    gateway: Gateway, path: str, body: dict[str, Any], where: str
) -> None:
    status, reply = http_json(gateway.http + path, body, token=gateway.token)
    assert status == 400, reply
    assert where in reply["error"]["message"] and "lone surrogate" in reply["error"]["message"]


def test_oversized_websocket_message_closes_the_connection(gateway: Gateway) -> None:
    limit = 1_048_576  # gateway.maxMessageBytes, default
    with gateway.ws() as conn:
        conn.send(
            json.dumps({"type": "req", "id": "1", "method": "chat.send", "params": {"text": "x" * limit}})
        )
        with pytest.raises(ConnectionClosed) as closed:
            conn.recv(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    assert http_json(gateway.http + "/healthz")[0] == 200


def _post_raw(gw: Gateway, headers: str, body_chunks: list[bytes]) -> bytes:
    """POST with hand-made headers; the server may answer (and close) before the whole body is sent."""
    with socket.create_connection(("127.0.0.1", gw.port), timeout=10) as raw:
        raw.sendall(
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {gw.token}\r\n"
            f"Content-Type: application/json\r\n{headers}\r\n".encode()
        )
        try:
            for chunk in body_chunks:
                raw.sendall(chunk)
        except OSError:
            pass  # refused part-way: the answer is already waiting
        answer = b""
        while b"}}" not in answer:  # the JSON error body ends the answer
            more = raw.recv(4096)
            if not more:
                break
            answer += more
        return answer


def test_oversized_http_body_is_413(gateway: Gateway) -> None:
    declared = _post_raw(gateway, "Content-Length: 1100000\r\n", [])
    assert declared.startswith(b"HTTP/1.1 413") and b"maxMessageBytes" in declared
    chunk = b"x" * 65536
    streamed = _post_raw(
        gateway,
        "Transfer-Encoding: chunked\r\n",
        [b"%x\r\n%s\r\n" % (len(chunk), chunk)] * 20 + [b"0\r\n\r\n"],
    )
    assert streamed.startswith(b"HTTP/1.1 413")


# ---------------------------------------------------------------- chat


def test_chat_send_is_acknowledged_then_the_reply_streams_as_chat_events(gateway: Gateway) -> None:
    with gateway.ws() as conn:
        request_id = send(conn, "chat.send", {"text": "hello gateway", "sessionKey": "agent:main:direct:ann"})
        frames = frames_until(
            conn, lambda f: f.get("event") == "chat" and f["payload"]["state"] == "final", 60
        )
    ack = frames[0]
    assert ack["type"] == "res" and ack["id"] == request_id and ack["ok"]
    run_id = ack["payload"]["runId"]
    chats = [f["payload"] for f in frames if f.get("event") == "chat"]
    states = [c["state"] for c in chats]
    assert states[-1] == "final" and set(states[:-1]) == {"delta"}  # the reply streams in pieces
    assert "".join(c["text"] for c in chats[:-1]) == chats[-1]["text"]
    assert all(c["runId"] == run_id and c["sessionKey"] == "agent:main:direct:ann" for c in chats)
    assert chats[-1]["text"] == "echo: hello gateway"


def test_messages_of_one_session_are_answered_in_order(gateway: Gateway) -> None:
    key = "agent:main:direct:order"
    with gateway.ws() as conn:
        acks, events = send_all(conn, [f"m{i}" for i in range(5)], key)
        finals = [e for e in events if e["state"] == "final"]
        history = request(conn, "chat.history", {"sessionKey": key})["payload"]["messages"]
    assert [e["text"] for e in finals] == [f"echo: m{i}" for i in range(5)]
    assert [(m["role"], m["content"]) for m in history] == [
        pair for i in range(5) for pair in (("user", f"m{i}"), ("assistant", f"echo: m{i}"))
    ]


def test_openai_client_against_chat_completions(gateway: Gateway) -> None:
    from openai import NotFoundError, OpenAI

    client = OpenAI(base_url=gateway.http + "/v1", api_key=gateway.token, max_retries=0)
    reply = client.chat.completions.create(
        model="work", messages=[{"role": "user", "content": "plain call"}], user="zoe"
    )
    assert reply.choices[0].message.content == "echo: plain call"
    stream = client.chat.completions.create(
        model="work", messages=[{"role": "user", "content": "streamed call"}], user="zoe", stream=True
    )
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream)
    assert text == "echo: streamed call"
    with pytest.raises(NotFoundError):
        client.chat.completions.create(model="nobody", messages=[{"role": "user", "content": "x"}])
    with gateway.ws() as conn:
        got = request(conn, "chat.history", {"agentId": "work", "sessionKey": "agent:work:openai:direct:zoe"})
    assert [m["content"] for m in got["payload"]["messages"]] == [
        "plain call",
        "echo: plain call",
        "streamed call",
        "echo: streamed call",
    ]


def test_hooks_agent_routes_by_binding(gateway: Gateway) -> None:
    hook = gateway.http + "/hooks/agent"
    status, bound = http_json(
        hook,
        {"channel": "telegram", "peer": "4242", "sender": "4242", "text": "hi work"},
        token=gateway.token,
    )
    assert status == 200, bound
    assert (bound["agentId"], bound["matchedBy"], bound["reply"]) == ("work", "peer", "echo: hi work")
    # dmScope main: the main session is the owner's, so telegram:4242 gets its own session
    assert bound["sessionKey"] == "agent:work:telegram:direct:4242" and "rerouted" in bound
    status, other = http_json(
        hook, {"channel": "telegram", "peer": "7", "text": "hi main"}, token=gateway.token
    )
    assert (other["agentId"], other["matchedBy"]) == ("main", "default")
    status, group = http_json(
        hook,
        {
            "channel": "slack",
            "accountId": "acme",
            "peer": {"kind": "group", "id": "C1"},
            "sender": "u1",
            "text": "hi team",
        },
        token=gateway.token,
    )
    assert (group["agentId"], group["matchedBy"], group["sessionKey"]) == (
        "work",
        "channel",
        "agent:work:slack:acme:group:c1",
    )
    assert http_json(hook, {"channel": "telegram", "text": "no peer"}, token=gateway.token)[0] == 400


def test_client_that_disconnects_mid_stream(gateway: Gateway, fresh_fake: FakeOpenAI) -> None:
    """Both clients are gone before the model answers (its answers are held until then)."""
    key = "agent:main:direct:leaver"
    with fresh_fake.holding(only=asking("answer after I left", "stream to nobody")) as hold:
        _leave_mid_stream(gateway, key, hold)
    # Leaving the block lets both answers go, to nobody.
    deadline = time.monotonic() + 30
    with gateway.ws() as conn:
        while time.monotonic() < deadline:
            history = request(conn, "chat.history", {"sessionKey": key})["payload"]["messages"]
            other = request(conn, "chat.history", {"sessionKey": "agent:main:openai:direct:leaver2"})
            if len(history) == 2 and len(other["payload"]["messages"]) == 2:
                break
            time.sleep(0.1)
        assert [m["content"] for m in history] == ["answer after I left", "echo: answer after I left"]
        assert other["payload"]["messages"][1]["content"] == "echo: stream to nobody"
        assert request(conn, "health")["ok"]


def _leave_mid_stream(gateway: Gateway, key: str, hold: Hold) -> None:
    """A WebSocket client that sends and goes, and an HTTP stream whose reader goes away after the head,
    each while its model call is held."""
    with gateway.ws() as conn:
        ack = request(conn, "chat.send", {"text": "answer after I left", "sessionKey": key})
        assert ack["ok"]
        assert hold.wait_arrived(1)
    # an HTTP stream whose reader goes away after the first chunk
    body = json.dumps(
        {
            "model": "main",
            "stream": True,
            "user": "leaver2",
            "messages": [{"role": "user", "content": "stream to nobody"}],
        }
    ).encode()
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=10) as raw:
        raw.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Authorization: Bearer {gateway.token}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        assert b"200" in raw.recv(200)
        assert hold.wait_arrived(2)  # its model call is out, its reader about to go


def test_model_server_down(gateway: Gateway, fake: FakeOpenAI) -> None:
    dead = socket.socket()
    dead.bind(("127.0.0.1", 0))
    dead_port = dead.getsockname()[1]
    dead.close()  # nothing listens there now
    config = gateway.home / "openclaw.json"
    original = config.read_text()
    data = json.loads(original)
    data["llm"]["apiBase"] = f"http://127.0.0.1:{dead_port}/v1"
    _rewrite_config(gateway, json.dumps(data))
    try:
        with gateway.ws() as conn:
            ack = request(
                conn, "chat.send", {"text": "anyone there?", "sessionKey": "agent:main:direct:down"}
            )
            events = chat_until_final(conn, {ack["payload"]["runId"]})
        assert events[-1]["state"] == "error" and events[-1]["text"]
        body = {"model": "main", "messages": [{"role": "user", "content": "still down?"}]}
        status, reply = http_json(gateway.http + "/v1/chat/completions", body, token=gateway.token)
        assert status == 502 and reply["error"]["type"] == "upstream_error"
    finally:
        _rewrite_config(gateway, original)
    with gateway.ws() as conn:  # the user's message was kept
        history = request(conn, "chat.history", {"sessionKey": "agent:main:direct:down"})["payload"][
            "messages"
        ]
    assert [m["content"] for m in history] == ["anyone there?"]


# ---------------------------------------------------------------- config reload


def test_valid_config_change_applies_without_restart(gateway: Gateway) -> None:
    config = gateway.home / "openclaw.json"
    original = config.read_text()
    data = json.loads(original)
    data["agents"]["maxConcurrent"] = 7
    data["gateway"]["queue"]["mode"] = "steer"
    pid = _status(gateway)["pid"]
    try:
        _rewrite_config(gateway, "// edited by hand\n" + json.dumps(data, indent=2))
        status = _status(gateway)
        assert (status["maxConcurrent"], status["queueMode"], status["config"]["error"]) == (7, "steer", None)
        assert status["pid"] == pid
    finally:
        _rewrite_config(gateway, original)


def test_invalid_config_change_is_logged_and_the_running_config_kept(gateway: Gateway) -> None:
    original = (gateway.home / "openclaw.json").read_text()
    try:
        _rewrite_config(gateway, original.replace('"maxRetries": 0', '"maxRetries": "many"'))
        status = _status(gateway)
        assert "maxRetries" in status["config"]["error"]
        assert status["queueMode"] == "followup"
        _rewrite_config(gateway, "{ this is not json5")
        assert "invalid JSON5" in _status(gateway)["config"]["error"]
        with gateway.ws() as conn:  # still serving with the old settings
            ack = request(conn, "chat.send", {"text": "still fine", "sessionKey": "agent:main:direct:cfg"})
            assert chat_until_final(conn, {ack["payload"]["runId"]})[-1]["text"] == "echo: still fine"
    finally:
        _rewrite_config(gateway, original)
    assert _status(gateway)["config"]["error"] is None
    assert "not valid; keeping the running config" in gateway.log()


# ---------------------------------------------------------------- sessions, memory, reflect


def test_session_methods(gateway: Gateway) -> None:
    key = "agent:main:direct:sess"
    with gateway.ws() as conn:
        ack = request(conn, "chat.send", {"text": "first", "sessionKey": key})
        chat_until_final(conn, {ack["payload"]["runId"]})
        listed = request(conn, "sessions.list")["payload"]["sessions"]
        assert key in {row["sessionKey"] for row in listed}
        got = request(conn, "sessions.get", {"sessionKey": key, "tail": 1})["payload"]
        assert got["meta"]["sessionKey"] == key and [m["content"] for m in got["messages"]] == ["echo: first"]
        reset = request(conn, "sessions.reset", {"sessionKey": key})["payload"]
        assert reset["previousSessionId"] == got["meta"]["sessionId"] != reset["sessionId"]
        assert request(conn, "chat.history", {"sessionKey": key})["payload"]["messages"] == []
        missing = request(conn, "sessions.get", {"sessionKey": "agent:main:direct:nobody"})
        assert missing["error"]["code"] == "NOT_FOUND"
        compact = request(conn, "sessions.compact", {"sessionKey": key})
        assert compact["ok"] or compact["error"]["code"] == "UNAVAILABLE"


def test_memory_methods(gateway: Gateway) -> None:
    with gateway.ws() as conn:
        added = request(
            conn,
            "memory.add",
            {"text": "The user drinks green tea every morning", "category": "preference", "userId": "ann"},
            timeout=120,
        )
        assert added["ok"], added
        record_id = added["payload"]["id"]
        found = request(conn, "memory.search", {"query": "green tea", "userId": "ann"}, timeout=120)
        assert record_id in [hit["id"] for hit in found["payload"]["results"]]
        assert request(conn, "memory.delete", {"id": record_id})["payload"] == {"deleted": record_id}
        again = request(conn, "memory.search", {"query": "green tea", "userId": "ann"})
        assert record_id not in [hit["id"] for hit in again["payload"]["results"]]
        assert request(conn, "memory.add", {"text": "x", "category": "nonsense"})["error"]["code"] == (
            "INVALID_PARAMS"
        )


def test_memory_add_says_what_it_did_and_what_a_text_matched(gateway: Gateway) -> None:
    """Issue 48: "ok" with nothing stored is a defect. memory.add takes the CLI's write path: a repeat says
    what it matched, and a changed value of a profile fact replaces it (with a history row), never dropped."""
    # In an agent of its own: the module's other tests reflect on the main agent's profile memories.
    first = {
        "text": "User's passport number is ALICEV1PASS4417",
        "category": "profile",
        "userId": "pass-ann",
        "agentId": "paperwork",
    }
    with gateway.ws() as conn:
        added = request(conn, "memory.add", first, timeout=120)["payload"]
        assert added["action"] == "added" and added["l0"] == first["text"], added
        again = request(conn, "memory.add", first)["payload"]
        assert again["action"] == "duplicate" and again["id"] == added["id"], again
        assert added["id"] in again["said"] or added["id"] in again["reason"], again
        changed = request(conn, "memory.add", {**first, "text": "User's passport number is ALICEWSPASS4417"})
        payload = changed["payload"]
        assert payload["action"] in ("merged", "added") and "ALICEWSPASS4417" in payload["said"], payload
        asked = {"query": "passport number", "userId": "pass-ann", "all": True, "agentId": "paperwork"}
        found = request(conn, "memory.search", asked)
        texts = [hit["l0"] for hit in found["payload"]["results"]]
        assert any("ALICEWSPASS4417" in text for text in texts), texts


# ---------------------------------------------------------------- the CLI


def test_cli_start_status_call_health_stop(tmp_path: Path, fake: FakeOpenAI) -> None:
    home = tmp_path / "home"
    write_config(home, fake)
    env = {"OPENAI_API_KEY": FAKE_API_KEY}
    started = run_cli(home, "gateway", "start", "--port", "0", "--json", env=env)
    assert started.returncode == 0, started.stderr
    record = started.json()
    try:
        assert stat.S_IMODE((home / "gateway" / "gateway.log").stat().st_mode) == 0o600
        status = run_cli(home, "gateway", "status", "--json")
        assert status.returncode == 0 and status.json()["running"] is True
        assert status.json()["gateway"]["pid"] == record["pid"]
        health = run_cli(home, "gateway", "health", "--json")
        assert health.returncode == 0 and health.json()["ok"] is True
        called = run_cli(home, "gateway", "call", "chat.send", "--params", '{"text": "via cli"}')
        assert called.returncode == 0 and called.json()["status"] == "accepted"
        bad = run_cli(home, "gateway", "call", "status", "--params", "[1]")
        assert bad.returncode == 2
        wrong = run_cli(home, "gateway", "call", "status", "--token", "wrong-token-wrong-token")
        assert (
            wrong.returncode == 1 and "HTTP 401" in wrong.stderr and "wrong or missing token" in wrong.stderr
        )
        again = run_cli(home, "gateway", "start", "--port", "0", env=env)
        assert again.returncode == 1 and "already running" in again.stderr
    finally:
        stopped = run_cli(home, "gateway", "stop", "--json")
    assert stopped.returncode == 0 and stopped.json()["pid"] == record["pid"]
    assert not (home / "gateway" / "gateway.pid").exists()
    # Without its pid file the home has no gateway, whatever answers on its configured port (here a
    # stand-in for another home's gateway: the default port is never probed, so never needs to be free).
    with answering_port() as elsewhere:
        down = run_cli(home, "gateway", "status", env={"OPENCLAW_GATEWAY__PORT": str(elsewhere)})
    assert down.returncode == 1 and "not running" in down.stdout
    assert run_cli(home, "gateway", "stop").returncode == 1
    # The process has ended: gone, or a zombie that init has not reaped yet (stop does not wait for that).
    try:
        state = Path(f"/proc/{record['pid']}/stat").read_text().rpartition(")")[2].split()[0]
    except FileNotFoundError:
        state = "gone"
    assert state in ("gone", "Z", "X")


def test_chat_abort_cancels_a_run(gateway: Gateway, fresh_fake: FakeOpenAI) -> None:
    key = "agent:main:direct:abort"
    with gateway.ws() as conn, fresh_fake.holding(only=asking("forget it")) as hold:
        run_id = request(conn, "chat.send", {"text": "forget it", "sessionKey": key})["payload"]["runId"]
        assert hold.wait_arrived(1)  # running: its model call is out, its answer held
        assert request(conn, "chat.abort", {"runId": run_id})["payload"] == {"aborted": [run_id]}
        hold.open()  # the answer comes, too late for the aborted run
        assert chat_until_final(conn, {run_id})[-1]["state"] == "aborted"
        assert request(conn, "chat.abort", {"runId": "run-gone"})["payload"] == {"aborted": []}
        history = request(conn, "chat.history", {"sessionKey": key})["payload"]["messages"]
    assert [(m["role"], m["content"]) for m in history] == [("user", "forget it")]


def test_reflect_run(gateway: Gateway) -> None:
    with gateway.ws() as conn:
        reply = request(conn, "reflect.run", {"dryRun": True}, timeout=120)
        bad = request(conn, "reflect.run", {"dryRun": "yes"})
    try:
        import openclaw_cli.memory.reflect.run  # noqa: F401
    except ImportError:
        assert reply["error"]["code"] == "UNAVAILABLE" and "not available" in reply["error"]["message"]
        return
    assert reply["ok"], reply
    assert bad["error"]["code"] == "INVALID_PARAMS"


def test_config_set_reaches_the_running_gateway(gateway: Gateway) -> None:
    original = (gateway.home / "openclaw.json").read_text()
    try:
        assert run_cli(gateway.home, "config", "set", "agents.maxConcurrent", "9").returncode == 0
        deadline = time.monotonic() + 15
        while _status(gateway)["maxConcurrent"] != 9 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _status(gateway)["maxConcurrent"] == 9
    finally:
        _rewrite_config(gateway, original)


def test_interrupt_mode_cancels_the_running_turn(gateway: Gateway, fresh_fake: FakeOpenAI) -> None:
    key = "agent:main:direct:interrupt"
    with gateway.ws() as conn, fresh_fake.holding(only=asking("slow one")) as hold:
        first = request(conn, "chat.send", {"text": "slow one", "sessionKey": key})["payload"]["runId"]
        assert hold.wait_arrived(1)  # the first turn is running: its model call is out, its answer held
        second = request(conn, "chat.send", {"text": "instead", "sessionKey": key, "queueMode": "interrupt"})
        hold.open()
        events = chat_until_final(conn, {first, second["payload"]["runId"]})
        history = request(conn, "chat.history", {"sessionKey": key})["payload"]["messages"]
    states = {e["runId"]: e["state"] for e in events if e["state"] != "delta"}
    assert states == {first: "aborted", second["payload"]["runId"]: "final"}
    assert [m["content"] for m in history] == ["slow one", "instead", "echo: instead"]


def test_steer_mode_reaches_the_running_turn_between_its_model_calls(
    gateway: Gateway, fresh_fake: FakeOpenAI
) -> None:
    from tests.agent_helpers import tool_call

    def respond(body: dict[str, Any]) -> Any:
        messages = body["messages"]
        if body.get("tools") and messages[-1] == {"role": "user", "content": "gw question"}:
            return tool_call("memory_search", {"query": "weather"})
        return echo_last_user(body)

    fresh_fake.respond_with(respond)
    key = "agent:main:direct:steer"
    # Only the first model call is held (its last message is the question): the steered message
    # arrives while it is out, and the call after the tool result must carry it.
    with gateway.ws() as conn, fresh_fake.holding(only=asking("gw question")) as hold:
        params = {"sessionKey": key, "queueMode": "steer"}
        first = request(conn, "chat.send", {"text": "gw question", **params})["payload"]["runId"]
        assert hold.wait_arrived(1)
        second = request(conn, "chat.send", {"text": "gw steered", **params})["payload"]["runId"]
        hold.open()
        events = chat_until_final(conn, {first})
        history = request(conn, "chat.history", {"sessionKey": key})["payload"]["messages"]
    assert second == first  # taken into the running turn: no turn of its own
    assert events[-1]["state"] == "final" and events[-1]["text"] == "echo: gw steered"
    assert [(m["role"], m["content"]) for m in history if m["role"] != "tool"] == [
        ("user", "gw question"),
        ("assistant", ""),
        ("user", "gw steered"),
        ("assistant", "echo: gw steered"),
    ]
