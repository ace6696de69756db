"""The key agent (`security unlock` / `lock`, issue 52): a second process opens an unlocked home with no
passphrase; lock, expiry, a stale socket and a killed agent all fall back to the passphrase.

The agent's logic (expiry, refresh, a key file replaced) runs in-process with an injected clock; the peer
check is tested on a real socketpair (another uid cannot be made here); a few real processes show the
whole path. Homes are encrypted in-process with a cheap scrypt; each test's agents get a short runtime
directory of their own (a Unix socket path must fit in 107 bytes) and are locked at the end.
"""

from __future__ import annotations

import os
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_cli.security import agent, convert, keyfile, unlocked
from openclaw_cli.security.agent_server import KeyHolder, bind, serve
from tests.conftest import run_cli

PASS = "agent test passphrase"
KEY = bytes(range(32))


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("agent") / "home"
    assert run_cli(home, "memory", "add", "I drink MARKERAGENT tea").returncode == 0
    convert.init_home(home, PASS, kdf_n=2**10)
    unlocked.forget()
    return home


@pytest.fixture
def rundir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="oc-", dir="/tmp"))
    yield path
    for sock in (path / "openclaw").glob("*.sock"):
        agent.lock(sock)  # an agent a test left running
    for sock in (path / "openclaw").glob("*.sock"):
        sock.unlink()


@pytest.fixture
def home(template: Path, tmp_path: Path) -> Path:
    import shutil

    copy = tmp_path / "home"
    shutil.copytree(template, copy)
    return copy


def cli(home: Path, rundir: Path, *args: str, passphrase: str | None = None):  # type: ignore[no-untyped-def]
    env = {"XDG_RUNTIME_DIR": str(rundir)}
    if passphrase is not None:
        env["OPENCLAW_PASSPHRASE"] = passphrase
    return run_cli(home, *args, env=env, input="")


def search_works(home: Path, rundir: Path) -> bool:
    result = cli(home, rundir, "memory", "search", "tea", "--json")
    return result.returncode == 0 and "MARKERAGENT" in result.stdout


# --- the agent's logic, in-process -----------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_holder_serves_its_key_until_the_ttl_then_forgets_it() -> None:
    clock = Clock()
    holder = KeyHolder(KEY, "check-a", clock() + 60, clock)
    answer, stop = holder.handle({"op": "get", "check": "check-a"})
    assert answer["ok"] and bytes.fromhex(answer["key"]) == KEY and not stop
    clock.now += 59
    assert holder.handle({"op": "status", "check": "check-a"})[0]["matches"] is True
    clock.now += 1
    answer, stop = holder.handle({"op": "get", "check": "check-a"})
    assert answer == {"ok": False, "error": "expired"} and stop and holder.key == b""


def test_holder_refuses_the_key_to_another_key_file_and_put_refreshes() -> None:
    clock = Clock()
    holder = KeyHolder(KEY, "check-a", clock() + 60, clock)
    assert holder.handle({"op": "get", "check": "check-b"})[0]["ok"] is False
    assert holder.handle({"op": "status", "check": "check-b"})[0]["matches"] is False
    clock.now += 50
    answer, _ = holder.handle({"op": "put", "key": KEY.hex(), "check": "check-a", "ttl": 600})
    assert answer["expires"] == clock.now + 600
    clock.now += 500
    assert holder.handle({"op": "get", "check": "check-a"})[0]["ok"]


@pytest.mark.parametrize(
    "bad",
    [
        {"op": "put", "key": "zz", "ttl": 5},
        {"op": "put", "key": KEY.hex(), "ttl": -1},
        {"op": "put"},
        {"op": "x"},
    ],
)
def test_holder_refuses_bad_requests(bad: dict[str, object]) -> None:
    holder = KeyHolder(KEY, "c", time.time() + 60)
    answer, stop = holder.handle(bad)
    assert answer["ok"] is False and not stop and holder.key == KEY


def test_lock_forgets_and_stops() -> None:
    holder = KeyHolder(KEY, "c", time.time() + 60)
    assert holder.handle({"op": "lock"}) == ({"ok": True}, True)
    assert holder.key == b"" and holder.expired()


def test_peer_check_accepts_only_the_agents_own_uid() -> None:
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with left, right:
        assert agent.peer_uid(left) == os.getuid()
        assert agent.peer_allowed(left, os.getuid())
        assert not agent.peer_allowed(left, os.getuid() + 1)


def test_a_served_socket_is_0600_and_a_stale_one_is_replaced(rundir: Path) -> None:
    path = rundir / "agent-test.sock"
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()  # what an agent killed -9 leaves: a socket file nobody listens on
    assert agent.agent_status(path, _keyfile()) is None  # refused: "no agent", not an error
    listener = bind(path)
    assert path.stat().st_mode & 0o777 == 0o600
    holder = KeyHolder(KEY, agent.key_check(_keyfile()), time.time() + 60)
    thread = threading.Thread(target=serve, args=(listener, path, holder))
    thread.start()
    try:
        assert agent.fetch_key(path, _keyfile()) == KEY
        with pytest.raises(FileExistsError):
            bind(path)  # a live agent's socket is never taken over
    finally:
        assert agent.lock(path)
        thread.join(10)
    assert not path.exists() and agent.fetch_key(path, _keyfile()) is None


_KEYFILE = keyfile.wrap(KEY, "x", n=2**10)


def _keyfile() -> keyfile.KeyFile:
    return _KEYFILE


def test_a_socket_path_too_long_is_a_clear_error(tmp_path: Path) -> None:
    from openclaw_cli.core.errors import StoreError

    with pytest.raises(StoreError, match="too long"):
        agent.check_socket_path(tmp_path / ("x" * 120) / "agent.sock")


def test_a_run_dir_others_can_write_is_refused(tmp_path: Path) -> None:
    from openclaw_cli.core.errors import StoreError

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(StoreError, match="not private"):
        agent.prepare_run_dir(shared)


# --- real processes ----------------------------------------------------------------------------------


def agent_pid(rundir: Path, home: Path) -> int:
    state = agent.agent_status(agent.socket_path(rundir / "openclaw", home), keyfile.read_keyfile(home))
    assert state is not None
    return int(state["pid"])


def test_unlock_lets_a_second_process_in_without_a_passphrase_and_lock_ends_it(
    home: Path, rundir: Path
) -> None:
    assert not search_works(home, rundir)
    unlocked_run = cli(home, rundir, "security", "unlock", "--for", "10m", "--json", passphrase=PASS)
    assert unlocked_run.returncode == 0, unlocked_run.stderr
    assert unlocked_run.json()["started"] is True
    assert search_works(home, rundir)
    status = cli(home, rundir, "security", "status", "--json").json()
    assert status["unlockedUntil"] == pytest.approx(unlocked_run.json()["expires"])
    # The key is in neither the agent's argv nor its environment, nor is the passphrase.
    pid = agent_pid(rundir, home)
    key = keyfile.unwrap(keyfile.read_keyfile(home), PASS)
    for name in ("cmdline", "environ"):
        exposed = Path(f"/proc/{pid}/{name}").read_bytes()
        assert PASS.encode() not in exposed and key.hex().encode() not in exposed and key not in exposed
    again = cli(home, rundir, "security", "unlock", "--for", "20m", "--json")  # no passphrase: extends
    assert again.returncode == 0 and again.json()["started"] is False
    assert again.json()["expires"] > unlocked_run.json()["expires"]
    assert cli(home, rundir, "security", "lock").stdout.startswith("locked")
    assert not search_works(home, rundir)
    assert cli(home, rundir, "security", "status", "--json").json()["unlockedUntil"] is None
    assert "was not unlocked" in cli(home, rundir, "security", "lock").stdout


def test_the_agent_expires_on_its_own(home: Path, rundir: Path) -> None:
    assert cli(home, rundir, "security", "unlock", "--for", "1s", passphrase=PASS).returncode == 0
    pid = agent_pid(rundir, home)
    deadline = time.monotonic() + 30
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid)
    assert not search_works(home, rundir)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # the agent is detached (its own session): once dead it is reaped by init, or a zombie of ours
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_an_agent_killed_hard_falls_back_to_the_passphrase_and_unlock_recovers(
    home: Path, rundir: Path
) -> None:
    assert cli(home, rundir, "security", "unlock", passphrase=PASS).returncode == 0
    os.kill(agent_pid(rundir, home), signal.SIGKILL)
    result = cli(home, rundir, "memory", "search", "tea")
    assert result.returncode == 1 and result.stderr.count("\n") == 1 and "no passphrase" in result.stderr
    assert cli(home, rundir, "memory", "search", "tea", passphrase=PASS).returncode == 0
    assert cli(home, rundir, "security", "unlock", passphrase=PASS).returncode == 0  # over the stale socket
    assert search_works(home, rundir)


def test_a_rekeyed_home_is_not_opened_by_an_agent_of_its_old_key_file(home: Path, rundir: Path) -> None:
    assert cli(home, rundir, "security", "unlock", passphrase=PASS).returncode == 0
    convert.rekey_home(home, PASS, "new one")
    unlocked.forget()
    assert not search_works(home, rundir)  # asks for the passphrase again, as a new key file should
    assert cli(home, rundir, "security", "status", "--json").json()["unlockedUntil"] is None


@pytest.mark.parametrize("bad", ["0", "-5m", "8d", "soon", "5 weeks"])
def test_unlock_refuses_a_bad_duration(home: Path, rundir: Path, bad: str) -> None:
    result = cli(home, rundir, "security", "unlock", "--for", bad, passphrase=PASS)
    assert result.returncode == 2 and "--for" in result.stderr


def test_unlock_of_a_plain_home_is_one_line(tmp_path: Path, rundir: Path) -> None:
    result = cli(tmp_path / "plain", rundir, "security", "unlock")
    assert result.returncode == 1 and "not encrypted" in result.stderr and result.stderr.count("\n") == 1


def test_the_passphrase_is_no_part_of_the_settings_cache(home: Path, rundir: Path) -> None:
    """`session append` caches its settings keyed by a hash of the OPENCLAW_* variables: the passphrase
    is left out, so no fast hash of it is written to the home, and a run through the agent (no
    passphrase) reuses the cache a run with one wrote."""
    assert cli(home, rundir, "session", "append", "agent:main:main", "one", passphrase=PASS).returncode == 0
    cache = home / "cache" / "session-settings.json"
    written = cache.read_bytes()
    assert cli(home, rundir, "security", "unlock", passphrase=PASS).returncode == 0
    assert cli(home, rundir, "session", "append", "agent:main:main", "two").returncode == 0
    assert cache.read_bytes() == written  # the same key: not rewritten
