"""`openclaw channels list|status`: the chat-app channels, as configured and as the running gateway sees them."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from openclaw_cli.cli import common

app = typer.Typer(
    help="Chat-app channels (Telegram, Slack): as configured, and as the running gateway sees them.",
    no_args_is_help=True,
    epilog="Examples:\n\n  openclaw channels list\n\n  openclaw channels status --json",
)
JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]
FIELDS = (
    "enabled",
    "mode",
    "connected",
    "lastInbound",
    "lastOutbound",
    "lastError",
    "pendingSends",
    "offset",
)


def _configured() -> list[dict[str, Any]]:
    from openclaw_cli.channels.report import configured

    st = common.state()
    tokens = {
        "telegram": bool(st.env.get("TELEGRAM_BOT_TOKEN")),
        "slack": bool(st.env.get("SLACK_BOT_TOKEN")),
    }
    return configured(st.settings, st.home.root, tokens)


def _render(rows: list[dict[str, Any]], fields: tuple[str, ...]) -> None:
    for row in rows:
        values = "  ".join(f"{name}={row.get(name)}" for name in fields if name in row)
        common.echo(f"{row['channel']}/{row['account']}  {values}")


@app.command("list", epilog="Examples:\n\n  openclaw channels list\n\n  openclaw channels list --json")
def list_cmd(as_json: JsonOpt = False) -> None:
    """The channels in openclaw.json: enabled, mode, whether a token is set (never the token), policies."""
    rows = _configured()
    if as_json:
        common.emit_json({"channels": rows})
        return
    _render(rows, ("enabled", "mode", "tokenSet", "dmPolicy", "groupPolicy"))


@app.command("status", epilog="Examples:\n\n  openclaw channels status\n\n  openclaw channels status --json")
def status_cmd(as_json: JsonOpt = False) -> None:
    """Each channel as the running gateway sees it: connected, last inbound/outbound, last error, pending
    sends, offset. Without a running gateway, what the state files say (connected false)."""
    from openclaw_cli.gateway.client.reads import ask_gateway, home_token

    st = common.state()
    rows = _configured()
    answer = ask_gateway(
        st.home, home_token(st.home, st.env.get("OPENCLAW_GATEWAY_TOKEN")), "channels.status", {}
    )
    if answer.answered and isinstance(answer.payload, dict):
        live = {row["channel"]: row for row in answer.payload.get("channels", [])}
        known = {row["channel"] for row in rows}
        rows = [{**row, **live.get(row["channel"], {})} for row in rows]
        rows += [row for name, row in live.items() if name not in known]  # channels plugins registered
    if as_json:
        common.emit_json({"gateway": answer.via, "reason": answer.reason, "channels": rows})
        return
    common.echo(f"gateway: {answer.via or 'not running' + (f' ({answer.reason})' if answer.reason else '')}")
    _render(rows, FIELDS)
