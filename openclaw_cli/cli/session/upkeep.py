"""`openclaw session sweep`, `context` and `compact`: what time does to sessions (resets, dormancy, the daily
memory copies) and what a model is sent from one (the budgeted history, the summary). Registered by
cli/session/commands.py."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from openclaw_cli.cli import common
from openclaw_cli.cli.session import helpers as session_common
from openclaw_cli.cli.session.helpers import JsonOpt, Target


def sweep_cmd(as_json: JsonOpt = False, quiet: common.QuietOpt = False) -> None:
    """Apply daily/idle resets and dormancy to every session now (for cron); reports what changed.

    A session is archived only after its facts are extracted into memory (llm.extractModel, else
    llm.model), as the agent's own reset does. Without a model it is archived and noted as owed an
    extraction, which the first sweep with a model does.

    Also writes today's copy of every memory database under the home when there is none yet
    (memory.backup.keepDays; see `openclaw memory backup`), and deletes channel media older than
    media.ttlDays. When the gateway's schedule (or another cron job) sweeps this agent now, nothing is done.
    """
    from openclaw_cli.cli import job_lock

    if not job_lock.take("sweep", common.state().agent, "session sweep", quiet=quiet):
        return
    now = session_common.now()
    changes, extraction, compressed = _sweep_extracting(now)
    from openclaw_cli.memory.upkeep.recovery import daily_backups

    for backup in daily_backups(
        common.state().home, session_common.session_values()["backupKeepDays"], now.date()
    ):
        if backup.problem:
            common.warn(backup.problem)
    from openclaw_cli.channels.media import sweep_media

    removed = sweep_media(common.state().home.root / "media", session_common.session_values()["mediaTtlDays"])
    if removed and not as_json:
        common.echo(f"{len(removed)} media file(s) past media.ttlDays deleted")
    if compressed.sessions and not as_json and not quiet:  # session.archive.compress: older archives
        kb = f"{compressed.bytes_before // 1024} KB -> {compressed.bytes_after // 1024} KB"
        common.echo(f"{compressed.sessions} archived transcript(s) compressed ({kb})")
    for session_id, reason in extraction.pending.items():
        common.warn(f"{session_id}: its facts are owed an extraction ({reason}); a later sweep extracts them")
    if as_json:
        common.emit_json([_with_extraction(change.to_dict(), extraction) for change in changes])
        return
    caught_up = {
        sid: n for sid, n in extraction.extracted.items() if sid not in {c.session_id for c in changes}
    }
    if quiet and not changes and not caught_up:
        return
    for change in changes:
        extracted = extraction.extracted.get(change.session_id)
        facts = f"; {extracted} memories extracted first" if extracted else ""
        common.echo(f"{change.session_id} {change.change} ({change.reason}{facts})  {change.session_key}")
    for session_id, count in caught_up.items():
        common.echo(f"{session_id} extracted now that a model is configured ({count} memories)")
    common.echo(f"{len(changes)} session(s) changed")


def _sweep_extracting(now: Any) -> tuple[list[Any], Any, Any]:
    """The sweep, each session to archive extracted first; then the sessions owed an extraction."""
    from openclaw_cli.identity.auth_profiles import with_auth_profile
    from openclaw_cli.memory.extraction.archiving import ArchiveExtractor

    st = common.state()
    manager = session_common.manager()
    settings = with_auth_profile(st.agent_settings, st.home, st.agent)
    extractor = ArchiveExtractor(st.home, st.agent, settings, manager.store)
    try:
        changes = manager.sweep(now, before_archive=extractor.before_archive)
        extractor.catch_up()
    finally:
        extractor.close()
    return changes, extractor.done, manager.compressed


def _with_extraction(change: dict[str, Any], extraction: Any) -> dict[str, Any]:
    session_id = change.get("sessionId")
    if session_id in extraction.extracted:
        change["extracted"] = extraction.extracted[session_id]
    if session_id in extraction.pending:
        change["extractionPending"] = extraction.pending[session_id]
    return change


def context_cmd(
    target: Target,
    budget: Annotated[
        int, typer.Option("--budget", min=0, help="Token budget for the history.", show_default=False)
    ],
    strategy: Annotated[
        str | None,
        typer.Option(
            "--strategy",
            help="What stays when the history does not fit: the newest messages (sliding), or the last "
            "turns and then instructions, decisions and facts (importance). Default: "
            "session.context.pruneStrategy.",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Show what a model would be sent: the summary and the messages that fit the token budget."""
    from openclaw_cli.sessions.budget.context import session_context

    context_settings = common.state().settings.session.context
    chosen = strategy if strategy is not None else context_settings.prune_strategy
    store = session_common.store()
    result = session_context(
        store, target, budget, strategy=chosen, keep_recent_turns=context_settings.keep_recent_turns
    )
    session_common.warn_problems(result.problems, store.session_dir(store.resolve(target)) / "messages.jsonl")
    if as_json:
        common.emit_json(result.to_dict())
        return
    if result.summary:
        common.echo(f"[summary] {result.summary}")
    for message in result.messages:
        common.echo(f"[{message['idx']}] {message['role']}: {message.get('content', '')}")
    common.echo(
        f"{result.tokens}/{result.budget} tokens, {len(result.messages)} message(s), {result.dropped} dropped"
        f" ({chosen})"
    )
    if result.dropped:
        common.echo(f"(summarise the dropped messages with `openclaw session compact {target}`)")


def compact_cmd(target: Target, as_json: JsonOpt = False) -> None:
    """Summarise a session's older messages now into context.json (messages.jsonl is not changed).

    Facts in those messages are extracted to memory first. Needs a model (llm.model). The last exchange is kept as it is.
    """
    from openclaw_cli.agent.runtime import AgentRuntime
    from openclaw_cli.cli.progress import spinner

    st = common.state()
    runtime = AgentRuntime(st.home, st.settings, clock=session_common.now)
    try:
        with spinner("summarising the older messages"):
            outcome = runtime.compact_now(st.agent, target)
    finally:
        runtime.close()
    if as_json:
        common.emit_json(outcome.to_dict())
        return
    if not outcome.compacted:
        common.echo(f"nothing to compact in {outcome.session_id} ({outcome.kept} recent message(s) kept)")
        return
    common.echo(
        f"compacted {outcome.session_id}: {outcome.summarised} message(s) summarised up to "
        f"#{outcome.checkpoint}, {outcome.kept} kept ({outcome.summary_tokens} summary tokens)"
    )


def register(app: typer.Typer) -> None:
    """Add sweep, context and compact to the `session` group in --help order (cli/session/commands.py calls this)."""
    app.command(
        "sweep",
        epilog=session_common.epilog(
            "openclaw session sweep",
            "*/15 * * * * openclaw session sweep --quiet",
            "openclaw session sweep --json",
        ),
    )(sweep_cmd)
    app.command(
        "context",
        epilog=session_common.epilog(
            "openclaw session context agent:main:main --budget 4000 --json",
            "openclaw session context agent:main:main --budget 2000 --strategy importance",
        ),
    )(context_cmd)
    app.command(
        "compact",
        epilog=session_common.epilog(
            "openclaw session compact agent:main:main", "openclaw session compact s-0190... --json"
        ),
    )(compact_cmd)
