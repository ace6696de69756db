"""Whether the process a gateway pid file names still runs (gateway/client/pidfile.py process_alive), with real
processes: a zombie (exited, not reaped by its parent) does not. A gateway started in the background is
reparented to init, and in a container init may reap late or never: `gateway stop` must not wait for it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_cli.gateway.client.pidfile import process_alive
from tests.conftest import run_cli

# A parent that never reaps: it starts a child that sleeps, prints the child's pid, then waits for stdin.
# The child's command line names a gateway, as the pid file's process must for `gateway stop` to signal it.
NEGLECTFUL_PARENT = (
    "import subprocess, sys; child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', "
    "'gateway', 'run']); print(child.pid, flush=True); sys.stdin.read()"
)


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]


def _until_zombie(pid: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while _state(pid) != "Z":
        assert time.monotonic() < deadline, f"process {pid} did not exit"
        time.sleep(0.01)


@pytest.fixture
def orphan_like() -> Iterator[int]:
    """The pid of a running process whose parent is not this test and will not reap it."""
    parent = subprocess.Popen(
        [sys.executable, "-c", NEGLECTFUL_PARENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    yield child
    assert parent.stdin is not None
    parent.stdin.close()  # the parent ends; its zombie child goes with it
    parent.wait(30)


def test_a_running_process_is_alive_and_one_that_is_gone_is_not() -> None:
    assert process_alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait(30)  # reaped: its pid is free
    assert not process_alive(child.pid)


def test_an_exited_process_not_yet_reaped_is_not_alive(orphan_like: int) -> None:
    assert process_alive(orphan_like)
    os.kill(orphan_like, 15)
    _until_zombie(orphan_like)
    os.kill(orphan_like, 0)  # the kernel still knows the pid...
    assert not process_alive(orphan_like)  # ...but nothing runs there


def test_stop_does_not_wait_for_the_gateway_to_be_reaped(tmp_path: Path, orphan_like: int) -> None:
    """`gateway stop` SIGTERMs the process its pid file names and waits until it no longer runs. Before, a
    zombie counted as running: the stop waited out its 15 s and then reported the gateway killed."""
    home = tmp_path / "home"
    (home / "gateway").mkdir(parents=True, mode=0o700)
    record = {"pid": orphan_like, "host": "127.0.0.1", "port": 9}
    (home / "gateway" / "gateway.pid").write_text(json.dumps(record))
    stopped = run_cli(home, "gateway", "stop", "--json", timeout=60)
    assert stopped.returncode == 0, stopped.stderr
    assert stopped.json() == {"stopped": True, "pid": orphan_like, "forced": False}
    assert _state(orphan_like) == "Z"  # ended by the SIGTERM, and still not reaped


def test_stop_leaves_a_process_that_is_no_gateway_alone(tmp_path: Path) -> None:
    """A stale pid file whose pid the system gave to another program since: stop must not signal it."""
    home = tmp_path / "home"
    (home / "gateway").mkdir(parents=True, mode=0o700)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        record = {"pid": other.pid, "host": "127.0.0.1", "port": 9}
        (home / "gateway" / "gateway.pid").write_text(json.dumps(record))
        stopped = run_cli(home, "gateway", "stop", timeout=60)
        assert stopped.returncode == 1 and "no gateway is running for this home" in stopped.stderr
        assert other.poll() is None  # still running
    finally:
        other.kill()
        other.wait()
