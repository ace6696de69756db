"""A home that cannot be used: one error line that names it (exit 1), never an internal error.

Three ways a home fails: it cannot be created (`/proc/...`: the kernel refuses), it is a file, or it
exists and cannot be written (`/sys/kernel`: refused even to root, so the test holds for any user).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.bad_input_helpers import KEY, assert_one_error_line
from tests.conftest import Result, run_cli

NOT_CREATABLE = "/proc/openclaw-nope"
NOT_WRITABLE = "/sys/kernel"
HINT = "set --home or OPENCLAW_HOME to a directory you can create and write"

WRITERS = [
    pytest.param(("memory", "add", "hello"), id="memory-add"),
    pytest.param(("session", "append", KEY, "hello"), id="session-append"),
    pytest.param(("config", "set", "session.dmScope", "per-peer"), id="config-set"),
    pytest.param(("memory", "note", "hello"), id="memory-note"),
    pytest.param(("session", "sweep"), id="session-sweep"),
]


def _run(home: str | Path, *args: str) -> Result:
    return run_cli(Path(home), *args)


@pytest.mark.parametrize("args", WRITERS)
def test_a_home_that_cannot_be_created_is_named(args: tuple[str, ...]) -> None:
    line = assert_one_error_line(_run(NOT_CREATABLE, *args), 1)
    assert line.startswith(f"openclaw: error: cannot create the home {NOT_CREATABLE}: "), line
    assert HINT in line


def test_a_home_below_one_that_cannot_be_created_is_named() -> None:
    home = f"{NOT_CREATABLE}/deeper"
    line = assert_one_error_line(_run(home, "memory", "add", "hello"), 1)
    assert line.startswith(f"openclaw: error: cannot create the home {home}: "), line


def test_a_search_in_a_home_that_does_not_exist_finds_nothing_and_creates_nothing() -> None:
    result = _run(NOT_CREATABLE, "memory", "search", "coffee")
    assert result.returncode == 0 and result.stdout == ""
    assert result.stderr == "openclaw: warning: no memories stored yet\n"


@pytest.mark.parametrize(
    "args",
    [
        *WRITERS,
        pytest.param(("memory", "search", "coffee"), id="memory-search"),
        pytest.param(("session", "list"), id="session-list"),
        pytest.param(("config", "show"), id="config-show"),
    ],
)
def test_a_home_that_is_a_file_is_named(tmp_path: Path, args: tuple[str, ...]) -> None:
    home = tmp_path / "home"
    home.write_text("not a directory\n")
    line = assert_one_error_line(_run(home, *args), 1)
    assert line == f"openclaw: error: the home {home} is not a directory ({HINT})"
    assert home.read_text() == "not a directory\n"


@pytest.mark.parametrize("args", [WRITERS[0], WRITERS[1], WRITERS[3]])
def test_a_home_that_cannot_be_written_is_named(args: tuple[str, ...]) -> None:
    line = assert_one_error_line(_run(NOT_WRITABLE, *args), 1)
    assert line.startswith(f"openclaw: error: cannot create {NOT_WRITABLE}/"), line
    assert f"in the home {NOT_WRITABLE}: " in line and HINT in line


def test_a_config_file_that_cannot_be_written_is_named() -> None:
    line = assert_one_error_line(_run(NOT_WRITABLE, "config", "set", "session.dmScope", "per-peer"), 1)
    assert line.startswith(f"openclaw: error: {NOT_WRITABLE}/.openclaw.json."), line
    assert "check the permissions and free space of the home" in line


@pytest.mark.parametrize("args", [WRITERS[0], pytest.param(("doctor",), id="doctor")])
def test_a_home_from_the_environment_that_is_not_utf8_is_a_usage_error(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    home = os.fsdecode(bytes(tmp_path) + b"/home\xff")  # the environment passes the byte as it is
    line = assert_one_error_line(run_cli(tmp_path, *args, env={"OPENCLAW_HOME": home}), 2)
    assert line.startswith(f"openclaw: error: the home {tmp_path}/home") and "is not valid UTF-8" in line
    assert list(tmp_path.iterdir()) == []
