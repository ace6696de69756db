"""Privacy (seed 000 §12): every directory 0700 and every file 0600 whatever the umask; doctor reports a
wrong mode and `doctor --fix` repairs it."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests import encrypted_homes
from tests.conftest import ROOT, base_env
from tests.memory_helpers import copy_shared_models

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True


def _run_with_umask(
    home: Path, umask: int, *args: str, models: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = base_env(home)
    if models is not None:
        env["OPENCLAW_MEMORY__EMBEDDING__MODELCACHEDIR"] = str(models)
    return subprocess.run(
        [sys.executable, "-m", "openclaw_cli", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.umask(umask),  # the child's umask is the point of the test
    )


def _modes(home: Path) -> dict[str, int]:
    found = {".": stat.S_IMODE(home.lstat().st_mode)}
    for path in home.rglob("*"):
        found[str(path.relative_to(home))] = stat.S_IMODE(path.lstat().st_mode)
    return found


COMMANDS: list[tuple[str, ...]] = [
    ("config", "set", "session.dmScope", "per-peer"),
    ("session", "append", "agent:main:telegram:default:direct:lin", "--role", "user", "hello"),
    ("memory", "add", "Lin 喜欢喝茶", "-u", "lin"),
    ("memory", "note", "deployed the gateway"),
    ("memory", "note", "--durable", "Lin prefers tea"),
    ("memory", "search", "tea"),
    ("memory", "index"),
    ("memory", "add", "to be purged", "-u", "eve"),
    ("memory", "purge", "--user", "eve", "--yes"),
]


# Each kind of home under one umask (the encrypted one under the usual 022: its key file and sealed files
# are written by the same private-file helpers as the rest), not every pair: each case is ~20 s of CLI runs.
@pytest.mark.parametrize(("umask", "kind"), [(0o000, "plain"), (0o022, "encrypted")])
def test_every_file_is_0600_and_every_directory_0700_whatever_the_umask(
    tmp_path: Path, umask: int, kind: str
) -> None:
    home = encrypted_homes.prepare(tmp_path / "home", kind)  # encrypted: the key file and sealed files too
    # The converted models, without jieba's table: the commands build that table beside them, under the umask.
    models = tmp_path / "models"
    copy_shared_models(models)
    for args in COMMANDS:
        done = _run_with_umask(home, umask, *args, models=models)
        assert done.returncode == 0, (args, done.stderr)
    modes = _modes(home)
    assert "agents/main/workspace/MEMORY.md" in modes and "agents/main/memory/memory.sqlite" in modes
    jieba_modes = {name: mode for name, mode in _modes(models).items() if name.startswith("jieba")}
    assert jieba_modes and set(jieba_modes.values()) == {0o600}, jieba_modes
    wrong = {
        name: f"{mode:04o}"
        for name, mode in modes.items()
        if mode != (0o700 if (home / name).is_dir() else 0o600)
    }
    assert wrong == {}
    doctor = _run_with_umask(home, umask, "doctor", "--json")
    assert doctor.returncode == 0, doctor.stdout
    assert [f for f in json.loads(doctor.stdout)["findings"] if f["severity"] != "ok"] == []


def test_doctor_reports_and_fix_repairs_wrong_modes_in_the_workspace_and_memory(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for args in COMMANDS[3:5]:
        assert _run_with_umask(home, 0o077, *args).returncode == 0
    workspace = home / "agents" / "main" / "workspace"
    loose = {workspace / "MEMORY.md": 0o644, workspace / "memory": 0o755}
    for path, mode in loose.items():
        os.chmod(path, mode)
    found = _run_with_umask(home, 0o077, "doctor", "--json")
    assert found.returncode == 1
    errors = {
        f["path"]: f["message"] for f in json.loads(found.stdout)["findings"] if f["severity"] == "error"
    }
    assert errors == {
        str(workspace / "MEMORY.md"): "file has mode 0644, expected 0600",
        str(workspace / "memory"): "directory has mode 0755, expected 0700",
    }
    fixed = _run_with_umask(home, 0o077, "doctor", "--fix", "--json")
    assert fixed.returncode == 0
    assert {f["path"] for f in json.loads(fixed.stdout)["findings"] if f["fixed"]} == {str(p) for p in loose}
    assert stat.S_IMODE((workspace / "MEMORY.md").stat().st_mode) == 0o600
    assert stat.S_IMODE((workspace / "memory").stat().st_mode) == 0o700
    assert _run_with_umask(home, 0o077, "doctor").returncode == 0


def test_doctor_checks_a_workspace_configured_outside_the_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    workspace = tmp_path / "notes"
    env_args = ("config", "set", "memory.workspace", str(workspace))
    assert _run_with_umask(home, 0o077, *env_args).returncode == 0
    assert _run_with_umask(home, 0o000, "memory", "note", "outside note").returncode == 0
    log = next((workspace / "memory").glob("*.md"))
    assert stat.S_IMODE(log.stat().st_mode) == 0o600  # created private whatever the umask
    os.chmod(log, 0o664)
    found = _run_with_umask(home, 0o077, "doctor", "--json")
    assert found.returncode == 1
    errors = [f for f in json.loads(found.stdout)["findings"] if f["severity"] == "error"]
    assert [(f["check"], f["path"]) for f in errors] == [("workspace.permissions", str(log))]
    assert _run_with_umask(home, 0o077, "doctor", "--fix").returncode == 0
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
