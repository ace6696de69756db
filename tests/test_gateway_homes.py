"""A home talks only to its own gateway (issue 48, "a gateway of another home").

Home A runs a real gateway (`gateway start --port 0`); home B has none, and its `gateway.port` names A's
port, so that a client falling back to the configured (or default) port would find A's gateway there, as
B found it on 18789 in the report: `status` said "running: pid -", `stop` that nothing ran, and `chat`
failed with HTTP 401. The default port itself is never used.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.gateway_helpers import http_json

A_TEA = "Ann drinks oolong tea every afternoon"
B_COFFEE = "Bo drinks espresso every morning"


@dataclass(frozen=True)
class Homes:
    a: Path
    b: Path
    port: int
    pid: int


def _home(root: Path, config: dict[str, object]) -> Path:
    root.mkdir(parents=True, mode=0o700)
    (root / "openclaw.json").write_text(json.dumps(config), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def homes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Homes]:
    base = tmp_path_factory.mktemp("homes")
    a = _home(base / "a", {"session": {"reset": {"atHour": None}}})
    added = run_cli(a, "memory", "add", A_TEA, "--user", "ann", "-c", "preference")
    assert added.returncode == 0, added.stderr
    started = run_cli(a, "gateway", "start", "--port", "0", "--json")
    assert started.returncode == 0, started.stderr
    record = started.json()
    try:
        b = _home(base / "b", {"gateway": {"port": record["port"]}, "session": {"reset": {"atHour": None}}})
        added = run_cli(b, "memory", "add", B_COFFEE, "--user", "bo", "-c", "preference")
        assert added.returncode == 0, added.stderr
        yield Homes(a, b, int(record["port"]), int(record["pid"]))
    finally:
        stopped = run_cli(a, "gateway", "stop")
        assert stopped.returncode == 0, stopped.stderr


def _a_still_answers(homes: Homes) -> bool:
    status, body = http_json(f"http://127.0.0.1:{homes.port}/healthz")
    return status == 200 and body == {"ok": True}


def test_status_of_a_home_without_a_gateway_says_not_running(homes: Homes) -> None:
    shown = run_cli(homes.b, "gateway", "status")
    assert shown.returncode == 1, shown.stdout
    assert shown.stdout.startswith("not running (no gateway runs for this home: no pid file at ")
    assert str(homes.b / "gateway" / "gateway.pid") in shown.stdout


def test_status_json_of_a_home_without_a_gateway(homes: Homes) -> None:
    shown = run_cli(homes.b, "gateway", "status", "--json")
    assert shown.returncode == 1
    body = shown.json()
    assert (body["running"], body["pid"], body["port"]) == (False, None, None)
    assert "gateway" not in body  # nothing was asked of A's gateway


def test_status_of_the_home_that_runs_it_is_unchanged(homes: Homes) -> None:
    shown = run_cli(homes.a, "gateway", "status", "--json")
    assert shown.returncode == 0, shown.stderr
    assert (shown.json()["running"], shown.json()["pid"]) == (True, homes.pid)
    assert shown.json()["gateway"]["home"] == str(homes.a)


def test_stop_in_another_home_stops_nothing(homes: Homes) -> None:
    stopped = run_cli(homes.b, "gateway", "stop")
    assert stopped.returncode == 1
    assert "no gateway is running for this home" in stopped.stderr
    assert _a_still_answers(homes)


@pytest.mark.parametrize("command", [("health",), ("call", "status")], ids=["health", "call"])
def test_health_and_call_in_another_home_find_no_gateway(homes: Homes, command: tuple[str, ...]) -> None:
    answered = run_cli(homes.b, "gateway", *command)
    assert answered.returncode == 1
    assert answered.stderr.startswith("openclaw: error: no gateway runs for this home (no pid file at ")
    assert len(answered.stderr.strip().splitlines()) == 1


def test_chat_in_another_home_runs_in_process(homes: Homes) -> None:
    chatted = run_cli(homes.b, "chat", input="hello from b\n")
    assert chatted.returncode == 0, chatted.stderr
    assert "(in-process)" in chatted.stdout
    assert "no gateway runs for this home: running in-process" in chatted.stdout
    assert "401" not in chatted.stdout + chatted.stderr
    listed = run_cli(homes.b, "session", "show", "agent:main:main", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "hello from b" in listed.stdout
    theirs = run_cli(homes.a, "session", "list", "--json")
    assert "hello from b" not in theirs.stdout


def test_chat_in_the_home_that_runs_it_goes_through_its_gateway(homes: Homes) -> None:
    chatted = run_cli(homes.a, "chat", input="/status\n")
    assert chatted.returncode == 0, chatted.stderr
    assert f"(gateway ws://127.0.0.1:{homes.port}/ws)" in chatted.stdout


def test_memory_search_in_another_home_is_answered_in_process(homes: Homes) -> None:
    found = run_cli(homes.b, "-v", "memory", "search", "what does he drink", "--all", "--json")
    assert found.returncode == 0, found.stderr
    texts = [hit["l0"] for hit in found.json()["results"]]
    assert B_COFFEE in texts and A_TEA not in texts
    assert "gateway" not in found.stderr  # not asked, so nothing to say about it


def test_memory_search_in_the_home_that_runs_it_goes_through_its_gateway(homes: Homes) -> None:
    found = run_cli(homes.a, "-v", "memory", "search", "what does she drink", "--all", "--json")
    assert found.returncode == 0, found.stderr
    assert f"through the gateway at 127.0.0.1:{homes.port}" in found.stderr
    assert [hit["l0"] for hit in found.json()["results"]] == [A_TEA]


def test_a_pid_file_naming_a_process_that_is_no_gateway_is_not_one(tmp_path: Path, homes: Homes) -> None:
    """A pid the system gave to another program since (here: a sleeper) names no gateway, even when the
    port in the file answers (A's gateway listens there)."""
    home = _home(tmp_path / "c", {})
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
    try:
        (home / "gateway").mkdir(mode=0o700)
        record = {"pid": sleeper.pid, "host": "127.0.0.1", "port": homes.port}
        (home / "gateway" / "gateway.pid").write_text(json.dumps(record), encoding="utf-8")
        shown = run_cli(home, "gateway", "status")
        chatted = run_cli(home, "chat", input="hi\n")
    finally:
        sleeper.kill()
        sleeper.wait()
    assert shown.returncode == 1
    assert f"names process {sleeper.pid}, which is not a running gateway" in shown.stdout
    assert chatted.returncode == 0, chatted.stderr
    assert "(in-process)" in chatted.stdout
