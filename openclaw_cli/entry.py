"""The console script. `openclaw --version` is answered before the command tree (typer) is imported."""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from openclaw_cli import __version__

        sys.stdout.write(f"openclaw {__version__}\n")
        return
    from openclaw_cli.cli.main import run

    run()
