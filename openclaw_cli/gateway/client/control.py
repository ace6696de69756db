"""Controlling a gateway from the CLI: start in the background, stop, status, health, call a method.

The running gateway writes `$OPENCLAW_HOME/gateway/gateway.pid` (JSON: pid, host, port) once it listens
and removes it when it stops; a background gateway logs to `gateway/gateway.log` (0600). Reading the pid
file and probing the process are pidfile.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from openclaw_cli.core.errors import NotFound, OpenclawError
from openclaw_cli.core.fsutil import FILE_MODE
from openclaw_cli.core.paths import Home
from openclaw_cli.gateway.auth import read_token_file
from openclaw_cli.gateway.client.pidfile import (
    gateway_process,
    home_gateway,
    log_file,
    pid_file,
    probe,
    process_alive,
    read_pid_record,
)

DEFAULT_TIMEOUT = 10.0


class GatewayDown(OpenclawError):
    """No gateway answers."""


def client_token(home: Home, given: str | None, env_token: str | None) -> str | None:
    return given or env_token or read_token_file(home.root / "gateway" / "token")


def endpoint(home: Home, port: int | None) -> tuple[str, int]:
    """Where to reach the gateway: --port on loopback, else what this home's pid file says (its process
    alive). Never a default port: what listens there may be another home's gateway."""
    if port is not None:
        return "127.0.0.1", port
    found = home_gateway(home)
    if found is None:
        raise GatewayDown(
            f"no gateway runs for this home ({_why_none(home)})",
            hint="start one with `openclaw gateway start`, or give --port",
        )
    return found


def _why_none(home: Home) -> str:
    record = read_pid_record(home)
    if record is None:
        return f"no pid file at {pid_file(home)}"
    return f"its pid file names process {record['pid']}, which is not a running gateway"


def call(
    host: str,
    port: int,
    token: str | None,
    method: str,
    params: dict[str, Any],
    timeout: float = DEFAULT_TIMEOUT,
) -> Any:
    """Connect over WebSocket with the token, call one method; its payload, or OpenclawError.

    The `connect` request (with the token again) lets a gateway of an earlier version, which waits for
    it, serve the call too."""
    from websockets.exceptions import WebSocketException

    from openclaw_cli.gateway.client.websocket import open_ws

    target = "127.0.0.1" if host == "0.0.0.0" else host
    try:
        with open_ws(f"ws://{target}:{port}/ws", token, open_timeout=timeout, close_timeout=2) as ws:
            for request_id, name, body in (
                ("c", "connect", {"auth": {"token": token or ""}}),
                ("1", method, params),
            ):
                ws.send(json.dumps({"type": "req", "id": request_id, "method": name, "params": body}))
                reply = _response(ws, request_id, timeout)
                if not reply.get("ok"):
                    error = reply.get("error") or {}
                    raise OpenclawError(
                        f"{name}: {error.get('code')}: {error.get('message')}", error.get("hint")
                    )
            return reply.get("payload")
    except (OSError, WebSocketException, TimeoutError) as exc:
        raise GatewayDown(
            f"no gateway answers on {target}:{port} ({exc.__class__.__name__})",
            hint="start one with `openclaw gateway start`",
        ) from exc


def _response(ws: Any, request_id: str, timeout: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        frame = json.loads(ws.recv(timeout=max(0.01, deadline - time.monotonic())))
        if frame.get("type") == "res" and frame.get("id") == request_id:
            return dict(frame)


def start_background(
    home: Home, run_args: list[str], env: dict[str, str], timeout: float = 30.0
) -> dict[str, Any]:
    """Start `openclaw gateway run ARGS` detached; wait until it answers /healthz."""
    record = gateway_process(home)
    if record is not None:
        raise OpenclawError(
            f"a gateway is already running (pid {record['pid']}, port {record.get('port')})",
            hint="stop it with `openclaw gateway stop`",
        )
    home.ensure(home.root / "gateway")
    with contextlib.suppress(FileNotFoundError):
        pid_file(home).unlink()  # stale: its process is gone
    log_path = log_file(home)
    fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
    with os.fdopen(fd, "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "openclaw_cli", "--home", str(home.root), "gateway", "run", *run_args],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            start_new_session=True,
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise OpenclawError(
                f"the gateway exited at start (status {process.returncode}): {_log_tail(log_path)}",
                hint=f"see {log_path}",
            )
        record = read_pid_record(home)
        if record is not None and record["pid"] == process.pid and probe(record["host"], record["port"]):
            return {**record, "log": str(log_path)}
        time.sleep(0.1)
    process.terminate()
    raise OpenclawError(f"the gateway did not answer within {timeout:.0f} s", hint=f"see {log_path}")


def _log_tail(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return "-"
    return lines[-1] if lines else "-"


def stop(home: Home, timeout: float = 15.0) -> dict[str, Any]:
    """SIGTERM the gateway of this home and wait for it to exit (SIGKILL after `timeout`). A pid file whose
    process is no gateway (its pid reused since) names nothing to stop: that process is left alone."""
    record = gateway_process(home)
    if record is None:
        with contextlib.suppress(FileNotFoundError):
            pid_file(home).unlink()
        raise NotFound("no gateway is running for this home", hint="start one with `openclaw gateway start`")
    pid = record["pid"]
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not process_alive(pid) or _reaped(pid):
            return {"stopped": True, "pid": pid, "forced": False}
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(FileNotFoundError):
        pid_file(home).unlink()
    return {"stopped": True, "pid": pid, "forced": True}


def _reaped(pid: int) -> bool:
    """A child of this process that exited is a zombie until waited for (only in tests that start it)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return False
    return done == pid


def status(home: Home, port: int | None, token: str | None) -> dict[str, Any]:
    """Whether this home's gateway (or what --port names) answers. Without --port and without a live pid
    file nothing is probed: a gateway on the default port may be another home's."""
    record = read_pid_record(home)
    found = ("127.0.0.1", port) if port is not None else home_gateway(home)
    result: dict[str, Any] = {
        "running": False,
        # the pid file's process only when it is the gateway asked (--port may name another)
        "pid": record.get("pid") if record and found and record.get("port") == found[1] else None,
        "host": found[0] if found else None,
        "port": found[1] if found else None,
        "pidFile": str(pid_file(home)),
        "log": str(log_file(home)),
    }
    if found is None:
        result["reason"] = f"no gateway runs for this home: {_why_none(home)}"
        return result
    host, chosen = found
    health = probe(host, chosen)
    result["running"] = health is not None
    if health is None:
        result["reason"] = f"nothing answers on {host}:{chosen}"
    elif token:
        with contextlib.suppress(OpenclawError):
            result["gateway"] = call(host, chosen, token, "status", {}, timeout=5)
    return result
