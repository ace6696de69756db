"""`openclaw completion SHELL` and `openclaw man [COMMAND]...`: shell integration that needs no checkout.

Both render from the live command tree with the same code as tools/gen_docs.py (openclaw_cli/docgen), so
a pip install gets the same completion scripts and man pages as the repository's completions/ and man/.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from openclaw_cli.docgen.tree import Node

SHELL_NAMES = ("bash", "zsh", "fish")

COMPLETION_EPILOG = """Examples:

  openclaw completion bash > ~/.local/share/bash-completion/completions/openclaw

  openclaw completion zsh > "${fpath[1]}/_openclaw"

  openclaw completion fish > ~/.config/fish/completions/openclaw.fish

  eval "$(openclaw completion bash)"   # in ~/.bashrc, without installing a file
"""

MAN_EPILOG = """Examples:

  openclaw man

  openclaw man memory search

  openclaw man memory purge > openclaw-memory-purge.1
"""


def _complete_shells() -> list[str]:
    return list(SHELL_NAMES)


def completion_cmd(
    ctx: typer.Context,
    shell: Annotated[str, typer.Argument(help="bash, zsh or fish.", autocompletion=_complete_shells)],
) -> None:
    """Print the completion script for SHELL (commands, options, and values such as --mode and -c).

    The script is the one tools/gen_docs.py writes to completions/ in the repository.
    """
    from openclaw_cli.docgen.files import SHELLS

    if shell not in SHELLS:
        raise typer.BadParameter(f"unknown shell {shell!r}: use bash, zsh or fish", param_hint="'SHELL'")
    sys.stdout.write(SHELLS[shell](_live_tree(ctx)))


def man_cmd(
    ctx: typer.Context,
    command: Annotated[
        list[str] | None, typer.Argument(help="The command whose page to show, e.g. `memory search`.")
    ] = None,
) -> None:
    """Show the manual page of openclaw or of one of its commands.

    In a terminal the page is shown with man(1); otherwise (or without man) its roff source is printed,
    the same as the repository's man/ files, e.g. to install under a MANPATH directory.
    """
    from openclaw_cli import __version__
    from openclaw_cli.docgen.man import render_man

    node = _find(_live_tree(ctx), command or [])
    page = render_man(node, __version__)
    viewer = shutil.which("man")
    if sys.stdout.isatty() and viewer is not None:
        shown = subprocess.run([viewer, "-l", "-"], input=page.encode("utf-8"), check=False)
        if shown.returncode == 0:
            return
    sys.stdout.write(page)


def _live_tree(ctx: typer.Context) -> Node:
    """The running CLI's own command tree (the root of this command's context, not an import of main)."""
    from openclaw_cli.docgen.tree import command_tree

    return command_tree(ctx.find_root().command)


def _find(tree: Node, words: list[str]) -> Node:
    node = tree
    for word in words:
        match = next((child for child in node.children if child.name == word), None)
        if match is None:
            known = ", ".join(child.name for child in node.children) or "none"
            raise typer.BadParameter(
                f"no command {' '.join([*node.path, word])!r} (commands of {node.command_path}: {known})",
                param_hint="'COMMAND'",
            )
        node = match
    return node
