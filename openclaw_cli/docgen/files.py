"""Every generated file at once: the completion scripts (one per shell) and one man page per command."""

from __future__ import annotations

from openclaw_cli.docgen.completion import render_bash, render_fish, render_zsh
from openclaw_cli.docgen.man import render_man
from openclaw_cli.docgen.tree import Node

SHELLS = {"bash": render_bash, "zsh": render_zsh, "fish": render_fish}
COMPLETION_FILES = {
    "bash": "completions/openclaw.bash",
    "zsh": "completions/_openclaw",
    "fish": "completions/openclaw.fish",
}


def generate(tree: Node, version: str) -> dict[str, str]:
    """Relative path -> content of every generated file."""
    files = {COMPLETION_FILES[shell]: render(tree) for shell, render in SHELLS.items()}
    for node in tree.walk():
        files[f"man/{node.page}.1"] = render_man(node, version)
    return files
