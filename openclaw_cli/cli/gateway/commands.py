"""`openclaw gateway`: run the gateway (HTTP + WebSocket on one port) and talk to it."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from openclaw_cli.cli import common, passphrase_edge
from openclaw_cli.security.passphrase import ENV_NAME

app = typer.Typer(
    help="The gateway: agents served over WebSocket and HTTP (OpenAI-compatible) on 127.0.0.1:18789.",
    no_args_is_help=True,
    epilog='Examples:\n\n  openclaw gateway start\n\n  openclaw gateway call chat.send --params \'{"text": "hi"}\'\n\n'
    "  openclaw gateway stop",
)

JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]
PortOpt = Annotated[
    int | None,
    typer.Option("--port", min=0, max=65535, help="Port (default gateway.port, 18789; 0 picks a free one)."),
]
BindOpt = Annotated[
    str | None, typer.Option("--bind", help="loopback (127.0.0.1, default) or lan (0.0.0.0).")
]
TokenOpt = Annotated[
    str | None,
    typer.Option(
        "--token",
        help="Auth token (default OPENCLAW_GATEWAY_TOKEN, else the stored one).",
        show_default=False,
    ),
]
ClientPortOpt = Annotated[
    int | None,
    typer.Option("--port", min=1, max=65535, help="Port of the gateway (default: from its pid file)."),
]


def _check_bind(bind: str | None) -> None:
    if bind is not None and bind not in ("loopback", "lan"):
        raise typer.BadParameter(f"unknown bind {bind!r}: use loopback or lan", param_hint="'--bind'")


def _run_args(port: int | None, bind: str | None, token: str | None) -> list[str]:
    args: list[str] = []
    for flag, value in (("--port", port), ("--bind", bind), ("--token", token)):
        if value is not None:
            args += [flag, str(value)]
    return args


@app.command(
    "run",
    epilog="Examples:\n\n  openclaw gateway run\n\n  openclaw gateway run --port 0\n\n"
    "  OPENCLAW_GATEWAY_TOKEN=... openclaw gateway run --bind lan",
)
def run_cmd(port: PortOpt = None, bind: BindOpt = None, token: TokenOpt = None) -> None:
    """Serve in the foreground until Ctrl-C. Logs go to stderr; the token is never printed."""
    import logging

    from openclaw_cli.gateway.server import serve

    _check_bind(bind)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("uvicorn.error").setLevel(logging.WARNING)  # one line per WebSocket is noise
    st = common.state()

    def ready(host: str, actual_port: int, source: str) -> None:
        where = st.home.root / "gateway" / "token"
        said = {
            "generated": f"new token stored in {where}",
            "file": f"token from {where}",
            "env": "token from OPENCLAW_GATEWAY_TOKEN",
            "flag": "token from --token",
        }[source]
        typer.echo(f"openclaw gateway listening on http://{host}:{actual_port} ({said})", err=True)

    # An encrypted home's passphrase is asked once, here; the key then lives in this process's memory only.
    passphrase_edge.unlock_at_start(st.home.root, st.env, list(st.settings.security.passphrase_sources))
    serve(st.home, st.settings, env=st.env, port=port, bind=bind, token=token, on_ready=ready)


@app.command(
    "start", epilog="Examples:\n\n  openclaw gateway start\n\n  openclaw gateway start --port 18800 --json"
)
def start_cmd(
    port: PortOpt = None, bind: BindOpt = None, token: TokenOpt = None, as_json: JsonOpt = False
) -> None:
    """Start the gateway in the background (pid file and log under the home)."""
    from openclaw_cli.gateway.client.control import start_background

    _check_bind(bind)
    st = common.state()
    st.settings  # noqa: B018 - a broken config fails here, in the foreground, not in the log
    env = dict(st.env)
    passphrase = passphrase_edge.unlock_at_start(
        st.home.root, env, list(st.settings.security.passphrase_sources)
    )
    if passphrase is not None:  # asked here, on the terminal: the background process has none
        env[ENV_NAME] = passphrase
    record = start_background(st.home, _run_args(port, bind, token), env)
    if as_json:
        common.emit_json(record)
    else:
        common.echo(
            f"gateway started: pid {record['pid']}, http://{record['host']}:{record['port']} (log {record['log']})"
        )


@app.command("stop", epilog="Examples:\n\n  openclaw gateway stop\n\n  openclaw gateway stop --json")
def stop_cmd(as_json: JsonOpt = False) -> None:
    """Stop the background gateway of this home (SIGTERM; SIGKILL after 15 s)."""
    from openclaw_cli.gateway.client.control import stop

    result = stop(common.state().home)
    if as_json:
        common.emit_json(result)
    else:
        common.echo(f"gateway stopped (pid {result['pid']}{', forced' if result['forced'] else ''})")


@app.command("status", epilog="Examples:\n\n  openclaw gateway status\n\n  openclaw gateway status --json")
def status_cmd(port: ClientPortOpt = None, token: TokenOpt = None, as_json: JsonOpt = False) -> None:
    """Whether a gateway answers, and (with the token) its lanes, agents and config state. Exit 1 if down."""
    from openclaw_cli.gateway.client.control import client_token, status

    st = common.state()
    result = status(st.home, port, client_token(st.home, token, st.env.get("OPENCLAW_GATEWAY_TOKEN")))
    if as_json:
        common.emit_json(result)
    elif result["running"]:
        detail = result.get("gateway") or {}
        common.echo(f"running: pid {common.human(result['pid'])}, http://{result['host']}:{result['port']}")
        if detail:
            common.echo(
                f"lanes {detail['lanes']}  running {detail['running']}  queued {detail['queued']}  "
                f"turns {detail['turnsDone']}  queue mode {detail['queueMode']}"
            )
            if detail["config"]["error"]:
                common.warn(f"openclaw.json was not applied: {detail['config']['error']}")
            for agent, moved in sorted((detail.get("dmReroutes") or {}).items()):
                common.echo(
                    f"agent {agent}: {moved['count']} message(s) from people other than the owner went to "
                    f"their own session, not the owner's main session (last at {moved['lastAt']}; "
                    f"dmScope {detail.get('dmScope')})"
                )
    else:
        common.echo(f"not running ({result['reason']})")
    if not result["running"]:
        raise typer.Exit(1)


@app.command(
    "health", epilog="Examples:\n\n  openclaw gateway health\n\n  openclaw gateway health --port 18800 --json"
)
def health_cmd(port: ClientPortOpt = None, token: TokenOpt = None, as_json: JsonOpt = False) -> None:
    """Ask the gateway's health method (authenticated); exit 1 when it does not answer."""
    from openclaw_cli.gateway.client.control import call, client_token, endpoint

    st = common.state()
    host, chosen = endpoint(st.home, port)
    result = call(
        host, chosen, client_token(st.home, token, st.env.get("OPENCLAW_GATEWAY_TOKEN")), "health", {}
    )
    if as_json:
        common.emit_json(result)
    else:
        common.echo(
            f"ok: pid {result['pid']}, up {result['uptimeSeconds']:.0f} s, ready {common.human(result['ready'])}"
        )


@app.command(
    "call",
    epilog="Examples:\n\n  openclaw gateway call status\n\n"
    '  openclaw gateway call sessions.list --params \'{"agentId": "main"}\'\n\n'
    '  openclaw gateway call memory.search --params \'{"query": "tea"}\'',
)
def call_cmd(
    method: Annotated[str, typer.Argument(help="Method name, e.g. status, sessions.list, chat.history.")],
    params: Annotated[str, typer.Option("--params", help="Parameters as a JSON object.")] = "{}",
    port: ClientPortOpt = None,
    token: TokenOpt = None,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Seconds to wait for the answer.")
    ] = 30.0,
) -> None:
    """Call one WebSocket method and print its payload as JSON.

    Methods: health, status, sessions.list/get/reset/compact, chat.send/history/abort,
    memory.search/add/delete, reflect.run. chat.send returns at once with a run id; see chat.history.
    """
    from openclaw_cli.gateway.client.control import call, client_token, endpoint

    try:
        body: Any = json.loads(params)
    except ValueError as exc:
        raise typer.BadParameter(f"not JSON: {exc}", param_hint="'--params'") from exc
    if not isinstance(body, dict):
        raise typer.BadParameter("must be a JSON object", param_hint="'--params'")
    from openclaw_cli.core.textcheck import find_bad_text

    bad = find_bad_text(body)  # the gateway would refuse it too; say so before connecting
    if bad is not None:
        raise typer.BadParameter(bad.describe(), param_hint="'--params'")
    st = common.state()
    host, chosen = endpoint(st.home, port)
    token_value = client_token(st.home, token, st.env.get("OPENCLAW_GATEWAY_TOKEN"))
    common.emit_json(call(host, chosen, token_value, method, body, timeout=timeout))
