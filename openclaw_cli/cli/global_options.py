"""The root's options after the subcommand too: `openclaw memory search coffee --home X`.

Every command and group below the root gets hidden copies of the root options it does not define itself
(`chat --agent` is chat's own and keeps its meaning). Click parses them as that command's options, so
option values, `--home=X` and `--` keep their usual meaning (`memory add -- --home` stores the text
"--home"); their callbacks replace what the root callback set. Only the root's copies are documented.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.core import TyperOption

from openclaw_cli.cli import common


def _set_home(ctx: Any, param: Any, value: str | None) -> None:
    if value is not None:
        common.override_state(home=Path(value))


def _set_agent(ctx: Any, param: Any, value: str | None) -> None:
    if value is not None:
        common.override_state(agent=value)


def _set_verbose(ctx: Any, param: Any, value: bool) -> None:
    if value:
        common.override_state(verbose=True)


# (name, option strings, is a flag, callback); the names keep clear of any command's own parameters.
GLOBAL_OPTIONS: tuple[tuple[str, tuple[str, ...], bool, Callable[..., None]], ...] = (
    ("openclaw_global_home", ("--home",), False, _set_home),
    ("openclaw_global_agent", ("--agent",), False, _set_agent),
    ("openclaw_global_verbose", ("-v", "--verbose"), True, _set_verbose),
)


def _taken(command: Any) -> set[str]:
    return {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}


def add_global_options(command: Any) -> None:
    """Give `command` and every command below it the root options they do not define themselves."""
    pending = [command]
    while pending:
        current = pending.pop()
        taken = _taken(current)
        for name, opts, flag, callback in GLOBAL_OPTIONS:
            free = [opt for opt in opts if opt not in taken]
            if not free:
                continue
            current.params.append(
                TyperOption(
                    param_decls=[name, *free],
                    is_flag=flag or None,
                    default=False if flag else None,
                    callback=callback,
                    expose_value=False,
                    is_eager=True,  # before the command's own callbacks, which may read the state
                    hidden=True,
                )
            )
        pending.extend(getattr(current, "commands", {}).values())
