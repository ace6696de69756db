"""Start-up stays light: the CLI's common paths import none of the heavy libraries.

Checked with `python -X importtime -m openclaw_cli ...`, which lists every module the real process imports.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, base_env
from tests.import_trace import imported_modules

HEAVY = ("litellm", "openai", "onnxruntime", "numpy", "jieba", "pydantic_settings")


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


@pytest.mark.parametrize(
    "args",
    [("--version",), ("--help",), ("session", "list"), ("session", "list", "--json")],
    ids=["version", "help", "session-list", "session-list-json"],
)
def test_common_commands_import_nothing_heavy(home: Path, args: tuple[str, ...]) -> None:
    status, modules = imported_modules(home, *args)
    assert status == 0
    assert "openclaw_cli.entry" in modules  # the measurement saw the real CLI start
    assert _heavy(modules) == [], f"`openclaw {' '.join(args)}` imports {_heavy(modules)}"


def test_session_list_on_an_existing_session_imports_nothing_heavy(cli, home: Path) -> None:
    assert cli("session", "append", "agent:main:main", "--role", "user", "hi").returncode == 0
    status, modules = imported_modules(home, "session", "list", "--json")
    assert status == 0
    assert _heavy(modules) == []


def test_the_measurement_detects_a_heavy_import(home: Path) -> None:
    # `config show` needs pydantic-settings, so the same parsing must find it there.
    status, modules = imported_modules(home, "config", "show", "--json")
    assert status == 0
    assert "pydantic_settings" in _heavy(modules)


def test_session_append_imports_only_its_own_command_group(cli, home: Path) -> None:
    # Command groups are built when invoked (cli/lazy.py): an append pays for neither memory nor config,
    # nor (once the first append cached the session settings) for pydantic.
    assert cli("session", "append", "agent:main:main", "--role", "user", "first").returncode == 0
    status, modules = imported_modules(home, "session", "append", "agent:main:main", "--role", "user", "hi")
    assert status == 0
    assert "openclaw_cli.cli.session.commands" in modules
    assert {"openclaw_cli.cli.memory.commands", "openclaw_cli.cli.home.config_cmd"} & modules == set()
    assert _heavy(modules) == [] and "pydantic" not in {m.split(".")[0] for m in modules}


def test_help_still_lists_every_command_group(home: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "openclaw_cli", "--help"],
        capture_output=True,
        text=True,
        env=base_env(home),
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode == 0
    for group in ("config", "session", "memory", "doctor"):
        assert f" {group} " in proc.stdout
