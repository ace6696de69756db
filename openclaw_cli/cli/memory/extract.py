"""`openclaw memory extract`: extraction on demand, for cron and troubleshooting."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from typing import TYPE_CHECKING, Annotated

import typer

from openclaw_cli.cli import common
from openclaw_cli.cli.memory.helpers import JsonOpt
from openclaw_cli.cli.progress import progress_bar

if TYPE_CHECKING:
    from openclaw_cli.memory.extraction.run import ExtractionReport


def extract_cmd(
    session: Annotated[str, typer.Option("--session", "-s", help="Session key or id.")],
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Show what would be written; write nothing, keep the checkpoint."),
    ] = False,
    user: Annotated[
        str | None,
        typer.Option(
            "--user", "-u", help="Whose memory a one-to-one chat's facts go to (group chats: each speaker's)."
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Extract memories from a session's messages not yet extracted, now.

    Uses `llm.extractModel` (else `llm.model`); without a model, or when it fails, explicit statements
    ("remember that ...", "I prefer ...", "记住...", "我喜欢...") still become memories. Each candidate is shown
    as added, merged, duplicate or skipped, with the reason. Messages already extracted are not read again
    (the session's checkpoint); --dry-run leaves it where it is.

    Long input is bounded: the model sees each message cut to 4,000 characters (head and tail kept), in
    requests of at most 16,000 characters of transcript; L2 keeps at most memory.maxTextChars.
    """
    from openclaw_cli.memory.extraction.run import extract_session

    st = common.state()
    with ExitStack() as stack:
        bar = _LazyBar(stack)
        report = extract_session(
            st.home, st.agent, st.agent_settings, session, dry_run=dry_run, user_id=user, progress=bar.advance
        )
    _render(report, as_json)


class _LazyBar:
    """A progress bar opened at the first report, when the number of messages is known."""

    def __init__(self, stack: ExitStack) -> None:
        self._stack = stack
        self._advance: Callable[[int], None] | None = None

    def advance(self, done: int, total: int) -> None:
        if self._advance is None:
            self._advance = self._stack.enter_context(progress_bar("extracting", total))
        self._advance(done)


def _render(report: ExtractionReport, as_json: bool) -> None:
    if report.model_error:
        common.warn(report.model_error)
    if as_json:
        common.emit_json(report.public_dict())
        return
    span = f"messages {report.start}-{report.end - 1}" if report.end > report.start else "no new messages"
    dry = " (dry run: nothing written)" if report.dry_run else ""
    common.echo(f"{report.session_id}: {span}, by {report.method}{dry}")
    for outcome in report.outcomes:
        where = outcome.record_id or outcome.existing_id or ""
        common.echo(
            f"  {outcome.action:<9} [{outcome.candidate.category}] {outcome.candidate.l0}"
            f"  ({outcome.reason}{', ' + where if where else ''})"
        )
    for note in report.notes:
        common.echo(f"  note: {note}")


def register(app: typer.Typer) -> None:
    """Add these commands to the `memory` group, in the order of its --help (cli/memory/commands.py calls this once)."""
    app.command(
        "extract",
        epilog=(
            "Examples:\n\n  "
            "openclaw memory extract --session agent:main:telegram:direct:lin\n\n  "
            "openclaw memory extract --session s-0193... --dry-run\n\n  "
            "openclaw memory extract --session agent:main:main --json | jq '.outcomes[] | select(.action==\"added\")'"
        ),
    )(extract_cmd)
