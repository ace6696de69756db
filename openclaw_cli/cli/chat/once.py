"""`openclaw chat "question"`: one message, its reply on stdout, then exit (as `llm "prompt"` does).

Only the reply goes to stdout, streamed as it comes, so that `openclaw chat "..." > answer.txt` holds the
answer alone; notices (a new session, memories saved) go to stderr. A turn that fails is one error line on
stderr and exit 1, and so is a message that cannot be answered because no model is configured: a script
must not take an empty answer for one. The message is stored either way, as in the interactive chat.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import typer

from openclaw_cli.cli import common

if TYPE_CHECKING:
    from openclaw_cli.agent.clients.chat import ChatBackend


def reply_once(backend: ChatBackend, text: str) -> None:
    """Send `text`, print the reply; exit 1 with one line when there is none (a failed turn, or no model
    configured: the agent says so in a notice, in this process or through the gateway)."""
    from openclaw_cli.agent.turn.requests import MODEL_HINT, NO_MODEL

    said: set[str] = set()
    streamed: list[str] = []

    def on_event(kind: str, payload: dict[str, Any]) -> None:
        if kind == "delta":
            piece = str(payload.get("text", ""))
            streamed.append(piece)
            sys.stdout.write(piece)
            sys.stdout.flush()
        elif kind == "notice":
            notice = str(payload.get("text", ""))
            if notice not in said:
                said.add(notice)
                if notice != NO_MODEL:  # said once below, as the error
                    typer.echo(f"* {notice}", err=True)

    result = backend.send(text, on_event)
    reply = str(result.get("reply") or "")
    if not streamed and reply:  # a backend that answers whole rather than in pieces
        sys.stdout.write(reply)
    if streamed or reply:
        sys.stdout.write("\n")
        sys.stdout.flush()
    status = result.get("status")
    if status == "error":
        common.fail(_one_line(str(result.get("error") or "the turn failed")))
    if status == "aborted":
        common.fail("stopped before the reply ended; your message is kept", code=130)
    if not (streamed or reply) and NO_MODEL in said | set(result.get("notices") or []):
        common.fail("no model is configured, so there is no reply (your message is stored)", hint=MODEL_HINT)


def _one_line(text: str) -> str:
    return " ".join(text.split())
