"""The JSON each MCP client expects in its settings to launch `openclaw mcp` (`openclaw mcp config`).

Every client launches the server over stdio with a command, its arguments and an environment; they differ
in the key that holds the servers and in whether the entry names its transport.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CLIENTS = ("claude-desktop", "claude-code", "cursor", "vscode")
SERVER_NAME = "openclaw"


@dataclass(frozen=True)
class ClientFile:
    """Where a client keeps the snippet: a file per platform, or in a project."""

    where: str


WHERE = {
    "claude-desktop": ClientFile(
        "claude_desktop_config.json: ~/Library/Application Support/Claude/ (macOS), %APPDATA%\\Claude\\ "
        "(Windows), ~/.config/Claude/ (Linux); restart Claude Desktop afterwards"
    ),
    "claude-code": ClientFile(
        ".mcp.json at the root of a project (or: claude mcp add-json openclaw '<the \"openclaw\" entry>')"
    ),
    "cursor": ClientFile("~/.cursor/mcp.json (every project) or .cursor/mcp.json (one project)"),
    "vscode": ClientFile(".vscode/mcp.json in a workspace, or the `mcp` section of the user settings"),
}


def snippet(client: str, launcher: list[str], args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """The settings entry of `client` that runs `launcher + args` (the absolute path of this openclaw,
    then `mcp` and its options) with `env`."""
    if client not in CLIENTS:
        from openclaw_cli.core.errors import InvalidInput

        raise InvalidInput(f"unknown client {client!r}", hint=f"use one of {', '.join(CLIENTS)}")
    entry: dict[str, Any] = {"command": launcher[0], "args": [*launcher[1:], *args], "env": env}
    if client in ("claude-code", "vscode"):
        entry = {"type": "stdio", **entry}
    key = "servers" if client == "vscode" else "mcpServers"
    return {key: {SERVER_NAME: entry}}
