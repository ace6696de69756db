"""doctor's session repairs: directories in place of files, damaged context.json, leftover locks and
conversions, and `doctor --fix` running against concurrent writer processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, base_env

KEY = "agent:main:main"


@pytest.fixture
def cli(cli_private_models):  # type: ignore[no-untyped-def]
    """doctor reads the model cache: this home's own, not the run's shared one."""
    return cli_private_models


def _sessions(home: Path) -> Path:
    return home / "agents" / "main" / "sessions"


def _session_dir(home: Path) -> Path:
    return next(_sessions(home).glob("s-*"))


def _one_line_error(result: Any) -> str:
    lines = result.stderr.strip().split("\n")
    assert len(lines) == 1 and lines[0].startswith("openclaw: error:"), result.stderr
    return lines[0]


def _doctor(cli: Any, *args: str) -> tuple[int, list[dict[str, Any]]]:
    result = cli("doctor", "--json", *args)
    assert "Traceback" not in result.stderr and result.returncode in (0, 1), result.stderr
    return result.returncode, [f for f in result.json()["findings"] if f["severity"] != "ok"]


@pytest.mark.parametrize("name", ["sessions.json", "meta.json", "messages.jsonl"])
def test_a_directory_in_place_of_a_session_file(cli, home: Path, name: str) -> None:  # type: ignore[no-untyped-def]
    assert cli("session", "append", KEY, "hello").returncode == 0
    target = _sessions(home) / name if name == "sessions.json" else _session_dir(home) / name
    target.unlink()
    target.mkdir()
    code, problems = _doctor(cli)
    assert code == 1 and any(name in f["message"] and "\n" not in f["message"] for f in problems), problems
    for args in (("session", "show", KEY), ("session", "append", KEY, "more"), ("session", "list")):
        result = cli(*args)
        if name != "sessions.json" and args[1] == "list":
            continue  # list reads the index only
        assert result.returncode == 1, (args, result)
        assert name in _one_line_error(result)


def test_damaged_context_is_found_and_set_aside(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("session", "append", KEY, "hello").returncode == 0
    context = _session_dir(home) / "context.json"
    context.write_text('{"summary": "half')
    broken = cli("session", "context", KEY, "--budget", "100")
    assert broken.returncode == 1 and "doctor --fix" in _one_line_error(broken)
    code, problems = _doctor(cli)
    assert code == 1 and [f["check"] for f in problems] == ["sessions.context"]
    code, problems = _doctor(cli, "--fix")
    assert code == 0 and problems[0]["fixed"] is True
    kept = list(context.parent.glob("context.json.damaged-*"))
    assert len(kept) == 1 and kept[0].read_text() == '{"summary": "half'
    works = cli("session", "context", KEY, "--budget", "100", "--json")
    assert works.returncode == 0 and [m["content"] for m in works.json()["messages"]] == ["hello"]
    assert _doctor(cli)[0] == 0


def test_unused_locks_of_settled_sessions_are_removed_held_ones_never(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    for peer in range(3):
        assert cli("session", "append", f"agent:main:telegram:bot:direct:{peer}", "hi").returncode == 0
    for peer in range(2):
        assert cli("session", "archive", f"agent:main:telegram:bot:direct:{peer}").returncode == 0
    locks = _sessions(home) / ".locks"
    before = {p.name for p in locks.iterdir()}
    # A live process holds a lock file of a settled key: it must survive.
    held = sorted(p for p in locks.iterdir() if p.name.startswith("key-"))[0]
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl,os,sys,time;fd=os.open(sys.argv[1],os.O_RDWR);"
            "fcntl.flock(fd,fcntl.LOCK_EX);print('held',flush=True);time.sleep(60)",
            str(held),
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
        code, problems = _doctor(cli)
        assert [f["check"] for f in problems] == ["sessions.stale-lock"]
        assert {p.name for p in locks.iterdir()} == before  # plain doctor changes nothing
        _doctor(cli, "--fix")
        after = {p.name for p in locks.iterdir()}
    finally:
        holder.kill()
        holder.wait()
    assert held.name in after and "index.lock" in after
    # Archived sessions' locks and keys' locks went; the active key and its session keep theirs.
    assert len(after) == 1 + 1 + 2, after
    assert len(before) == 1 + 3 + 3


def test_model_conversion_leftovers_are_reported_and_removed_when_old(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    models = home / "cache" / "models"
    old, young = models / ".convert-abc", models / ".convert-new"
    for path in (old, young):
        path.mkdir(parents=True)
        (path / "part.onnx").write_bytes(b"x" * 10)
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    _, problems = _doctor(cli)
    leftovers = [f["path"] for f in problems if f["check"] == "cache.leftovers"]
    assert leftovers == [str(old)]
    assert old.exists()
    _doctor(cli, "--fix")
    assert not old.exists() and young.exists()


WRITER = r"""
import json, sys
from datetime import datetime, UTC
from pathlib import Path
from openclaw_cli.core.paths import Home
from openclaw_cli.sessions.lifecycle import SessionManager, ResetPolicy
from openclaw_cli.sessions.store import SessionStore, Durability
home, writer, keys, acks = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
manager = SessionManager(SessionStore(Home(home), "main", Durability("never")), ResetPolicy(at_hour=None))
with acks.open("a") as out:
    for k in range(keys):
        key = f"agent:main:telegram:bot:direct:w{writer}k{k}"
        for m in range(3):
            text = f"w{writer}k{k}m{m}"
            manager.append(key, "user", text, datetime.now(UTC))
            out.write(json.dumps([key, text]) + "\n"); out.flush()
manager.store.close()
"""


def test_doctor_fix_against_concurrent_writers(home: Path, tmp_path: Path) -> None:
    env = base_env(home)
    env["PYTHONPATH"] = str(ROOT)
    acks = tmp_path / "acks.jsonl"
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(home), str(w), "30", str(acks)], env=env, cwd=ROOT
        )
        for w in range(4)
    ]
    doctor_runs = 0
    while any(w.poll() is None for w in writers) or doctor_runs < 2:
        done = subprocess.run(
            [sys.executable, "-m", "openclaw_cli", "doctor", "--fix", "--json"],
            env=env,
            cwd=ROOT,
            capture_output=True,
        )
        assert b"Traceback" not in done.stderr, done.stderr
        doctor_runs += 1
    assert all(w.wait() == 0 for w in writers)
    index = json.loads((_sessions(home) / "sessions.json").read_text())
    acked = [json.loads(line) for line in acks.read_text().split("\n") if line]
    assert len(acked) == 4 * 30 * 3 and index["archived"] == {}
    assert len(index["sessions"]) == 120 and len(list(_sessions(home).glob("s-*"))) == 120
    for key, entry in index["sessions"].items():
        lines = (_sessions(home) / entry["sessionId"] / "messages.jsonl").read_text().split("\n")
        stored = [json.loads(line) for line in lines if line]
        assert [m["idx"] for m in stored] == [0, 1, 2], key
        assert [m["content"] for m in stored] == [t for k, t in acked if k == key]
