"""A gateway that runs but does not answer in time (too busy for /healthz within its probe) still holds the
home's databases and its caches: what must not run beside a gateway refuses, and a purge, which must clear
the gateway's caches too, refuses rather than purge behind its back. A pid the system gave to another
program is no gateway. Real processes: a stand-in whose command line names a gateway but that listens on
nothing, and `sleep`. The memories are the packaged models' (the CLI's default embedder), except the
300 of the damaged store `recover` must refuse to touch, made quickly with the fake."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import run_cli
from tests.memory_helpers import found_by_meaning
from tests.salvage_helpers import damage_middle_leaf, fake_store

ANN_TEA = "Ann drinks oolong tea every afternoon"


@contextmanager
def pid_file_naming(home: Path, command: list[str]) -> Iterator[int]:
    """A live process of `command` named by the home's gateway pid file, with a port nothing listens on."""
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    try:
        directory = home / "gateway"
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        record = {"pid": process.pid, "host": "127.0.0.1", "port": 9}  # discard: nothing answers there
        (directory / "gateway.pid").write_text(json.dumps(record), encoding="utf-8")
        yield process.pid
    finally:
        process.kill()
        process.wait()


def _silent_gateway() -> list[str]:
    # Its command line reads like `openclaw gateway run`; it never listens.
    return [sys.executable, "-c", "import time; time.sleep(300)", "gateway", "run"]


def _seeded(home: Path) -> None:
    added = run_cli(home, "memory", "add", ANN_TEA, "--user", "ann", "-c", "preference")
    assert added.returncode == 0, added.stderr


def _memories(home: Path) -> list[str]:
    listed = run_cli(home, "memory", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return [item["l0"] for item in json.loads(listed.stdout)]


def test_recover_refuses_while_a_gateway_runs_without_answering(tmp_path: Path) -> None:
    home = tmp_path / "home"
    db = home / "agents" / "main" / "memory" / "memory.sqlite"
    db.parent.mkdir(parents=True, mode=0o700)
    fake_store(db, 300)
    damage_middle_leaf(db)  # a database recover would replace
    before = db.read_bytes()
    with pid_file_naming(home, _silent_gateway()) as pid:
        done = run_cli(home, "memory", "recover", "--yes")
    assert done.returncode == 1, done.stderr
    assert f"while the gateway of this home runs (pid {pid})" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert db.read_bytes() == before


def test_a_purge_refuses_while_a_gateway_runs_without_answering(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _seeded(home)
    with pid_file_naming(home, _silent_gateway()):
        done = run_cli(home, "memory", "purge", "--user", "ann", "--yes")
    assert done.returncode == 1, done.stderr
    assert "runs but does not answer" in done.stderr and "nothing was purged" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert _memories(home) == [ANN_TEA]
    # Left whole, with its vector: the packaged models still find it by what it means.
    assert found_by_meaning(home, "what does she have to drink after lunch", "--user", "ann") == [ANN_TEA]


def test_a_pid_file_naming_another_program_is_no_gateway(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _seeded(home)
    with pid_file_naming(home, ["sleep", "300"]):
        done = run_cli(home, "memory", "purge", "--user", "ann", "--yes")
    assert done.returncode == 0, done.stderr
    assert _memories(home) == []
