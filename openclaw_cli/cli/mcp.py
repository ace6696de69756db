"""`openclaw mcp`: serve the person's memory to Claude, Cursor, VS Code and any MCP client (issue 51);
`openclaw mcp config --client ...` prints the settings entry each client expects. The work is mcp/'s."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from openclaw_cli.cli import common

if TYPE_CHECKING:
    from openclaw_cli.mcp.context import McpContext

EXAMPLES = """Examples:

  openclaw mcp

  openclaw mcp --user alice

  openclaw mcp --http --port 8765

  openclaw mcp config --client claude-desktop
"""
CONFIG_EXAMPLES = """Examples:

  openclaw mcp config --client claude-desktop

  openclaw mcp config --client vscode --user alice

  openclaw mcp config --client cursor > ~/.cursor/mcp.json
"""
UserOpt = Annotated[
    str | None,
    typer.Option(
        "--user", "-u", help="The person the server acts for (default: the owner).", show_default=False
    ),
]

app = typer.Typer(
    invoke_without_command=True,
    epilog=EXAMPLES,
)


@app.callback(invoke_without_command=True)
def serve_cmd(
    ctx: typer.Context,
    user: UserOpt = None,
    http: Annotated[
        bool, typer.Option("--http", help="Serve streamable HTTP at /mcp instead of stdio.")
    ] = False,
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="HTTP port (0: any free one).")
    ] = 8765,
    host: Annotated[
        str, typer.Option("--host", help="HTTP address; off loopback only with a token (mcp.token).")
    ] = "127.0.0.1",
) -> None:
    """Serve long-term memory to MCP clients (Claude, Cursor, VS Code) over stdio or HTTP.

    One server acts for one person (--user, default the owner): tools memory_search, memory_add, memory_forget, memory_history,
    session_search and memory_note; resources memory://MEMORY.md, memory://today (the owner's only) and
    memory://stats; the prompt `recall`.

    stdio is the default, for a client that launches the server (see `openclaw mcp config`): stdout then
    carries the protocol alone, and logs go to stderr. --http serves streamable HTTP at
    http://HOST:PORT/mcp, with `Authorization: Bearer TOKEN` (mcp.token, else the gateway token).

    When a gateway runs for this home, searches and writes go through it (its models are warm, it is the
    one writer); otherwise the models load once, at start, while the client connects.
    """
    if ctx.invoked_subcommand is not None:
        return
    # First of all: from here on only the protocol reaches stdout (fd 1 now writes to stderr).
    wire = None
    if not http:
        from openclaw_cli.mcp.transport import claim_stdout

        wire = claim_stdout()
    from openclaw_cli.mcp import run

    context = _context(user)
    if wire is not None:
        run.run_stdio(context, wire)
        return
    st = common.state()
    token, created = run.http_token(
        st.home, st.settings.mcp.token, st.env.get("OPENCLAW_GATEWAY_TOKEN"), host
    )
    sock = run.bind(host, port)
    binding = run.HttpBinding(host, sock.getsockname()[1], token, created)
    if created is not None:
        common.warn(f"created the gateway token in {created}: send it as Authorization: Bearer TOKEN")
    typer.echo(f"openclaw: MCP for {context.person} at {binding.url}", err=True)
    run.run_http(context, sock, binding)


def _context(user: str | None) -> McpContext:
    from openclaw_cli.gateway.client.reads import home_token
    from openclaw_cli.mcp.context import McpContext, acting_person

    st = common.state()
    person, owner = acting_person(st.settings, user)
    token = home_token(st.home, st.env.get("OPENCLAW_GATEWAY_TOKEN"))
    return McpContext(st.home, st.agent, st.settings, person, owner, token)


@app.command("config", epilog=CONFIG_EXAMPLES)
def config_cmd(
    client: Annotated[
        str,
        typer.Option(
            "--client",
            "-c",
            help="claude-desktop, claude-code, cursor or vscode.",
            autocompletion=lambda: ["claude-desktop", "claude-code", "cursor", "vscode"],
        ),
    ],
    user: UserOpt = None,
) -> None:
    """Print the JSON snippet a client's MCP settings take to launch this openclaw (its absolute path),
    for this home and agent; where the snippet goes is said on stderr."""
    from openclaw_cli.mcp.client_config import WHERE, snippet
    from openclaw_cli.mcp.context import acting_person

    st = common.state()
    if user is not None:
        acting_person(st.settings, user)  # a claim no server would accept is refused now, not at launch
    args = ["mcp", *(["--user", user] if user is not None else [])]
    if st.agent != "main":
        args += ["--agent", st.agent]
    env = {"OPENCLAW_HOME": str(st.home.root.resolve())}
    common.emit_json(snippet(client, _launcher(), args, env))
    typer.echo(f"openclaw: put it in {WHERE[client].where}", err=True)


def _launcher() -> list[str]:
    """This openclaw, by absolute path: the console script that runs now, else the one beside this
    Python, else this Python with `-m openclaw_cli`."""
    started = Path(sys.argv[0])
    if started.name == "openclaw" and started.exists():
        return [str(started.resolve())]
    beside = Path(sys.executable).parent / "openclaw"
    if beside.exists():
        return [str(beside)]
    return [sys.executable, "-m", "openclaw_cli"]
