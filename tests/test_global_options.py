"""The root's options (--home, --agent, -v/--verbose) also after the subcommand, where people type them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.bad_input_helpers import assert_one_error_line
from tests.conftest import run_cli


def _tree() -> Any:
    import typer.main

    from openclaw_cli.cli.main import app

    return typer.main.get_command(app)


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = [(path, command)]
    for name in list(getattr(command, "commands", {})):
        found += _commands(command.commands[name], (*path, name))
    return found


def _options(command: Any, name: str) -> list[Any]:
    return [p for p in command.params if name in (*p.opts, *p.secondary_opts)]


def test_every_command_below_the_root_takes_the_root_options() -> None:
    for path, command in _commands(_tree())[1:]:
        for name in ("--home", "--agent", "-v", "--verbose"):
            assert len(_options(command, name)) == 1, (path, name)


def test_a_command_keeps_its_own_option_of_the_same_name() -> None:
    chat = _tree().commands["chat"]
    [agent] = _options(chat, "--agent")
    assert not agent.hidden and agent.expose_value  # chat's own --agent, still documented and passed


def test_search_with_home_after_the_subcommand(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    unused = tmp_path / "unused"  # OPENCLAW_HOME: the option after the subcommand must win over it
    added = run_cli(unused, "memory", "add", "I drink coffee every morning", "--home", str(elsewhere))
    assert added.returncode == 0, added.stderr
    found = run_cli(unused, "memory", "search", "coffee", "--home", str(elsewhere), "--json")
    assert found.returncode == 0, found.stderr
    assert [hit["l0"] for hit in found.json()["results"]] == ["I drink coffee every morning"]
    assert not unused.exists()


def test_session_list_with_agent_and_home_after_the_subcommand(tmp_path: Path) -> None:
    home = tmp_path / "home"
    unused = tmp_path / "unused"
    for agent in ("main", "work"):
        appended = run_cli(
            unused, "session", "append", f"agent:{agent}:main", "hi", "--agent", agent, "--home", str(home)
        )
        assert appended.returncode == 0, appended.stderr
    listed = run_cli(unused, "session", "list", "--agent", "work", "--home", str(home), "--json")
    assert listed.returncode == 0, listed.stderr
    assert [s["sessionKey"] for s in listed.json()] == ["agent:work:main"]
    assert not unused.exists()


def test_the_equals_form(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = run_cli(tmp_path / "unused", "config", "set", "session.dmScope", "per-peer", f"--home={home}")
    assert result.returncode == 0, result.stderr
    assert "per-peer" in (home / "openclaw.json").read_text()


def test_double_dash_keeps_a_literal_that_looks_like_the_option(tmp_path: Path) -> None:
    home = tmp_path / "home"
    appended = run_cli(home, "session", "append", "agent:main:main", "--", "--home")
    assert appended.returncode == 0, appended.stderr
    shown = run_cli(home, "session", "show", "agent:main:main", "--json")
    assert [m["content"] for m in shown.json()["messages"]] == ["--home"]


def test_an_option_value_that_looks_like_the_option_stays_a_value(tmp_path: Path) -> None:
    group = "agent:main:telegram:default:group:g1"
    appended = run_cli(tmp_path / "home", "session", "append", group, "hi", "--sender", "--agent", "--json")
    assert appended.returncode == 0, appended.stderr
    assert appended.json()["message"]["sender"] == "--agent"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        pytest.param(("session", "list", "--agent", "_x"), "agent id '_x' is reserved", id="reserved"),
        pytest.param(("session", "list", "--agent", "a/b"), "invalid agent id 'a/b'", id="invalid"),
    ],
)
def test_an_agent_after_the_subcommand_is_validated_as_before_it(
    tmp_path: Path, args: tuple[str, ...], says: str
) -> None:
    line = assert_one_error_line(run_cli(tmp_path / "home", *args), 2 if "reserved" in says else 1)
    assert says in line


def test_an_unwritable_home_after_the_subcommand_is_named(tmp_path: Path) -> None:
    line = assert_one_error_line(
        run_cli(tmp_path / "unused", "memory", "add", "hello", "--home", "/proc/openclaw-nope"), 1
    )
    assert "cannot create the home /proc/openclaw-nope" in line
