"""`openclaw pairing list|approve|deny`: who may talk to the assistant through a channel (channels/access.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import typer

from openclaw_cli.cli import common

app = typer.Typer(
    help="Pairing: approve or deny strangers who wrote to the assistant through a channel.",
    no_args_is_help=True,
    epilog="Examples:\n\n  openclaw pairing list\n\n  openclaw pairing approve telegram K7QX2M9P\n\n"
    "  openclaw pairing deny telegram K7QX2M9P",
)
JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]
ChannelArg = Annotated[str, typer.Argument(help="telegram or slack.")]
CodeArg = Annotated[str, typer.Argument(help="The code the sender was given.")]


@app.command("list", epilog="Examples:\n\n  openclaw pairing list\n\n  openclaw pairing list --json")
def list_cmd(as_json: JsonOpt = False) -> None:
    """Open pairing requests: strangers who wrote to the assistant and were given a code."""
    from openclaw_cli.channels.report import pairing_rows

    rows = pairing_rows(common.state().home.root)
    if as_json:
        common.emit_json({"requests": rows})
        return
    if not rows:
        common.echo("no open pairing requests")
        return
    for row in rows:
        until = datetime.fromtimestamp(float(row["expiresAt"])).astimezone().strftime("%Y-%m-%d %H:%M")
        common.echo(f"{row['channel']}  {row['code']}  sender {row['sender']} ({row['name']})  until {until}")


@app.command("approve", epilog="Examples:\n\n  openclaw pairing approve telegram 7KQ2MX")
def approve_cmd(channel: ChannelArg, code: CodeArg, as_json: JsonOpt = False) -> None:
    """Let the sender of CODE talk to the assistant (added to the channel's persisted allowlist)."""
    from openclaw_cli.channels.report import access_store

    found = access_store(common.state().home.root, channel).approve(code)
    if as_json:
        common.emit_json({"approved": {"channel": channel.lower(), "sender": found["sender"]}})
        return
    common.echo(f"approved {channel.lower()} sender {found['sender']}: their next message is answered")


@app.command("deny", epilog="Examples:\n\n  openclaw pairing deny telegram 7KQ2MX")
def deny_cmd(channel: ChannelArg, code: CodeArg, as_json: JsonOpt = False) -> None:
    """Drop the pairing request of CODE (a new message from them gets a new code)."""
    from openclaw_cli.channels.report import access_store

    found = access_store(common.state().home.root, channel).deny(code)
    if as_json:
        common.emit_json({"denied": {"channel": channel.lower(), "sender": found["sender"]}})
        return
    common.echo(f"denied {channel.lower()} sender {found['sender']}")
