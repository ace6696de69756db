"""`openclaw session`: inspect and change sessions (short-term memory). Thin: the work is in sessions/.

This module holds the group and the commands on one session's messages (list, show, append, new, reset,
archive, delete); session_portability.py and session_upkeep.py register the rest, session_common.py holds
what they share.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from openclaw_cli.cli import common
from openclaw_cli.cli.session import helpers as session_common
from openclaw_cli.cli.session import portability as session_portability
from openclaw_cli.cli.session import search as session_search
from openclaw_cli.cli.session import upkeep as session_upkeep
from openclaw_cli.cli.session.helpers import JsonOpt, KeyArg, Target
from openclaw_cli.core.input_lines import MESSAGE_BYTES

app = typer.Typer(
    help="Sessions: one conversation's history per session key (short-term memory).",
    no_args_is_help=True,
    epilog="Examples:\n\n  openclaw session list --status active\n\n"
    "  openclaw session append agent:main:main --role user 'hello'\n\n"
    "  openclaw session show agent:main:main --tail 20",
)


@app.command(
    "list",
    epilog=session_common.epilog("openclaw session list", "openclaw session list --status archived --json"),
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


@app.command(
    "show",
    epilog=session_common.epilog(
        "openclaw session show agent:main:main --tail 10", "openclaw session show s-0190... --json"
    ),
)
def show_cmd(
    target: Target,
    tail: Annotated[int | None, typer.Option("--tail", min=0, help="Only the last N messages.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Show a session's metadata and messages. Damaged lines are skipped and reported on stderr."""
    store = session_common.store()
    view = store.read_session(store.resolve(target), count_tokens=True)
    messages = view.messages[-tail:] if tail else ([] if tail == 0 else view.messages)
    session_common.warn_problems(view.problems, view.path)
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
    epilog=session_common.epilog(
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
    from openclaw_cli.identity import claims
    from openclaw_cli.identity import persons as identity
    from openclaw_cli.sessions.keys import parse_key

    content = common.read_text_arg(text, MESSAGE_BYTES)
    person = None
    if role == "user":  # whose words these are: the group speaker, the DM peer, or the owner (main)
        rules = identity.IdentityRules.from_dict(session_common.session_values()["identity"])
        parsed = parse_key(key)
        who = claims.speaker_identity(rules, parsed, sender=sender, sender_what="--sender")
        # a DM is its peer's, the main session the owner's: an explicit key is never silently moved
        claims.speaker_session(rules, parsed, who, "--sender", reroute=False)
        person = who.person
    result = session_common.manager().append(
        key,
        role,
        content,
        session_common.now(),
        sender=sender,
        user_id=person,
        anonymous=role == "user" and person is None,
    )
    if as_json:
        common.emit_json(result.to_dict())
        return
    if result.new_session:
        why = f" ({result.reason})" if result.reason else ""
        common.echo(f"started a new session {result.session_id}{why}")
    common.echo(f"appended message {result.message['idx']} to {result.session_id}")


@app.command("new", epilog=session_common.epilog("openclaw session new agent:main:main"))
def new_cmd(key: KeyArg, as_json: JsonOpt = False) -> None:
    """Start a new session for a key; its current session (if any) is archived."""
    meta, previous = session_common.manager().new(key, session_common.now())
    _report_new(meta, previous, as_json)


@app.command(
    "reset", epilog=session_common.epilog("openclaw session reset agent:main:telegram:default:direct:123")
)
def reset_cmd(key: KeyArg, as_json: JsonOpt = False) -> None:
    """Archive the key's current session and start a new one (the key must have a session)."""
    meta, previous = session_common.manager().reset(key, session_common.now())
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
    epilog=session_common.epilog(
        "openclaw session archive agent:main:main", "openclaw session archive s-0190..."
    ),
)
def archive_cmd(target: Target, as_json: JsonOpt = False) -> None:
    """Archive a session: it takes no more messages; the next message to its key starts a new one."""
    meta = session_common.manager().archive(target, session_common.now())
    if as_json:
        common.emit_json(meta)
    else:
        common.echo(f"archived {meta['sessionId']}")


@app.command("delete", epilog=session_common.epilog("openclaw session delete s-0190... --yes"))
def delete_cmd(
    target: Target,
    yes: Annotated[bool, typer.Option("--yes", help="Really delete (required).")] = False,
) -> None:
    """Delete a session and its messages for good (this cannot be undone)."""
    if not yes:
        common.fail(
            "refusing to delete without --yes", hint="add --yes; consider `openclaw session archive` instead"
        )
    session_id = session_common.manager().delete(target)
    common.echo(f"deleted {session_id}")


# The commands of the modules beside this one, registered in the order of `openclaw session --help`.
session_portability.register(app)  # export, import, key
session_upkeep.register(app)  # sweep, context, compact
session_search.register(app)  # search
