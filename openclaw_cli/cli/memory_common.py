"""What every `openclaw memory` command module shares: the memory service of the chosen agent, the
first-embedding notice, the --scope check and the --json option.

A module of its own so that memory.py (which registers the command modules) and the command modules
import it, and never each other.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from openclaw_cli.cli import common

if TYPE_CHECKING:
    from openclaw_cli.memory.service import MemoryService

JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]


@contextmanager
def service(
    *, warm: bool = False, one_shot: bool = False, fast_start: bool = False
) -> Iterator[MemoryService]:
    """The memory service of the agent this command runs for, closed when the command is done."""
    from openclaw_cli.memory.service import MemoryService

    st = common.state()
    opened = MemoryService(
        st.home, st.agent, st.agent_settings.memory, warm=warm, one_shot=one_shot, fast_start=fast_start
    )
    try:
        yield opened
    finally:
        opened.close()


def announce_model_preparation(service: MemoryService) -> None:
    """Say why the first embedding in a new home pauses, when someone is watching a terminal."""
    if sys.stderr.isatty() and service.model_needs_preparing():
        typer.echo(
            "openclaw: preparing the local embedding model (once per home, a few seconds)...", err=True
        )


def scopes(value: str | None) -> tuple[str, ...]:
    """The --scope filter: nothing (every scope) or one of user, agent."""
    if value is None:
        return ()
    if value not in ("user", "agent"):
        raise typer.BadParameter(f"unknown scope {value!r}: use user or agent", param_hint="'--scope'")
    return (value,)
