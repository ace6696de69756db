"""What every command shares: --version, --help with Examples, usage errors, agent ids, no tracebacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_cli import __version__
from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.core.paths import Home, validate_name
from tests.conftest import Result

# Every command's --help runs in this process (tests/inprocess.py: the same entry point, without ~80
# processes' start-ups); `-h` and the version, usage-error and agent tests keep real processes.
CLI_IN_PROCESS = True


def _command_paths() -> list[tuple[str, ...]]:
    """Every command and group in the live tree, e.g. (), ("config",), ("config", "set")."""
    import typer.main

    from openclaw_cli.cli.main import app

    found: list[tuple[str, ...]] = []
    pending: list[tuple[tuple[str, ...], object]] = [((), typer.main.get_command(app))]
    while pending:
        path, command = pending.pop()
        found.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            if not getattr(sub, "hidden", False):
                pending.append(((*path, name), sub))
    return sorted(found)


COMMAND_PATHS = _command_paths()


def _no_traceback(result: Result) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert "Traceback" not in result.stdout


def _one_error_line(result: Result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("openclaw: error: "), lines[0]
    return lines[0]


def test_version(cli, home: Path) -> None:
    result = cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"openclaw {__version__}"
    assert result.stderr == ""
    assert not home.exists()


def test_no_arguments_shows_help_and_exits_2(cli) -> None:
    result = cli()
    assert result.returncode == 2
    assert "Usage" in result.stdout + result.stderr
    _no_traceback(result)


def test_tree_holds_the_known_groups() -> None:
    assert ("config",) in COMMAND_PATHS
    assert ("doctor",) in COMMAND_PATHS


@pytest.mark.parametrize("path", COMMAND_PATHS, ids=lambda p: " ".join(p) or "openclaw")
def test_help_has_an_examples_section(cli, path: tuple[str, ...]) -> None:
    result = cli(*path, "--help")
    assert result.returncode == 0, result.stderr
    assert "Usage" in result.stdout
    assert "Examples" in result.stdout, f"`openclaw {' '.join(path)} --help` has no Examples epilog"
    _no_traceback(result)


@pytest.mark.real_process
def test_short_help_option_works(cli) -> None:
    result = cli("config", "-h")
    assert result.returncode == 0
    assert "Usage" in result.stdout


USAGE_ERRORS = {
    "unknown-command": ("nope",),
    "unknown-subcommand": ("config", "nope"),
    "unknown-root-option": ("--bogus",),
    "unknown-option": ("config", "get", "--bogus", "x"),
    "missing-argument": ("config", "get"),
}


@pytest.mark.parametrize("args", USAGE_ERRORS.values(), ids=USAGE_ERRORS.keys())
def test_usage_errors_exit_2_with_one_line(cli, args: tuple[str, ...]) -> None:
    result = cli(*args)
    assert result.returncode == 2, result
    assert result.stdout == ""
    line = _one_error_line(result)
    assert "--help" in line  # points at where to read more
    _no_traceback(result)


def test_unknown_command_names_it(cli) -> None:
    assert "nope" in _one_error_line(cli("nope"))


@pytest.mark.parametrize("agent", ["../x", "a/b", "..", ".hidden", "-x", "a" * 129, ""])
def test_bad_agent_option_exits_1(cli, home: Path, agent: str) -> None:
    result = cli(f"--agent={agent}", "config", "path")
    assert result.returncode == 1, result
    assert result.stdout == ""
    assert "agent id" in _one_error_line(result)
    _no_traceback(result)
    assert not home.exists()


@pytest.mark.parametrize("agent", ["../x", "a/b"])
def test_bad_agent_from_the_environment_exits_1(cli, agent: str) -> None:
    result = cli("doctor", env={"OPENCLAW_AGENT": agent})
    assert result.returncode == 1, result
    assert "agent id" in _one_error_line(result)
    _no_traceback(result)


def test_good_agent_is_accepted(cli) -> None:
    result = cli("--agent", "work-2.bot_x", "config", "path")
    assert result.returncode == 0, result.stderr


def test_nul_in_a_name_is_refused_at_the_core() -> None:
    # NUL cannot travel through argv or the environment, so the core check is tested directly.
    with pytest.raises(InvalidInput, match="agent id"):
        validate_name("a\x00b", "agent id")
    with pytest.raises(InvalidInput):
        Home(Path("/tmp/unused")).agent_dir("main\x00")


@pytest.mark.parametrize("bad", ["../x", "a/b", "a\\b", "..", ".", ""])
def test_core_name_validation_keeps_paths_inside_the_home(bad: str) -> None:
    with pytest.raises(InvalidInput):
        Home(Path("/tmp/unused")).sessions_dir(bad)


def test_internal_errors_are_one_line_without_traceback(cli, home: Path) -> None:
    # A home that is a file makes every command fail; the user sees one line, never a traceback.
    home.parent.mkdir(parents=True, exist_ok=True)
    home.write_text("not a directory", encoding="utf-8")
    result = cli("config", "set", "session.dmScope", "main")
    assert result.returncode != 0
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    _no_traceback(result)
