"""`openclaw session export`, `import` and `key`: moving a whole session between homes, and the key an
inbound message gets. Registered by cli/session/commands.py."""

from __future__ import annotations

from typing import Annotated

import typer

from openclaw_cli.cli import common
from openclaw_cli.cli.session import helpers as session_common
from openclaw_cli.cli.session.helpers import JsonOpt, Target


def export_cmd(
    target: Target,
    output: Annotated[str, typer.Option("--output", "-o", help="File to write; '-' is stdout.")] = "-",
) -> None:
    """Write a session as JSON Lines: one meta line (with its summary), then one line per message.

    `openclaw session import` reads it back, in this home or another one.
    """
    import json

    from openclaw_cli.core.output_file import check_output_path, output_file
    from openclaw_cli.sessions.upkeep.portability import export_lines

    if output != "-":
        check_output_path(output, "--output", "chat.jsonl")  # before the session is read
    store = session_common.store()
    session_id = store.resolve(target)
    lines, problems = export_lines(store, session_id)
    session_common.warn_problems(problems, store.session_dir(session_id) / "messages.jsonl")
    if output == "-":
        for line in lines:
            common.emit_json_line(line)
        return
    with output_file(output, "--output", "chat.jsonl") as handle:
        for line in lines:
            handle.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n")
    common.echo(f"exported {session_id} to {output}")


def import_cmd(
    source: Annotated[str, typer.Argument(help="A file written by `session export`; '-' reads stdin.")],
    as_json: JsonOpt = False,
) -> None:
    """Import a whole session (meta, summary, messages) exported by `openclaw session export`.

    The file is checked first (a bad line imports nothing). The session keeps its id and key (moved to
    this agent); if the key already has a session here, the imported one is stored archived.
    """
    from openclaw_cli.sessions.upkeep.portability import import_session, parse_export

    parsed = parse_export(_input_lines(source))
    result = import_session(session_common.store(with_settings=True), parsed, session_common.now())
    if as_json:
        common.emit_json(result.to_dict())
        return
    where = " (archived: the key already has a session here)" if result.displaced else ""
    common.echo(
        f"imported {result.session_id} with {result.messages} messages as {result.session_key}{where}"
    )


def _input_lines(source: str) -> list[bytes]:
    """The input's lines, split at "\\n" only (a message may hold U+2028 and other separators raw), each
    refused as soon as it passes what a message's line can take (input_lines.py)."""
    import sys

    from openclaw_cli.core.errors import InvalidInput
    from openclaw_cli.core.input_lines import MESSAGE_LINE_BYTES, lines

    if source == "-":
        return list(lines(sys.stdin.buffer, MESSAGE_LINE_BYTES, "standard input"))
    try:
        with open(source, "rb") as handle:
            return list(lines(handle, MESSAGE_LINE_BYTES, source))
    except FileNotFoundError as exc:
        raise InvalidInput(f"no such file: {source}") from exc
    except OSError as exc:
        raise InvalidInput(f"cannot read {source} ({exc.strerror})") from exc


def key_cmd(
    channel: Annotated[str, typer.Option("--channel", help="e.g. telegram, discord.", show_default=False)],
    account: Annotated[str, typer.Option("--account", help="The bot account on that channel.")] = "default",
    peer: Annotated[str, typer.Option("--peer", help="The sender's id.", show_default=False)] = "",
    group: Annotated[str | None, typer.Option("--group", help="The group id, for group chats.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the session key a message gets under the configured session.dmScope and identityLinks.

    Under dmScope main the main session is the owner's: a DM from anyone else gets its own
    per-channel-peer session (--json says "rerouted": true).
    """
    from openclaw_cli.identity.claims import dm_session
    from openclaw_cli.sessions.keys import build_key, group_key

    st = common.state()
    rerouted = False
    if group is not None:
        key = group_key(st.agent, channel, account, group)
    else:
        if not peer:
            common.fail("--peer is required for a direct message", code=2)
        chosen = dm_session(st.settings, st.agent, channel, account, peer)
        key, rerouted = chosen.key, chosen.rerouted
    text = build_key(key)
    if as_json:
        scope = st.settings.session.dm_scope
        common.emit_json({"sessionKey": text, "kind": key.kind, "dmScope": scope, "rerouted": rerouted})
    else:
        common.echo(text)


def register(app: typer.Typer) -> None:
    """Add export, import and key to the `session` group in --help order (cli/session/commands.py calls this once)."""
    app.command(
        "export",
        epilog=session_common.epilog(
            "openclaw session export agent:main:main > chat.jsonl",
            "openclaw session export s-0190... -o chat.jsonl",
        ),
    )(export_cmd)
    app.command(
        "import",
        epilog=session_common.epilog(
            "openclaw session import chat.jsonl",
            "ssh old-box openclaw session export agent:main:main | openclaw session import -",
        ),
    )(import_cmd)
    app.command(
        "key",
        epilog=session_common.epilog(
            "openclaw session key --channel telegram --account default --peer 123",
            "openclaw session key --channel discord --account bot1 --peer 9 --group 555 --json",
        ),
    )(key_cmd)
