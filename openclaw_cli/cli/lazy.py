"""Command groups imported only when used: `openclaw session append` must not build `memory`'s commands.

Typer turns every registered command into a click command (reading each function's signature and type
hints) before it parses a single argument; with every group registered that was ~40 ms of a ~100 ms
`session append`. Here the root group holds a mapping whose groups are imported and converted on first
lookup, with the same settings Typer's `add_typer` would have used, so help, errors, completion and the
generated docs see the same tree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

import typer
import typer.main
from typer.core import TyperGroup
from typer.models import TyperInfo

from openclaw_cli.cli.global_options import add_global_options


def _config_app() -> typer.Typer:
    from openclaw_cli.cli.home.config_cmd import app

    return app


def _session_app() -> typer.Typer:
    from openclaw_cli.cli.session.commands import app

    return app


def _memory_app() -> typer.Typer:
    from openclaw_cli.cli.memory.commands import app

    return app


def _gateway_app() -> typer.Typer:
    from openclaw_cli.cli.gateway.commands import app

    return app


def _chat_app() -> typer.Typer:
    from openclaw_cli.cli.chat.commands import app

    return app


def _reflect_app() -> typer.Typer:
    from openclaw_cli.cli.reflect import app

    return app


def _channels_app() -> typer.Typer:
    from openclaw_cli.cli.channels.commands import app

    return app


def _plugins_app() -> typer.Typer:
    from openclaw_cli.cli.plugins import app

    return app


def _cron_app() -> typer.Typer:
    from openclaw_cli.cli.gateway.cron import app

    return app


def _auth_app() -> typer.Typer:
    from openclaw_cli.cli.home.auth import app

    return app


def _pairing_app() -> typer.Typer:
    from openclaw_cli.cli.channels.pairing import app

    return app


def _skills_app() -> typer.Typer:
    from openclaw_cli.cli.skills import app

    return app


def _mcp_app() -> typer.Typer:
    from openclaw_cli.cli.mcp import app

    return app


def _security_app() -> typer.Typer:
    from openclaw_cli.cli.home.security import app

    return app


# name -> the group's Typer app, in the order `openclaw --help` lists them (after `doctor`). Plain import
# statements rather than importlib, so `python -X importtime` (tests/test_startup.py) sees them.
LAZY_GROUPS: dict[str, Callable[[], typer.Typer]] = {
    "config": _config_app,
    "session": _session_app,
    "memory": _memory_app,
    "gateway": _gateway_app,
    "chat": _chat_app,
    "reflect": _reflect_app,
    "channels": _channels_app,
    "pairing": _pairing_app,
    "skills": _skills_app,
    "plugins": _plugins_app,
    "cron": _cron_app,
    "auth": _auth_app,
    "mcp": _mcp_app,
    "security": _security_app,
}


class LazyCommands(MutableMapping[str, Any]):
    """The root's commands: eager ones as given, lazy ones built by `load(name)` on first lookup.

    Iterating yields names only, so listing or typo suggestions import nothing; looking a name up (to run
    it, or to print its help line) builds that one group.
    """

    def __init__(self, eager: MutableMapping[str, Any], lazy: list[str], load: Callable[[str], Any]) -> None:
        self._loaded: dict[str, Any] = dict(eager)
        self._order = [*eager, *(name for name in lazy if name not in eager)]
        self._load = load

    def __getitem__(self, name: str) -> Any:
        if name not in self._loaded:
            if name not in self._order:
                raise KeyError(name)
            self._loaded[name] = self._load(name)
        return self._loaded[name]

    def __setitem__(self, name: str, command: Any) -> None:
        if name not in self._order:
            self._order.append(name)
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        self._order.remove(name)
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._order))

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, name: object) -> bool:
        return name in self._order


class LazyRootGroup(TyperGroup):
    """The root click group: `LAZY_GROUPS` are converted from their Typer apps when first looked up."""

    owner: typer.Typer | None = None  # the root Typer app, whose settings the sub-groups inherit

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for command in self.commands.values():
            add_global_options(command)
        self.commands = LazyCommands(self.commands, list(LAZY_GROUPS), self._build)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)  # names only: the base class's items() would import every group

    def _build(self, name: str) -> Any:
        sub_app = LAZY_GROUPS[name]()
        root = self.owner
        assert root is not None, "LazyRootGroup.owner is set where the root app is made"
        # What typer.main.get_group_from_info does for `root.add_typer(sub_app, name=name)`, except that
        # the group's own commands are converted when looked up: `memory search` builds `search` alone
        # (converting memory's ~20 commands took ~60 ms of a search answered by a gateway).
        infos = list(sub_app.registered_commands)
        sub_app.registered_commands = []
        try:
            group = typer.main.get_group_from_info(
                TyperInfo(sub_app, name=name),
                pretty_exceptions_short=root.pretty_exceptions_short,
                rich_markup_mode=root.rich_markup_mode,
                suggest_commands=root.suggest_commands,
            )
        finally:
            sub_app.registered_commands = infos
        add_global_options(group)  # `openclaw memory search x --home H`, as `openclaw --home H memory ...`
        by_name = {_command_name(info): info for info in infos}

        groups = dict(group.commands)  # its own sub-groups (built above), listed after its commands

        def convert(command: str) -> Any:
            if command in groups:
                return groups[command]
            built = typer.main.get_command_from_info(
                by_name[command],
                pretty_exceptions_short=root.pretty_exceptions_short,
                rich_markup_mode=root.rich_markup_mode,
            )
            add_global_options(built)
            return built

        group.commands = LazyCommands({}, [*by_name, *groups], convert)
        return group


def _command_name(info: Any) -> str:
    """The name Typer gives a registered command (its own, else the function's, dashed)."""
    return str(info.name or typer.main.get_command_name(info.callback.__name__))
