"""`openclaw session`: inspect and change sessions (short-term memory). Thin: the work is in sessions/."""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from openclaw_cli.cli import common

if TYPE_CHECKING:
    from openclaw_cli.sessions.lifecycle import SessionManager
    from openclaw_cli.sessions.store import SessionStore

app = typer.Typer(
    help="Sessions: one conversation's history per session key (short-term memory).",
    no_args_is_help=True,
    epilog="Examples:\n\n  openclaw session list --status active\n\n"
    "  openclaw session append agent:main:main --role user 'hello'\n\n"
    "  openclaw session show agent:main:main --tail 20",
)

JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]
Target = Annotated[
    str, typer.Argument(help="A session key (agent:main:...) or a session id (s-...).", show_default=False)
]
KeyArg = Annotated[str, typer.Argument(help="A session key, e.g. agent:main:main.", show_default=False)]


def _epilog(*lines: str) -> str:
    return "Examples:\n\n" + "\n\n".join(f"  {line}" for line in lines)


def _now() -> datetime:
    """Local time with the local zone's DST rules (the daily reset hour is local time).

    `datetime.now().astimezone()` carries only today's fixed UTC offset, which puts yesterday's reset
    hour one hour off on the day after a DST change; a ZoneInfo knows the offset of every date.
    """
    return datetime.now(_local_zone())


def _local_zone() -> Any:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    name = common.state().env.get("TZ", "").lstrip(":")
    try:
        if name:
            return ZoneInfo(name)
        with open("/etc/localtime", "rb") as handle:
            return ZoneInfo.from_file(handle, key="localtime")
    except (OSError, ValueError, ZoneInfoNotFoundError):
        return datetime.now().astimezone().tzinfo  # no zone data: today's offset is the best we have


def _store(with_settings: bool = False) -> SessionStore:
    from openclaw_cli.sessions.store import Durability, SessionStore

    st = common.state()
    durability = Durability.from_settings(st.settings.session) if with_settings else Durability()
    return SessionStore(st.home, st.agent, durability)


def _manager() -> SessionManager:
    from openclaw_cli.sessions.lifecycle import ResetPolicy, SessionManager
    from openclaw_cli.sessions.store import Durability, SessionStore

    st = common.state()
    values = _session_values()
    durability = Durability(values["fsync"], values["fsyncIntervalMs"])
    policy = ResetPolicy(values["atHour"], values["idleMinutes"], values["dormantMinutes"])
    return SessionManager(SessionStore(st.home, st.agent, durability), policy)


_SETTINGS_CACHE = "session-settings.json"


def _identity_rules(settings: Any) -> dict[str, Any]:
    from openclaw_cli.identity import IdentityRules

    return IdentityRules.of(settings).to_dict()


def _session_values() -> dict[str, Any]:
    """The session settings an append needs, validated once per change of openclaw.json or OPENCLAW_*.

    Loading the settings (pydantic) costs ~0.25 s, more than the rest of an append, so the validated
    values are cached under cache/ keyed by a hash of the config file and the OPENCLAW_* variables.
    """
    import hashlib
    import json

    st = common.state()
    try:
        config = st.home.config_file.read_bytes()
    except OSError:
        config = b""
    overrides = sorted((k.upper(), v) for k, v in st.env.items() if k.upper().startswith("OPENCLAW_"))
    stamp = hashlib.sha256(json.dumps([config.hex(), overrides]).encode()).hexdigest()
    path = st.home.cache_dir / _SETTINGS_CACHE
    try:
        cached = json.loads(path.read_bytes())
        if cached.get("key") == stamp and {"identity", "backupKeepDays"} <= cached["values"].keys():
            return dict(cached["values"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    session = st.settings.session  # validates; a bad config is reported as before and never cached
    values = {
        "fsync": session.fsync,
        "fsyncIntervalMs": session.fsync_interval_ms,
        "atHour": session.reset.at_hour,
        "idleMinutes": session.reset.idle_minutes,
        "dormantMinutes": session.dormant_minutes,
        "identity": _identity_rules(st.settings),  # whose words a user message is (identity.py)
        "backupKeepDays": st.settings.memory.backup.keep_days,  # the daily memory copies of `sweep`
    }
    from openclaw_cli.fsutil import atomic_write_json

    with contextlib.suppress(OSError):  # only a cache
        atomic_write_json(path, {"key": stamp, "values": values}, durable=False)
    return values


@app.command(
    "list", epilog=_epilog("openclaw session list", "openclaw session list --status archived --json")
)
def list_cmd(
    status: Annotated[str | None, typer.Option("--status", help="Only active, dormant or archived.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """List the sessions of the agent, most recently updated first (reads sessions.json only)."""
    from openclaw_cli.sessions.index import STATUSES, list_sessions

    if status is not None and status not in STATUSES:
        common.fail(f"unknown status {status!r}", hint=f"use one of {', '.join(STATUSES)}", code=2)
    st = common.state()
    rows = list_sessions(st.home.sessions_dir(st.agent), status)
    if as_json:
        common.emit_json(rows)
        return
    if not rows:
        common.echo("no sessions")
        return
    for row in rows:
        common.echo(
            f"{row['sessionId']}  {row['status']:<8}  {row['updatedAt'] or '-':<24}  {row['sessionKey']}"
        )


def _warn_problems(problems: list[Any], path: Any) -> None:
    for problem in problems:
        common.warn(problem.describe(path))


@app.command(
    "show",
    epilog=_epilog(
        "openclaw session show agent:main:main --tail 10", "openclaw session show s-0190... --json"
    ),
)
def show_cmd(
    target: Target,
    tail: Annotated[int | None, typer.Option("--tail", min=0, help="Only the last N messages.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Show a session's metadata and messages. Damaged lines are skipped and reported on stderr."""
    store = _store()
    view = store.read_session(store.resolve(target), count_tokens=True)
    messages = view.messages[-tail:] if tail else ([] if tail == 0 else view.messages)
    _warn_problems(view.problems, view.path)
    if as_json:
        common.emit_json(
            {"meta": view.meta, "messages": messages, "problems": [p.to_dict() for p in view.problems]}
        )
        return
    meta = view.meta
    show = common.human  # a damaged meta may lack any of these: print "-", never "None"
    common.echo(f"{meta['sessionId']}  {show(meta.get('status'))}  {show(meta.get('sessionKey'))}")
    common.echo(f"created {show(meta.get('createdAt'))}  last active {show(meta.get('lastActiveAt'))}")
    used = f"{show(meta.get('totalInputTokens'))}/{show(meta.get('totalOutputTokens'))}"
    common.echo(
        f"messages {meta['messageCount']}  history {meta.get('historyTokens', 0)} tokens  "
        f"model tokens in/out {used}  cost ${show(meta.get('totalCost'))}"
    )
    for message in messages:
        who = f" ({message['sender']})" if message.get("sender") else ""
        common.echo(f"[{message['idx']}] {message['role']}{who}: {message.get('content', '')}")


@app.command(
    "append",
    epilog=_epilog(
        "openclaw session append agent:main:main --role user 'remember that I like tea'",
        "echo 'hi' | openclaw session append agent:main:telegram:default:group:42 --role user --sender 123 -",
    ),
)
def append_cmd(
    key: KeyArg,
    text: Annotated[
        str,
        typer.Argument(
            help="The message text; - reads standard input, stored exactly as given (a trailing newline is kept).",
            show_default=False,
        ),
    ],
    role: Annotated[str, typer.Option("--role", help="user, assistant, system or tool.")] = "user",
    sender: Annotated[str | None, typer.Option("--sender", help="Who spoke, in group chats.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Append one message to the key's session (a stale session is reset first; the message is kept).

    A user message is stored as the words of a person (whose memories extraction writes): `--sender`
    on the key's channel in a group, the DM's peer, or the owner in the main session.
    Text read from standard input (-) is stored exactly, a trailing newline included.
    """
    from openclaw_cli import identity
    from openclaw_cli.sessions.keys import parse_key

    content = common.read_text_arg(text)
    person = None
    if role == "user":  # whose words these are: the group speaker, the DM peer, or the owner (main)
        rules = identity.IdentityRules.from_dict(_session_values()["identity"])
        person = identity.for_key(rules, parse_key(key), sender=sender).person
    result = _manager().append(
        key, role, content, _now(), sender=sender, user_id=person, anonymous=role == "user" and person is None
    )
    if as_json:
        common.emit_json(result.to_dict())
        return
    if result.new_session:
        why = f" ({result.reason})" if result.reason else ""
        common.echo(f"started a new session {result.session_id}{why}")
    common.echo(f"appended message {result.message['idx']} to {result.session_id}")


@app.command("new", epilog=_epilog("openclaw session new agent:main:main"))
def new_cmd(key: KeyArg, as_json: JsonOpt = False) -> None:
    """Start a new session for a key; its current session (if any) is archived."""
    meta, previous = _manager().new(key, _now())
    _report_new(meta, previous, as_json)


@app.command("reset", epilog=_epilog("openclaw session reset agent:main:telegram:default:direct:123"))
def reset_cmd(key: KeyArg, as_json: JsonOpt = False) -> None:
    """Archive the key's current session and start a new one (the key must have a session)."""
    meta, previous = _manager().reset(key, _now())
    _report_new(meta, previous, as_json)


def _report_new(meta: dict[str, Any], previous: str | None, as_json: bool) -> None:
    if as_json:
        common.emit_json({"session": meta, "previousSessionId": previous})
        return
    if previous:
        common.echo(f"archived {previous}")
    common.echo(f"started a new session {meta['sessionId']} for {meta['sessionKey']}")


@app.command(
    "archive",
    epilog=_epilog("openclaw session archive agent:main:main", "openclaw session archive s-0190..."),
)
def archive_cmd(target: Target, as_json: JsonOpt = False) -> None:
    """Archive a session: it takes no more messages; the next message to its key starts a new one."""
    meta = _manager().archive(target, _now())
    if as_json:
        common.emit_json(meta)
    else:
        common.echo(f"archived {meta['sessionId']}")


@app.command("delete", epilog=_epilog("openclaw session delete s-0190... --yes"))
def delete_cmd(
    target: Target,
    yes: Annotated[bool, typer.Option("--yes", help="Really delete (required).")] = False,
) -> None:
    """Delete a session and its messages for good (this cannot be undone)."""
    if not yes:
        common.fail(
            "refusing to delete without --yes", hint="add --yes; consider `openclaw session archive` instead"
        )
    session_id = _manager().delete(target)
    common.echo(f"deleted {session_id}")


@app.command(
    "export",
    epilog=_epilog(
        "openclaw session export agent:main:main > chat.jsonl",
        "openclaw session export s-0190... -o chat.jsonl",
    ),
)
def export_cmd(
    target: Target,
    output: Annotated[str, typer.Option("--output", "-o", help="File to write; '-' is stdout.")] = "-",
) -> None:
    """Write a session as JSON Lines: one meta line (with its summary), then one line per message.

    `openclaw session import` reads it back, in this home or another one.
    """
    import json

    from openclaw_cli.output_file import check_output_path, output_file
    from openclaw_cli.sessions.portability import export_lines

    if output != "-":
        check_output_path(output, "--output", "chat.jsonl")  # before the session is read
    store = _store()
    session_id = store.resolve(target)
    lines, problems = export_lines(store, session_id)
    _warn_problems(problems, store.session_dir(session_id) / "messages.jsonl")
    if output == "-":
        for line in lines:
            common.emit_json_line(line)
        return
    with output_file(output, "--output", "chat.jsonl") as handle:
        for line in lines:
            handle.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n")
    common.echo(f"exported {session_id} to {output}")


@app.command(
    "import",
    epilog=_epilog(
        "openclaw session import chat.jsonl",
        "ssh old-box openclaw session export agent:main:main | openclaw session import -",
    ),
)
def import_cmd(
    source: Annotated[str, typer.Argument(help="A file written by `session export`; '-' reads stdin.")],
    as_json: JsonOpt = False,
) -> None:
    """Import a whole session (meta, summary, messages) exported by `openclaw session export`.

    The file is checked first (a bad line imports nothing). The session keeps its id and key (moved to
    this agent); if the key already has a session here, the imported one is stored archived.
    """
    from openclaw_cli.sessions.portability import import_session, parse_export

    parsed = parse_export(_input_lines(source))
    result = import_session(_store(with_settings=True), parsed, _now())
    if as_json:
        common.emit_json(result.to_dict())
        return
    where = " (archived: the key already has a session here)" if result.displaced else ""
    common.echo(
        f"imported {result.session_id} with {result.messages} messages as {result.session_key}{where}"
    )


def _input_lines(source: str) -> list[bytes]:
    """The input's lines, split at "\\n" only (a message may hold U+2028 and other separators raw)."""
    import sys
    from pathlib import Path

    from openclaw_cli.errors import InvalidInput

    if source == "-":
        data = sys.stdin.buffer.read()
    else:
        try:
            data = Path(source).read_bytes()
        except FileNotFoundError as exc:
            raise InvalidInput(f"no such file: {source}") from exc
        except OSError as exc:
            raise InvalidInput(f"cannot read {source} ({exc.strerror})") from exc
    return data.split(b"\n")


@app.command(
    "key",
    epilog=_epilog(
        "openclaw session key --channel telegram --account default --peer 123",
        "openclaw session key --channel discord --account bot1 --peer 9 --group 555 --json",
    ),
)
def key_cmd(
    channel: Annotated[str, typer.Option("--channel", help="e.g. telegram, discord.", show_default=False)],
    account: Annotated[str, typer.Option("--account", help="The bot account on that channel.")] = "default",
    peer: Annotated[str, typer.Option("--peer", help="The sender's id.", show_default=False)] = "",
    group: Annotated[str | None, typer.Option("--group", help="The group id, for group chats.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the session key a message gets under the configured session.dmScope and identityLinks."""
    from openclaw_cli.sessions.keys import build_key, dm_key, group_key

    st = common.state()
    if group is not None:
        key = group_key(st.agent, channel, account, group)
    else:
        if not peer:
            common.fail("--peer is required for a direct message", code=2)
        settings = st.settings.session
        key = dm_key(
            st.agent,
            channel,
            account,
            peer,
            dm_scope=settings.dm_scope,
            identity_links=settings.identity_links,
        )
    text = build_key(key)
    if as_json:
        common.emit_json({"sessionKey": text, "kind": key.kind, "dmScope": st.settings.session.dm_scope})
    else:
        common.echo(text)


@app.command("sweep", epilog=_epilog("openclaw session sweep", "*/15 * * * * openclaw session sweep --json"))
def sweep_cmd(as_json: JsonOpt = False) -> None:
    """Apply daily/idle resets and dormancy to every session now (for cron); reports what changed.

    Also writes today's copy of every memory database under the home when there is none yet
    (memory.backup.keepDays; see `openclaw memory backup`)."""
    now = _now()
    changes = _manager().sweep(now)
    from openclaw_cli.memory.upkeep.recovery import daily_backups

    for backup in daily_backups(common.state().home, _session_values()["backupKeepDays"], now.date()):
        if backup.problem:
            common.warn(backup.problem)
    if as_json:
        common.emit_json([change.to_dict() for change in changes])
        return
    for change in changes:
        common.echo(f"{change.session_id} {change.change} ({change.reason})  {change.session_key}")
    common.echo(f"{len(changes)} session(s) changed")


@app.command("context", epilog=_epilog("openclaw session context agent:main:main --budget 4000 --json"))
def context_cmd(
    target: Target,
    budget: Annotated[
        int, typer.Option("--budget", min=0, help="Token budget for the history.", show_default=False)
    ],
    as_json: JsonOpt = False,
) -> None:
    """Show what a model would be sent: the summary and the newest messages within the token budget."""
    from openclaw_cli.sessions.context import session_context

    store = _store()
    result = session_context(store, target, budget)
    _warn_problems(result.problems, store.session_dir(store.resolve(target)) / "messages.jsonl")
    if as_json:
        common.emit_json(result.to_dict())
        return
    if result.summary:
        common.echo(f"[summary] {result.summary}")
    for message in result.messages:
        common.echo(f"[{message['idx']}] {message['role']}: {message.get('content', '')}")
    common.echo(
        f"{result.tokens}/{result.budget} tokens, {len(result.messages)} message(s), {result.dropped} dropped"
    )
    if result.dropped:
        common.echo(f"(summarise the dropped messages with `openclaw session compact {target}`)")


@app.command(
    "compact",
    epilog=_epilog("openclaw session compact agent:main:main", "openclaw session compact s-0190... --json"),
)
def compact_cmd(target: Target, as_json: JsonOpt = False) -> None:
    """Summarise a session's older messages now into context.json (messages.jsonl is not changed).

    Facts in those messages are extracted to memory first. Needs a model (llm.model). The last exchange is kept as it is.
    """
    from openclaw_cli.agent.runtime import AgentRuntime
    from openclaw_cli.cli.progress import spinner

    st = common.state()
    runtime = AgentRuntime(st.home, st.settings, clock=_now)
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
