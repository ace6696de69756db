"""The gateway as a real process on a free port, and small WebSocket/HTTP clients for the tests."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

from tests.conftest import ROOT, base_env
from tests.fake_openai import FAKE_API_KEY, STOP_POLL_S, FakeOpenAI


@contextmanager
def answering_port() -> Iterator[int]:
    """A loopback port where an HTTP server answers every GET with 200 `{"ok": true}`, as a gateway's
    /healthz does: a home whose gateway.port names it must still not take it for its own gateway."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Healthy(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            body = b'{"ok": true}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Healthy)
    thread = threading.Thread(target=server.serve_forever, args=(STOP_POLL_S,), daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def echo_last_user(body: dict[str, Any]) -> str:
    """A fake-model reply that names the user text it answered: `echo: TEXT`."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return "echo: " + str(users[-1]["content"] if users else "")


@contextmanager
def echo_server() -> Iterator[FakeOpenAI]:
    """A started fake model that answers `echo: TEXT` (echo_last_user), stopped afterwards."""
    server = FakeOpenAI().start()
    server.respond_with(echo_last_user)
    try:
        yield server
    finally:
        server.stop()


def write_config(home: Path, fake: FakeOpenAI | None, **sections: Any) -> None:
    """openclaw.json for a gateway test: the fake model, fast collect, plus `sections`."""
    config: dict[str, Any] = {
        "llm": {
            "model": "openai/fake",
            "apiBase": fake.url if fake else None,
            "maxRetries": 0,
            "timeoutSeconds": 20,
        },
        "gateway": {"queue": {"mode": "followup", "debounceMs": 50}, "configPollMs": 100},
        "session": {"reset": {"atHour": None}},
    }
    for name, value in sections.items():
        config[name] = {**config.get(name, {}), **value} if isinstance(value, dict) else value
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    (home / "openclaw.json").write_text(json.dumps(config, indent=2), encoding="utf-8")


@dataclass
class Gateway:
    home: Path
    process: subprocess.Popen[bytes]
    port: int
    token: str

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @contextmanager
    def ws(self, *, token: str | None = None) -> Iterator[ClientConnection]:
        """A connection authenticated at the upgrade (Authorization: Bearer), as every client does."""
        headers = {"Authorization": f"Bearer {token or self.token}"}
        with connect(self.ws_url, open_timeout=10, max_size=None, additional_headers=headers) as conn:
            yield conn

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(10)

    def log(self) -> str:
        return (self.home / "gateway-test.log").read_text(encoding="utf-8", errors="replace")


def start_gateway(
    home: Path,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    launcher: tuple[str, ...] = ("-m", "openclaw_cli"),
) -> Gateway:
    """`openclaw gateway run --port 0 ARGS` as a process; returns once /healthz answers. `launcher` is
    what python runs in place of `-m openclaw_cli` (a gateway of another version, say)."""
    full_env = base_env(home)
    full_env["OPENAI_API_KEY"] = FAKE_API_KEY
    # No scheduled job (cron.jobs) unless a test asks: an hourly `reflect --if-due` crossing a test would
    # add model calls to one that counts them. tests/test_scheduler_gateway.py turns the schedule on.
    full_env["OPENCLAW_CRON__ENABLED"] = "false"
    full_env.update(env or {})
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    pid_path = home / "gateway" / "gateway.pid"
    log = open(home / "gateway-test.log", "ab")  # noqa: SIM115 - the child keeps it
    process = subprocess.Popen(
        [sys.executable, *launcher, "gateway", "run", "--port", "0", *args],
        env=full_env,
        cwd=ROOT,
        stdout=log,
        stderr=log,
        stdin=subprocess.DEVNULL,
    )
    log.close()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            text = (home / "gateway-test.log").read_text(errors="replace")
            raise AssertionError(f"gateway exited with {process.returncode}: {text[-2000:]}")
        try:
            record = json.loads(pid_path.read_bytes())
        except (OSError, ValueError):
            record = None
        if record and record.get("pid") == process.pid:
            given = full_env.get("OPENCLAW_GATEWAY_TOKEN")
            token = given or _flag(args, "--token") or (home / "gateway" / "token").read_text().strip()
            return Gateway(home, process, int(record["port"]), token)
        time.sleep(0.05)
    process.kill()
    raise AssertionError("the gateway did not start in time")


def _flag(args: tuple[str, ...], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


@contextmanager
def running_gateway(home: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Gateway]:
    gateway = start_gateway(home, *args, env=env)
    try:
        yield gateway
    finally:
        gateway.stop()


@contextmanager
def gateway_without_extraction(home: Path, fake: FakeOpenAI) -> Iterator[Gateway]:
    """A gateway on `fake` with background extraction off, so the only model calls are the turns' own."""
    write_config(home, fake, memory={"extraction": {"enabled": False}})
    with running_gateway(home) as gw:
        yield gw


_ids = iter(range(1, 10**9))


def send(conn: ClientConnection, method: str, params: dict[str, Any] | None = None) -> str:
    request_id = str(next(_ids))
    conn.send(json.dumps({"type": "req", "id": request_id, "method": method, "params": params or {}}))
    return request_id


def frames_until(conn: ClientConnection, done: Any, timeout: float = 30) -> list[dict[str, Any]]:
    """Frames received until `done(frame)` is true (that frame included)."""
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while True:
        frame = json.loads(conn.recv(timeout=max(0.01, deadline - time.monotonic())))
        seen.append(frame)
        if done(frame):
            return seen


def until(check: Any, timeout: float = 90) -> None:
    """Wait until `check()` holds (what a running gateway does in the background), failing after `timeout`."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.1)


def request(
    conn: ClientConnection, method: str, params: dict[str, Any] | None = None, timeout: float = 30
) -> dict[str, Any]:
    """Send one request; its response frame (events received meanwhile are dropped)."""
    request_id = send(conn, method, params)
    return frames_until(conn, lambda f: f.get("type") == "res" and f.get("id") == request_id, timeout)[-1]


def send_all(
    conn: ClientConnection, texts: list[str], key: str, **params: Any
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """chat.send each text (without waiting), then (acks in order, chat events) until every run ended."""
    ids = [send(conn, "chat.send", {"text": text, "sessionKey": key, **params}) for text in texts]
    acks: dict[str, dict[str, Any]] = {}
    events: list[dict[str, Any]] = []
    ended: set[str] = set()

    def done(frame: dict[str, Any]) -> bool:
        if frame.get("type") == "res" and frame.get("id") in ids:
            assert frame["ok"], frame
            acks[frame["id"]] = frame["payload"]
        elif frame.get("event") == "chat":
            events.append(frame["payload"])
            if frame["payload"]["state"] in ("final", "error", "aborted"):
                ended.add(frame["payload"]["runId"])
        return len(acks) == len(ids) and {a["runId"] for a in acks.values()} <= ended

    frames_until(conn, done, 120)
    return [acks[i] for i in ids], events


def chat_until_final(conn: ClientConnection, run_ids: set[str], timeout: float = 60) -> list[dict[str, Any]]:
    """`chat` events until every run in `run_ids` has ended (final, error or aborted)."""
    open_runs = set(run_ids)
    events: list[dict[str, Any]] = []

    def done(frame: dict[str, Any]) -> bool:
        if frame.get("type") == "event" and frame.get("event") == "chat":
            events.append(frame["payload"])
            if frame["payload"]["state"] in ("final", "error", "aborted"):
                open_runs.discard(frame["payload"]["runId"])
        return not open_runs

    if open_runs:
        frames_until(conn, done, timeout)
    return events


def http_json(
    url: str,
    body: Any = None,
    *,
    token: str | None = None,
    method: str | None = None,
    raw: bytes | None = None,
    timeout: float = 60,
) -> tuple[int, Any]:
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, method=method or ("POST" if data is not None else "GET"))
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as reply:
            return reply.status, json.loads(reply.read() or b"null")
    except urllib.error.HTTPError as exc:
        payload = exc.read()
        try:
            return exc.code, json.loads(payload or b"null")
        except ValueError:
            return exc.code, payload.decode(errors="replace")
