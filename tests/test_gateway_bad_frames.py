"""A WebSocket text frame that is not valid UTF-8 (issue 48, "log noise"): the gateway closes the
connection with 1007, and its log says so in one line per frame, without uvicorn's traceback."""

from __future__ import annotations

import json
import os
import struct
import time
from collections.abc import Iterator

import pytest
from websockets.exceptions import ConnectionClosedError

from tests.gateway_helpers import Gateway, running_gateway, write_config

ONE_LINE = "closed a WebSocket with 1007: a text frame was not valid UTF-8"


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    home = tmp_path_factory.mktemp("bad-frames") / "home"
    write_config(home, None)
    with running_gateway(home) as served:
        yield served


def _text_frame(payload: bytes) -> bytes:
    """One masked text frame (a client's frames are masked), whatever its bytes."""
    mask = os.urandom(4)
    masked = bytes(byte ^ mask[i % 4] for i, byte in enumerate(payload))
    return struct.pack("!BB", 0x81, 0x80 | len(payload)) + mask + masked


def _send_bad_text(gateway: Gateway, payload: bytes) -> int | None:
    """Send `payload` as a text frame on an authenticated connection; the close code the gateway sent."""
    with gateway.ws() as conn:
        conn.socket.sendall(_text_frame(payload))  # below the client library, which would refuse to
        try:
            conn.recv(timeout=30)
        except ConnectionClosedError as closed:
            return None if closed.rcvd is None else closed.rcvd.code
    return None


def _log_lines_until(gateway: Gateway, count: int) -> list[str]:
    deadline = time.monotonic() + 60
    while True:
        lines = [line for line in gateway.log().splitlines() if ONE_LINE in line]
        if len(lines) >= count:
            return lines
        assert time.monotonic() < deadline, gateway.log()[-3000:]
        time.sleep(0.05)


def test_an_invalid_utf8_text_frame_is_closed_with_1007(gateway: Gateway) -> None:
    assert _send_bad_text(gateway, b"\xff\xfe not utf-8") == 1007


def test_each_frame_is_one_log_line_without_a_traceback(gateway: Gateway) -> None:
    before = len([line for line in gateway.log().splitlines() if ONE_LINE in line])
    for payload in (b"\xff", b"ok then \xc3\x28", b"\xed\xa0\x80 surrogate"):
        assert _send_bad_text(gateway, payload) == 1007
    lines = _log_lines_until(gateway, before + 3)
    assert len(lines) == before + 3
    log = gateway.log()
    assert "Traceback" not in log and "UnicodeDecodeError" not in log
    assert "Invalid UTF-8 sequence" not in log  # uvicorn's own words are replaced, not repeated


def test_the_gateway_still_serves_after_bad_frames(gateway: Gateway) -> None:
    assert _send_bad_text(gateway, b"\xff") == 1007
    with gateway.ws() as conn:
        conn.send(json.dumps({"type": "req", "id": "1", "method": "health", "params": {}}))
        answer = json.loads(conn.recv(timeout=30))
    assert (answer["id"], answer["ok"]) == ("1", True)
