"""`openclaw plugins list|info`: the plugins found, their state, what each registered, their last error."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from openclaw_cli.cli import common

app = typer.Typer(
    help="Plugins (entry points `openclaw.plugins` and plugins.load.paths): state, registrations, errors.",
    no_args_is_help=True,
    epilog="Examples:\n\n  openclaw plugins list\n\n  openclaw plugins info my-plugin --json",
)
JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]


def _status() -> tuple[dict[str, Any], str | None]:
    """The running gateway's view (with its counted errors), else this process's load; and who answered."""
    from openclaw_cli.gateway.client.reads import ask_gateway, home_token
    from openclaw_cli.plugins.report import loaded_status

    st = common.state()
    answer = ask_gateway(
        st.home, home_token(st.home, st.env.get("OPENCLAW_GATEWAY_TOKEN")), "plugins.status", {}
    )
    if answer.answered and isinstance(answer.payload, dict):
        return answer.payload, answer.via
    return loaded_status(st.settings, st.home.root), None


@app.command("list", epilog="Examples:\n\n  openclaw plugins list\n\n  openclaw plugins list --json")
def list_cmd(as_json: JsonOpt = False) -> None:
    """Every plugin found: id, version, source, state, what it registered by injection point, last error.
    From the running gateway when one answers (errors counted since it started), else loaded here."""
    from openclaw_cli.plugins.report import summary

    status, via = _status()
    if as_json:
        common.emit_json({"gateway": via, **status})
        return
    common.echo(f"from: {'gateway ' + via if via else 'this process (no gateway answered)'}")
    if not status["plugins"]:
        common.echo("no plugins found (install one, or list files in plugins.load.paths)")
    for row in status["plugins"]:
        version = row.get("version") or "-"
        common.echo(f"{row['id']}  {version}  {row['source']}  {row['state']}  errors={row['errors']}")
        common.echo(f"    {summary(row)}")
        if row.get("lastError"):
            common.echo(f"    last error: {row['lastError']}")
    for problem in status.get("problems", []):
        common.echo(f"problem: {problem}")


@app.command(
    "info",
    epilog="Examples:\n\n  openclaw plugins info my-plugin\n\n  openclaw plugins info my-plugin --json",
)
def info_cmd(
    plugin_id: Annotated[str, typer.Argument(help="the plugin's id")], as_json: JsonOpt = False
) -> None:
    """One plugin in detail: where it came from, its state, each registration and hook, errors."""
    from openclaw_cli.plugins.report import find

    status, via = _status()
    row = find(status, plugin_id)
    if as_json:
        common.emit_json({"gateway": via, **row})
        return
    for key in (
        "id",
        "version",
        "source",
        "where",
        "state",
        "conversationAccess",
        "timeoutSeconds",
        "errors",
    ):
        common.echo(f"{key}: {common.human(row.get(key))}")
    for kind, names in row.get("registered", {}).items():
        common.echo(f"{kind}: {', '.join(names)}")
    common.echo(f"hooks: {', '.join(row.get('hooks', [])) or '-'}")
    common.echo(f"lastError: {row.get('lastError') or '-'}")
