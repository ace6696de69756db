"""`openclaw mcp` over stdio, byte by byte (issue 51): nothing but JSON-RPC reaches stdout during a whole
session, model loading and jieba's dictionary included; a lone surrogate, which the SDK's own client cannot
even send, is a tool error and the server keeps serving.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp_types import LATEST_PROTOCOL_VERSION

from tests.conftest import ROOT, base_env


class RawSession:
    """The protocol spoken by hand over the server's pipes, every byte of stdout kept."""

    def __init__(self, home: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "openclaw_cli", "mcp"],
            env=base_env(home),
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.stdout = bytearray()

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode("utf-8") + b"\n")
        self.process.stdin.flush()

    def ask(self, request_id: int, method: str, params: dict[str, Any], raw: str | None = None) -> Any:
        """Send a request (as `raw` text when given) and read lines until its response."""
        self.send(raw or json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            assert line, "the server closed stdout"
            self.stdout += line
            message = json.loads(line)
            if message.get("id") == request_id:
                return message

    def finish(self) -> tuple[bytes, str]:
        out, err = self.process.communicate(timeout=60)
        self.stdout += out
        return bytes(self.stdout), err.decode("utf-8", "replace")


def _tool(session: RawSession, request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    answer = session.ask(request_id, "tools/call", {"name": name, "arguments": arguments})
    result: dict[str, Any] = answer["result"]
    return result


def test_stdout_carries_only_json_rpc_for_a_whole_session(tmp_path: Path) -> None:
    home = tmp_path / "home"
    session = RawSession(home)
    init = session.ask(
        1,
        "initialize",
        {
            "protocolVersion": LATEST_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    )
    assert init["result"]["serverInfo"]["name"] == "openclaw"
    session.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    assert len(session.ask(2, "tools/list", {})["result"]["tools"]) == 6
    # Han text: the first one loads jieba's dictionary ("Building prefix dict ..."), while the models load
    added = _tool(session, 3, "memory_add", {"text": "我喜欢喝乌龙茶", "category": "preference"})
    assert not added["isError"], added
    found = _tool(session, 4, "memory_search", {"query": "乌龙茶"})
    assert "乌龙茶" in found["content"][0]["text"]
    # a lone surrogate, as JSON may spell it and a JavaScript client sends it
    raw = (
        '{"jsonrpc": "2.0", "id": 5, "method": "tools/call", '
        '"params": {"name": "memory_search", "arguments": {"query": "tea \\ud800 time"}}}'
    )
    refused = session.ask(5, "tools/call", {}, raw=raw)["result"]
    assert refused["isError"] and "lone surrogate" in refused["content"][0]["text"]
    assert "\n" not in refused["content"][0]["text"]
    # a pair is a character, and is searched as one
    paired = '{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "memory_search", "arguments": {"query": "tea \\ud83c\\udf75"}}}'
    assert not session.ask(6, "tools/call", {}, raw=paired)["result"]["isError"]
    stats = session.ask(7, "resources/read", {"uri": "memory://stats"})
    assert json.loads(stats["result"]["contents"][0]["text"])["memories"] == 1
    out, err = session.finish()
    assert session.process.returncode == 0, err
    assert out.endswith(b"\n")
    lines = out.decode("utf-8").split("\n")[:-1]
    for line in lines:
        message = json.loads(line)  # every line, whole, is one JSON-RPC message
        assert message["jsonrpc"] == "2.0"
        assert set(message) <= {"jsonrpc", "id", "result", "error", "method", "params"}
    assert {json.loads(line).get("id") for line in lines} >= {1, 2, 3, 4, 5, 6, 7}


def test_the_claimed_stdout_keeps_every_other_write_off_the_protocol(tmp_path: Path) -> None:
    """Whatever writes to fd 1 after claim_stdout (print, a C library's write) lands on stderr."""
    script = (
        "import os, sys\n"
        "from openclaw_cli.mcp.transport import claim_stdout\n"
        "wire = claim_stdout()\n"
        "print('a stray print', flush=True)\n"
        "os.write(1, b'a native write\\n')\n"
        'os.write(wire, b\'{"jsonrpc": "2.0"}\\n\')\n'
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
        env=base_env(tmp_path / "h"),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b'{"jsonrpc": "2.0"}\n'
    assert b"a stray print" in done.stderr and b"a native write" in done.stderr
