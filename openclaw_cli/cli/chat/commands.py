"""`openclaw chat`: talk to an agent in the terminal, through a running gateway or in-process."""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from openclaw_cli.cli import common
from openclaw_cli.core.errors import OpenclawError
from openclaw_cli.identity.agent_config import for_agent, with_model

if TYPE_CHECKING:
    from openclaw_cli.agent.clients.chat import ChatBackend
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.identity.persons import Identity

app = typer.Typer(
    help="Chat with an agent in the terminal (replies stream; memory is used and written).",
    subcommand_metavar=" ",  # a command without subcommands: no COMMAND in its usage line
    # `openclaw chat "question" -m MODEL`: options after the message too, as in `llm "prompt" -m MODEL`
    context_settings={"allow_interspersed_args": True},
    epilog='Examples:\n\n  openclaw chat\n\n  openclaw chat "what do I drink in the morning?"\n\n'
    '  openclaw chat "summarise my week" -m openai/gpt-4o-mini\n\n'
    "  openclaw chat --local --session agent:main:direct:alice\n\n"
    "  openclaw chat --agent work\n\n  echo 'remember that I like green tea' | openclaw chat --local",
)


def _token() -> str | None:
    """The gateway token: OPENCLAW_GATEWAY_TOKEN, else the one the gateway stored in the home."""
    st = common.state()
    token = st.env.get("OPENCLAW_GATEWAY_TOKEN")
    if token:
        return token
    try:
        return (st.home.root / "gateway" / "token").read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def _gateway_port(given: int | None) -> tuple[int | None, str]:
    """--port, else the port this home's running gateway wrote in its pid file; with why when neither.

    Never gateway.port or the default: a gateway listening there may be another home's, with another
    token (issue 48: its 401 ended the chat that should have run in-process)."""
    from openclaw_cli.gateway.client.pidfile import home_gateway

    if given is not None:
        return given, f"no gateway on port {given}"
    found = home_gateway(common.state().home)
    return (found[1], "") if found is not None else (None, "no gateway runs for this home")


def _backend(
    agent: str,
    session_key: str,
    who: Identity,
    claim: str | None,
    local: bool,
    port: int | None,
    settings: Settings,
) -> tuple[ChatBackend, str | None]:
    """The gateway when one is listening (and --local is not given), else the in-process loop."""
    from openclaw_cli.agent.clients.gateway import WS_PATH, GatewayChat, gateway_listening

    st = common.state()
    chosen, absent = _gateway_port(port) if not local else (None, "")
    if chosen is not None and gateway_listening("127.0.0.1", chosen):
        url = f"ws://127.0.0.1:{chosen}{WS_PATH}"
        chat = GatewayChat(
            url, _token(), agent, session_key, user_id=who.person, claim=claim, owner=who.owner
        )
        return chat, None
    from openclaw_cli.agent.clients.chat import LocalChat

    why = None if local else f"{absent or f'no gateway on port {chosen}'}: running in-process"
    return LocalChat(st.home, settings, agent, session_key, user_id=who.person, env=st.env), why


@app.callback(invoke_without_command=True)
def chat_cmd(
    message: Annotated[
        list[str] | None,
        typer.Argument(
            help="One message: print its reply and exit (words are joined by spaces). Without it, "
            "the chat reads lines from the terminal or a pipe.",
            metavar="MESSAGE",
            show_default=False,
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            "-m",
            help="The model for this run (e.g. openai/gpt-4o-mini), over the configured one; runs in-process.",
        ),
    ] = None,
    session: Annotated[
        str | None, typer.Option("--session", help="The session key (default agent:AGENT:main).")
    ] = None,
    agent: Annotated[
        str | None, typer.Option("--agent", help="The agent (default: the global --agent).")
    ] = None,
    local: Annotated[
        bool, typer.Option("--local", help="Run in-process even if a gateway is running.")
    ] = False,
    port: Annotated[
        int | None,
        typer.Option("--port", min=1, max=65535, help="The gateway's port (default: the running one's)."),
    ] = None,
    user: Annotated[
        str | None,
        typer.Option(
            "--user",
            help="Who is typing (a person id); default: the owner in the main session, the peer in a DM.",
        ),
    ] = None,
) -> None:
    """Chat with an agent. Type /help for the commands (/new, /compact, /memory, /remember, /forget, ...).

    Memories are read and written for the person typing: the owner (`owner` in the config) in the
    main session, the session's peer in a DM session, or `--user`.

    With a MESSAGE, only the reply is printed (notices go to stderr) and a failed model call is one
    error line and exit 1. A piped chat exits 1 too when a message got no reply because its turn failed.

    Examples:\n
      openclaw chat\n
      openclaw chat "what do I like to drink?"\n
      openclaw chat "what do I like to drink?" -m openai/gpt-4o-mini\n
      openclaw chat --local --session agent:main:telegram:direct:123\n
      echo 'what do I like?' | openclaw chat --user alice
    """
    from rich.console import Console

    from openclaw_cli.agent.turn.requests import NO_MODEL
    from openclaw_cli.cli.chat.ui import read_lines, run_chat, start_loading_renderer
    from openclaw_cli.core.paths import validate_agent_id
    from openclaw_cli.sessions.keys import build_key, parse_key

    st = common.state()
    agent_id = validate_agent_id(agent) if agent else st.agent
    key = build_key(parse_key(session)) if session else f"agent:{agent_id}:main"
    if parse_key(key).agent_id != agent_id:
        common.fail(
            f"session {key} belongs to another agent", hint=f"pass --agent {parse_key(key).agent_id}", code=2
        )
    from openclaw_cli.identity import claims

    try:  # --user is claimed as every entry point claims a person; the main session is the owner's
        who = claims.speaker_identity(st.settings, parse_key(key), user=user, user_what="--user")
        chosen = claims.speaker_session(st.settings, parse_key(key), who, "--user")
    except OpenclawError as exc:
        common.fail(exc.message, hint=exc.hint, code=2)
    person = who.person
    if chosen.rerouted:
        key = build_key(chosen.key)
        _note_reroute(agent_id)
    settings = st.settings if model is None else with_model(st.settings, agent_id, model)
    # The gateway's agents run their configured models: another model means this process.
    backend, why = _backend(agent_id, key, who, user, local or model is not None, port, settings)
    in_process_model = for_agent(settings, agent_id).llm.model
    no_model = NO_MODEL if backend.mode == "in-process" and in_process_model is None else None
    if message:
        from openclaw_cli.cli.chat.once import reply_once

        try:
            reply_once(backend, " ".join(message))
        finally:
            backend.close()
        return
    interactive = sys.stdin.isatty()
    # A pipe gets whole lines (no wrapping at 80 columns); a terminal gets colours and the live view.
    console = Console(highlight=False, force_terminal=interactive or None, soft_wrap=not interactive)
    speaker = f", as {person}" if person else ", anonymous: nothing is remembered"
    banner = [
        f"agent {agent_id}, session {key}{speaker} ({backend.mode}); /help for commands, Ctrl-D to leave"
    ]
    if why:
        banner.append(why)
    if no_model is not None:
        banner.append(no_model)
    history = _history_path(agent_id, person) if interactive else None

    def on_prompt() -> None:  # what the first reply needs loads while the user types
        backend.preload()
        start_loading_renderer()

    try:
        lines = functools.partial(read_lines, history, interactive, on_prompt=on_prompt)
        screen = run_chat(backend, console, agent_id, banner, lines, interactive)
    finally:
        backend.close()
    if screen.failed and not interactive:  # a script must not take "no reply" for success
        common.fail(f"{screen.failed} of {screen.sent} message(s) got no reply: the turn failed (see above)")


def _note_reroute(agent_id: str) -> None:
    """Count the chat kept out of the owner's main session (`doctor` and `gateway status` report it)."""
    from openclaw_cli.sessions.reroutes import record_reroute

    st = common.state()
    try:
        record_reroute(st.home.root, agent_id, st.settings.session.dm_scope)
    except OSError as exc:
        common.warn(f"could not count the chat kept out of the main session: {exc}")


def _history_path(agent_id: str, person: str | None) -> Path | None:
    """The prompt history file of the person typing, private (0600 in a 0700 directory); one per
    person, so that `memory purge --user` can remove what that person typed (identity.history_name)."""
    from openclaw_cli.core.fsutil import create_private_file
    from openclaw_cli.identity.persons import history_name
    from openclaw_cli.security.keyfile import is_encrypted

    st = common.state()
    if is_encrypted(st.home.root):  # an encrypted home keeps no plain record of what was typed
        return None
    path = st.home.ensure(st.home.agent_dir(agent_id) / "chat") / history_name(person)
    try:
        if not path.exists():
            create_private_file(path)
    except OSError:
        return None
    return path
