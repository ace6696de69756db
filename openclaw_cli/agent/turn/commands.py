"""Slash commands sent as messages. `/new`, `/reset` and `/compact` act on the session in the turn itself
(so they work from any channel through the gateway), as does `/skill NAME` (that skill's body joins the
turn's instructions); the terminal chat handles the others."""

from __future__ import annotations

from dataclasses import dataclass

TURN_COMMANDS = ("new", "reset", "compact", "skill")
CHAT_COMMANDS = (
    "new",
    "reset",
    "compact",
    "skill",
    "memory",
    "search",
    "remember",
    "forget",
    "status",
    "exit",
    "help",
)


@dataclass(frozen=True)
class Command:
    name: str
    rest: str  # the text after the command word, stripped


def parse_command(text: str, known: tuple[str, ...] = TURN_COMMANDS) -> Command | None:
    """`/name rest...` when name is one of `known` (case-insensitive); None for anything else.

    Any whitespace ends the name: `/new` and a message collected into the same turn after it
    ("/new\n\nhello", gateway/lanes/queues.py) are the command and its text."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    parts = stripped[1:].split(maxsplit=1)
    name = parts[0].lower() if parts else ""
    return Command(name, parts[1].strip() if len(parts) > 1 else "") if name in known else None
