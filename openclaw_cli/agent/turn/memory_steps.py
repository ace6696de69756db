"""A turn's memory steps (loop.py runs them): "remember this" written at once, the extraction scheduled
after the turn, and the flush of a session being left (a reset) or compacted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import OpenclawError
from openclaw_cli.identity.persons import ANONYMOUS_REASON

if TYPE_CHECKING:
    from openclaw_cli.agent.turn.state import TurnContext


def remember_now(turn: TurnContext, session_id: str, message: dict[str, Any]) -> None:
    """A message asking to be remembered ("remember this", 记住) is written at once (seed 003 §4.1),
    with or without a model; for the person who said it, and for nobody when nobody is known."""
    if turn.request.user_id is None:
        from openclaw_cli.memory.extraction.patterns import asks_to_remember

        if message.get("role") == "user" and asks_to_remember(str(message.get("content") or "")):
            turn.notice(f"Not saved to memory: {ANONYMOUS_REASON}.")
        return
    try:
        with turn.services.memory_lock:
            outcomes = turn.services.extraction.remember_now(session_id, message, turn.request.user_id)
    except OpenclawError as exc:
        turn.notice(f"Could not save to memory now: {exc.message}")
        return
    # Each item on its own line: what was saved, or what it matched and why nothing new was.
    for outcome in outcomes:
        turn.notice(outcome.describe())
    _log_for_owner(turn, outcomes)


def _log_for_owner(turn: TurnContext, outcomes: list[Any]) -> None:
    """The owner's "remember this" also goes to today's log at once (agent/tools/own_notes.py)."""
    from openclaw_cli.agent.tools.own_notes import log_remembered

    if not outcomes:
        return
    try:
        with turn.services.memory_lock:
            log_remembered(turn.services.memory, turn.request.user_id, outcomes)
    except (OpenclawError, OSError) as exc:
        reason = exc.message if isinstance(exc, OpenclawError) else exc.strerror or str(exc)
        turn.notice(f"Saved to memory, but not to today's log: {reason}")


def schedule_extraction(turn: TurnContext, session_id: str) -> None:
    if not turn.settings.memory.extraction.enabled:
        return
    # What the earlier background extraction did not store, and why (it ran after that turn's reply).
    for outcome in turn.services.extraction.take_unstored(session_id):
        turn.notice(f"Memory extraction: {outcome.describe()}")
    try:
        turn.services.extraction.note_turn(session_id, turn.request.user_id)
    except OpenclawError as exc:
        turn.notice(f"Memory extraction is not available: {exc.message}")


def flush(turn: TurnContext, session_id: str, upto: int | None) -> None:
    """Extract from a session that is being left (reset): a failure is told, the reset goes on."""
    try:
        with turn.services.memory_lock:
            turn.services.extraction.flush(session_id, upto, turn.request.user_id)
    except OpenclawError as exc:
        turn.notice(f"The earlier session's facts could not be saved to memory: {exc.message}")
