"""The gateway's limits on connections that owe it a request (gateway/http/limits.py), on a real process over
loopback: half request lines and half headers are dropped at the header deadline, a flood of unfinished
(so unauthenticated) WebSocket upgrades is capped by closing the oldest, and authorised requests are
served during such a flood.

Two gateways: `quick` has a 1 s header timeout and a cap far above the floods (the timeout is what acts),
`capped` a 60 s timeout and a cap of 16 (the cap is what acts, long before any timeout). A test holds at
most ~250 sockets of its own, and the gateway as many (its open-file limit is checked, and that the
descriptors of dropped sockets are released).
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.sync.client import ClientConnection

from benchmarks import flood_worker
from openclaw_cli.config.loading import validate_settings
from openclaw_cli.core.errors import ConfigError
from tests.gateway_helpers import Gateway, http_json, request, running_gateway, write_config

QUICK_TIMEOUT = 1.0
EARLIEST = QUICK_TIMEOUT - 0.01  # asyncio may fire a timer up to its clock resolution early
# How long past its deadline a socket may take to be seen closed on a loaded 2-core machine.
SLACK = 15.0
CAP = 16
CAPPED_TIMEOUT = 60.0

HALF_LINE = b"GET /healthz HT"
HALF_HEADERS = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: half"
HALF_UPGRADE = (
    b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
)  # no blank line: the head never ends, and the token never comes


def _gateway(root: Path, timeout: float, cap: int) -> Iterator[Gateway]:
    home = root / "home"
    # No model: nothing here reaches one, and a configured model is preloaded at start (seconds of CPU
    # that would compete with the timeouts measured here).
    write_config(
        home,
        None,
        llm={"model": None},
        gateway={"headerTimeoutSeconds": timeout, "maxPendingConnections": cap},
    )
    with running_gateway(home) as gw:
        _settled(gw)
        yield gw


def _settled(gw: Gateway) -> None:
    """Ready, with its descriptors no longer changing: the tests count the gateway's open files before a
    flood and after it, and the warm-up (stores, the piece table, the word cache) opens files of its own
    for a while after start."""
    deadline = time.monotonic() + 120
    while http_json(gw.http + "/readyz")[0] != 200:
        assert time.monotonic() < deadline, "the gateway did not become ready"
        time.sleep(0.05)
    counts = [_open_files(gw)]
    while len(counts) < 20 or len(set(counts[-20:])) > 1:  # the same count for a second
        assert time.monotonic() < deadline, f"the gateway's open files keep changing: {counts[-20:]}"
        time.sleep(0.05)
        counts.append(_open_files(gw))


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    yield from _gateway(tmp_path_factory.mktemp("quick"), QUICK_TIMEOUT, 1000)


@pytest.fixture(scope="module")
def capped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    yield from _gateway(tmp_path_factory.mktemp("capped"), CAPPED_TIMEOUT, CAP)


def _stalled(port: int, payloads: list[bytes]) -> list[tuple[socket.socket, float]]:
    """One socket per payload, each sent and then left; (socket, when it began to connect: the server
    cannot have accepted it before)."""
    opened = []
    for payload in payloads:
        started = time.monotonic()
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        if payload:
            sock.sendall(payload)
        sock.setblocking(False)
        opened.append((sock, started))
    return opened


def _closed_by_server(sock: socket.socket) -> bool:
    """Whether the server has closed `sock` (EOF or reset); what it sent before is read and dropped."""
    try:
        while data := sock.recv(65536):
            del data
    except BlockingIOError:
        return False
    except OSError:
        return True
    return True


def _wait_closed(
    socks: list[socket.socket], within: float, count: int | None = None
) -> dict[socket.socket, float]:
    """When (monotonic) each socket was seen closed by the server, waiting up to `within` seconds for
    `count` of them (all by default)."""
    closed: dict[socket.socket, float] = {}
    deadline = time.monotonic() + within
    wanted = len(socks) if count is None else count
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            selector.register(sock, selectors.EVENT_READ)
        while len(closed) < wanted and time.monotonic() < deadline:
            for key, _ in selector.select(timeout=max(0.0, deadline - time.monotonic())):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                if _closed_by_server(sock):
                    closed[sock] = time.monotonic()
                    selector.unregister(sock)
    return closed


def _close_all(socks: list[socket.socket]) -> None:
    for sock in socks:
        sock.close()


def _open_files(gw: Gateway) -> int:
    return len(os.listdir(f"/proc/{gw.process.pid}/fd"))


def _file_limit(gw: Gateway) -> int:
    """The gateway process's soft limit on open files."""
    for line in Path(f"/proc/{gw.process.pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            return int(line.split()[3])
    raise AssertionError("no open-file limit")


# ---------------------------------------------------------------- the header deadline


def test_200_half_requests_are_closed_at_the_header_timeout(quick: Gateway) -> None:
    files = _open_files(quick)
    assert _file_limit(quick) >= files + 200 + 64  # room for the flood and the gateway's own files
    opened = _stalled(quick.port, [HALF_LINE, HALF_HEADERS] * 100)
    socks = [sock for sock, _ in opened]
    try:
        closed = _wait_closed(socks, QUICK_TIMEOUT + SLACK)
        assert len(closed) == 200, f"{200 - len(closed)} of 200 half requests still open"
        with quick.ws() as conn:
            assert _counts(conn)["timedOut"] >= 200
        assert "dropping connections that owe a request" in quick.log()  # said once a minute at most
        deadline = time.monotonic() + SLACK  # and their descriptors went with them
        while _open_files(quick) > files:
            assert time.monotonic() < deadline, f"{_open_files(quick) - files} descriptors more than before"
            time.sleep(0.05)
        waited = [closed[sock] - started for sock, started in opened]
        # Closed by the deadline (not refused at once), and not held long past it.
        assert min(waited) >= EARLIEST, min(waited)
        assert max(waited) <= QUICK_TIMEOUT + SLACK
    finally:
        _close_all(socks)
    assert http_json(f"{quick.http}/healthz") == (200, {"ok": True})


def test_a_connection_that_sends_nothing_is_closed_at_the_header_timeout(quick: Gateway) -> None:
    [(sock, started)] = _stalled(quick.port, [b""])
    try:
        closed = _wait_closed([sock], QUICK_TIMEOUT + SLACK)
        assert sock in closed and closed[sock] - started >= EARLIEST
    finally:
        sock.close()


def test_header_bytes_trickling_in_do_not_extend_the_deadline(quick: Gateway) -> None:
    """A byte every 50 ms keeps arriving, but the head never ends: the deadline still holds."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", quick.port), timeout=10) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nX-Slow: ")
        closed_at = None
        while closed_at is None and time.monotonic() - started < QUICK_TIMEOUT + SLACK:
            time.sleep(0.05)
            try:
                sock.sendall(b"a")
            except OSError:  # reset: the server closed it
                closed_at = time.monotonic()
                break
            sock.setblocking(False)
            if _closed_by_server(sock):
                closed_at = time.monotonic()
            sock.setblocking(True)
        assert closed_at is not None, "a trickled head kept its socket open"
        assert closed_at - started >= EARLIEST


def test_half_a_second_request_on_a_kept_alive_connection_is_closed(quick: Gateway) -> None:
    with socket.create_connection(("127.0.0.1", quick.port), timeout=10) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        reply = b""
        while not reply.endswith(b'{"ok":true}'):
            reply += sock.recv(4096)
        assert reply.startswith(b"HTTP/1.1 200")
        started = time.monotonic()
        sock.sendall(HALF_HEADERS)  # the first request was whole; the second never ends
        sock.setblocking(False)
        closed = _wait_closed([sock], QUICK_TIMEOUT + SLACK)
        assert sock in closed and closed[sock] - started >= EARLIEST


def test_half_a_pipelined_request_behind_a_whole_one_is_closed(quick: Gateway) -> None:
    """Both arrive in one write: the first is answered, the unfinished second one gets its deadline."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", quick.port), timeout=10) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + HALF_LINE)
        sock.setblocking(False)
        closed = _wait_closed([sock], QUICK_TIMEOUT + SLACK)
        assert sock in closed and closed[sock] - started >= EARLIEST


def test_the_body_of_a_refused_upload_cannot_hold_the_connection(quick: Gateway) -> None:
    """Without the token the request is answered 401 at once; its promised body then trickles in."""
    head = (
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Content-Length: 100000\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", quick.port), timeout=10) as sock:
        sock.sendall(head.encode() + b"{")
        reply = sock.recv(4096)
        assert reply.startswith(b"HTTP/1.1 401"), reply
        answered = time.monotonic()
        closed_at = None
        while closed_at is None and time.monotonic() - answered < QUICK_TIMEOUT + SLACK:
            time.sleep(0.05)
            try:
                sock.sendall(b" ")
            except OSError:
                closed_at = time.monotonic()
            else:
                sock.setblocking(False)
                if _closed_by_server(sock):
                    closed_at = time.monotonic()
                sock.setblocking(True)
        assert closed_at is not None, "a refused request's trickling body kept its socket open"


def test_an_authorised_body_slower_than_the_header_timeout_is_read_whole(quick: Gateway) -> None:
    """The deadline covers the request head: a body its handler is reading may take longer."""
    body = json.dumps({"model": "no-such-agent", "messages": [{"role": "user", "content": "hi"}]}).encode()
    head = (
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {quick.token}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", quick.port), timeout=10) as sock:
        sock.sendall(head.encode())
        pieces = [body[i : i + 8] for i in range(0, len(body), 8)]
        for piece in pieces:  # spread over twice the header timeout
            time.sleep(QUICK_TIMEOUT * 2 / len(pieces))
            sock.sendall(piece)
        reply = b""
        while b"no-such-agent" not in reply and (chunk := sock.recv(4096)):
            reply += chunk
    # Answered after parsing the whole body (the agent it names does not exist), not cut off.
    assert reply.startswith(b"HTTP/1.1 404") and b"no-such-agent" in reply, reply


def test_an_authenticated_websocket_idle_past_the_header_timeout_stays_open(quick: Gateway) -> None:
    with quick.ws() as conn:
        time.sleep(QUICK_TIMEOUT * 2)
        assert request(conn, "health")["ok"] is True


# ---------------------------------------------------------------- the cap on pending connections


def _counts(conn: ClientConnection) -> dict[str, int]:
    """The gateway's own counts of connections owing a request head (status `connections`), asked on an
    open WebSocket (a new connection would be pending itself for a moment)."""
    return dict(request(conn, "status")["payload"]["connections"])


def _none_pending(conn: ClientConnection) -> dict[str, int]:
    """Wait until the gateway has seen the sockets of earlier tests closed: none pending. Its counts."""
    deadline = time.monotonic() + SLACK
    while (counts := _counts(conn))["pending"]:
        assert time.monotonic() < deadline, f"still pending: {counts}"
        time.sleep(0.05)
    return counts


def test_unfinished_upgrades_past_the_cap_close_the_oldest(capped: Gateway) -> None:
    with capped.ws() as conn:
        before = _none_pending(conn)
        opened = _stalled(capped.port, [HALF_UPGRADE] * (CAP + 34))
        socks = [sock for sock, _ in opened]
        try:
            closed = _wait_closed(socks, SLACK, count=34)
            # The oldest went, long before any header timeout; the newest 16 wait for theirs.
            assert set(closed) == set(socks[:34])
            assert max(closed.values()) - opened[0][1] < CAPPED_TIMEOUT / 2
            counts = _counts(conn)
            assert counts["pending"] == CAP
            assert counts["closedOverCap"] - before["closedOverCap"] == 34
            assert not any(_closed_by_server(sock) for sock in socks[34:])
        finally:
            _close_all(socks)


def test_a_client_slow_to_send_its_head_outlives_half_sent_ones(capped: Gateway) -> None:
    """Past the cap, sockets that sent part of a head go before one that has sent nothing yet, however
    old: a real client held up before writing still gets its request through."""
    with capped.ws() as conn:
        _none_pending(conn)
    slow = socket.create_connection(("127.0.0.1", capped.port), timeout=10)
    flood = [sock for sock, _ in _stalled(capped.port, [HALF_HEADERS] * (CAP + 10))]
    try:
        closed = _wait_closed(flood, SLACK, count=11)
        assert set(closed) == set(flood[:11])  # the oldest half-sent ones; 15 remain beside `slow`
        slow.sendall(
            f"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {capped.token}\r\n\r\n".encode()
        )
        reply = b""
        while b'"object":"list"' not in reply and (chunk := slow.recv(4096)):
            reply += chunk
        assert reply.startswith(b"HTTP/1.1 200"), reply
    finally:
        _close_all([slow, *flood])


def test_an_upgrade_with_a_wrong_token_is_answered_and_closed(capped: Gateway) -> None:
    """A finished but unauthenticated upgrade does not linger either: 401, then the server closes."""
    with socket.create_connection(("127.0.0.1", capped.port), timeout=10) as sock:
        sock.sendall(HALF_UPGRADE + b"Authorization: Bearer wrong-token-wrong-token\r\n\r\n")
        sock.setblocking(False)
        started = time.monotonic()
        closed = _wait_closed([sock], SLACK)
        assert sock in closed and closed[sock] - started < CAPPED_TIMEOUT / 2


def test_authorised_requests_are_served_during_a_flood(capped: Gateway) -> None:
    """A flood of 198 unfinished requests, reopened as fast as they are closed: open and authorised
    requests still get through, each well before the flood's sockets would time out. (Their latency
    with and without a flood: benchmarks/test_bench_gateway.py.) The flood runs in a process of its own,
    as an attacker's would: as a thread of this one, it held the interpreter while the client was between
    connecting and sending its upgrade, and that silent client was once closed as the oldest pending."""
    with flood_worker.running(capped.port, 198, "reconnect") as flood:
        started = time.monotonic()
        assert http_json(f"{capped.http}/healthz") == (200, {"ok": True})
        status, models = http_json(f"{capped.http}/v1/models", token=capped.token)
        assert status == 200 and models["data"][0]["id"] == "main"
        with capped.ws() as conn:
            assert request(conn, "health")["ok"] is True
        status, _ = http_json(f"{capped.http}/v1/models", token="wrong-token-wrong-token")
        assert status == 401
        took = time.monotonic() - started
        assert flood.alive()  # the flood went on meanwhile
    assert flood.reopened > 0  # and the gateway kept closing its sockets
    assert took < CAPPED_TIMEOUT / 2, f"authorised requests took {took:.1f} s during the flood"


def _reconfigure(gw: Gateway, cap: int) -> None:
    """Set gateway.maxPendingConnections in openclaw.json and wait until the gateway has reloaded it."""
    path = gw.home / "openclaw.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config["gateway"]["maxPendingConnections"] = cap
    with gw.ws() as conn:
        before = request(conn, "status")["payload"]["config"]
        path.write_text(json.dumps(config), encoding="utf-8")
        deadline = time.monotonic() + 15
        while request(conn, "status")["payload"]["config"] == before:
            assert time.monotonic() < deadline, "the gateway did not reload openclaw.json"
            time.sleep(0.05)


def test_a_changed_cap_applies_without_a_restart(capped: Gateway) -> None:
    with capped.ws() as conn:
        _none_pending(conn)
    _reconfigure(capped, 4)
    try:
        with capped.ws() as conn:
            before = _none_pending(conn)
            opened = _stalled(capped.port, [HALF_LINE] * 10)
            socks = [sock for sock, _ in opened]
            try:
                closed = _wait_closed(socks, SLACK, count=6)
                assert set(closed) == set(socks[:6])
                # The sixth close came as the tenth socket was taken in: by the gateway's own counts all
                # ten are accounted for, so the four newest are past every close the cap could make.
                counts = _counts(conn)
                assert counts["pending"] == 4
                assert counts["closedOverCap"] - before["closedOverCap"] == 6
                assert not any(_closed_by_server(sock) for sock in socks[6:])
            finally:
                _close_all(socks)
    finally:
        _reconfigure(capped, CAP)


def test_a_header_timeout_of_zero_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="headerTimeoutSeconds"):
        validate_settings({"gateway": {"headerTimeoutSeconds": 0}}, {}, tmp_path / "openclaw.json")


def test_a_pending_cap_of_zero_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="maxPendingConnections"):
        validate_settings({"gateway": {"maxPendingConnections": 0}}, {}, tmp_path / "openclaw.json")


def test_the_limits_default_to_10_s_and_256_pending(tmp_path: Path) -> None:
    gateway = validate_settings({}, {}, tmp_path / "openclaw.json").gateway
    assert (gateway.header_timeout_seconds, gateway.max_pending_connections) == (10, 256)
