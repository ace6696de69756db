"""What every command shares: the resolved home/agent, lazy settings, output and error helpers."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from openclaw_cli.core.errors import InvalidInput, OpenclawError, StoreError, UsageError
from openclaw_cli.core.fsutil import DirectoryError
from openclaw_cli.core.input_lines import QUERY_BYTES, read_all
from openclaw_cli.core.paths import HOME_HINT, Home, user_cache_root, validate_agent_id
from openclaw_cli.core.textcheck import find_bad_text

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings

JSON_HELP = "Print one JSON document on stdout and nothing else there."
# The commands cron runs: cron mails whatever a job prints, so a job that went well must print nothing.
QuietOpt = Annotated[
    bool,
    typer.Option(
        "--quiet",
        "-q",
        help="Print nothing unless something is wrong or changed (for cron); errors still go to stderr.",
    ),
]


@dataclass
class AppState:
    home: Home
    agent: str
    verbose: bool = False
    env: dict[str, str] = field(default_factory=dict)
    _settings: Settings | None = None

    @property
    def settings(self) -> Settings:
        """Loaded on first use: pydantic-settings costs ~0.2 s to import, which `session list` must not pay."""
        if self._settings is None:
            from openclaw_cli.config.loading import load_settings

            self._settings = load_settings(self.home.config_file, self.env)
        return self._settings

    @property
    def agent_settings(self) -> Settings:
        """The settings as this command's agent sees them: its agents.list entry's workspace and model
        in place of memory.workspace and llm.* (agent_config.for_agent), its auth profile's key for its
        model's provider (auth_profiles.py)."""
        from openclaw_cli.identity.agent_config import for_agent
        from openclaw_cli.identity.auth_profiles import with_auth_profile

        return with_auth_profile(for_agent(self.settings, self.agent), self.home, self.agent)


_state: AppState | None = None


def set_state(home: Path | None, agent: str, verbose: bool) -> AppState:
    global _state
    root = (home if home is not None else Path.home() / ".openclaw").expanduser()
    agent = validate_agent_id(agent)  # lower-cased; `_shared` and other `_` names are refused (exit 2)
    if find_bad_text(str(root)) is not None:  # OPENCLAW_HOME's bytes (argv is checked in main.check_argv)
        raise UsageError(f"the home {root} is not valid UTF-8", hint=HOME_HINT)
    if os.path.lexists(root) and not os.path.isdir(root):  # else every command fails on a file inside it
        raise StoreError(f"the home {root} is not a directory", hint=HOME_HINT)
    env = dict(os.environ)
    _state = AppState(home=Home(root, user_cache_root(env)), agent=agent, verbose=verbose, env=env)
    from openclaw_cli.cli import passphrase_edge  # an encrypted home's passphrase: asked for on first need

    passphrase_edge.install(_state.env, lambda: state().settings.security, root)
    return _state


def override_state(*, home: Path | None = None, agent: str | None = None, verbose: bool = False) -> AppState:
    """A root option given after the subcommand (cli/global_options.py) replaces the root's value."""
    current = state()
    return set_state(
        home if home is not None else current.home.root,
        agent if agent is not None else current.agent,
        verbose or current.verbose,
    )


def state() -> AppState:
    if _state is None:  # commands always run after the root callback
        raise RuntimeError("CLI state used before the root callback ran")
    return _state


def home_problem(error: DirectoryError) -> OpenclawError:
    """A directory that could not be created, said in terms of the home when it is the home or in it."""
    if _state is None:
        return error
    root = _state.home.root
    if root == error.path or root.is_relative_to(error.path):
        return StoreError(f"cannot create the home {root}: {error.reason}", hint=HOME_HINT)
    if error.path.is_relative_to(root):
        return StoreError(f"cannot create {error.path} in the home {root}: {error.reason}", hint=HOME_HINT)
    return StoreError(error.message, hint="check that its parent is a directory you can write")


def is_verbose() -> bool:
    return _state is not None and _state.verbose


def emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2, default=str) + "\n")


def emit_json_line(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str) + "\n")
    sys.stdout.flush()


def human(value: Any) -> str:
    """A value for human output: never a Python repr (`None`, `{'provider': ...}`, `['a']`)."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        if {"provider", "model", "dimensions"} <= value.keys():  # an embedder identity
            return f"{value['provider']}:{value['model']} ({value['dimensions']}d)"
        return ", ".join(f"{words(str(k))} {human(v)}" for k, v in value.items()) or "-"
    if isinstance(value, list | tuple):
        return ", ".join(human(v) for v in value) or "-"
    return str(value)


def words(key: str) -> str:
    """A camelCase JSON key as words for human output: `vectorsAdded` -> `vectors added`."""
    return "".join(f" {c.lower()}" if c.isupper() else c for c in key).strip()


def fail(message: str, hint: str | None = None, code: int = 1) -> NoReturn:
    error = OpenclawError(message, hint)
    error.exit_code = code
    raise error


def read_text_arg(text: str, cap: int = QUERY_BYTES) -> str:
    """TEXT arguments: `-` means standard input, which must be valid UTF-8 and at most `cap` bytes (the
    most a valid TEXT of this command can take: input_lines.py)."""
    if text != "-":
        return text
    data = read_all(sys.stdin.buffer, cap, "standard input")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"standard input is not valid UTF-8 (byte {exc.start})", hint="convert it with iconv first"
        ) from exc


def echo(message: str = "") -> None:
    typer.echo(message)


def render_search_head(result: dict[str, Any], as_json: bool) -> bool:
    """The part every search prints alike (memory search, session search, from this process or a
    gateway): the whole result as JSON, or its warnings and "no matches". True when that was all."""
    if as_json:
        emit_json(result)
        return True
    for message in result["warnings"]:
        warn(message)
    if not result["results"] and not result["warnings"]:
        echo("no matches")
    return False


def warn(message: str) -> None:
    typer.echo(f"openclaw: warning: {message}", err=True)


def report_error(error: OpenclawError) -> None:
    line = f"openclaw: error: {error.message}"
    if error.hint:
        line += f" ({error.hint})"
    typer.echo(line, err=True)
