"""`openclaw auth set|list|remove`: an agent's API keys per provider (auth_profiles.py). A key is read
from a hidden prompt, or from standard input when that is not a terminal; never from the command line
(where `ps` and the shell's history would show it), and never printed."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from typing import Annotated

import typer

from openclaw_cli.cli import common
from openclaw_cli.core.errors import InvalidInput, UsageError

app = typer.Typer(
    help="API keys per provider for one agent (agents/<agentId>/agent/auth-profiles.json, 0600).",
    no_args_is_help=True,
    epilog="Examples:\n\n  openclaw auth set openai\n\n  printf '%s' \"$KEY\" | openclaw auth set anthropic --agent work"
    "\n\n  openclaw auth list --json\n\n  openclaw auth remove openai --agent work",
)
JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]
Provider = Annotated[str, typer.Argument(help="The model's prefix: openai for openai/gpt-4o-mini.")]
MAX_STDIN = 65_536  # a key is far shorter; a file piped by mistake is not read whole


def _read_key(provider: str) -> str:
    if sys.stdin.isatty():
        return str(typer.prompt(f"API key for {provider}", hide_input=True))
    data = sys.stdin.buffer.read(MAX_STDIN + 1)
    if len(data) > MAX_STDIN:
        raise InvalidInput("standard input is far longer than a key", hint="give the key alone")
    try:
        return data.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise InvalidInput("the key on standard input is not UTF-8 text") from exc


@app.command(
    "set",
    # an extra argument (a key typed after the provider) reaches set_cmd, whose error does not repeat it
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    epilog="Examples:\n\n  openclaw auth set openai\n\n  printf '%s' \"$KEY\" | openclaw auth set anthropic --agent work",
)
def set_cmd(ctx: typer.Context, provider: Provider, quiet: common.QuietOpt = False) -> None:
    """Store the agent's key for PROVIDER (replacing one stored before); it is used for the agent's model
    calls before llm.apiKey and the provider's environment variable (an agents.list apiKey still wins)."""
    from openclaw_cli.identity.auth_profiles import check_provider, set_key

    if ctx.args:  # refused without quoting it back: it may be the key itself
        raise UsageError(
            "unexpected arguments after PROVIDER (not shown: a key is never taken from the command line, "
            "where the shell's history and `ps` would keep it)",
            hint="run `openclaw auth set PROVIDER` and type it at the prompt, or give it on standard input",
        )
    st = common.state()
    name = check_provider(provider)
    path = set_key(st.home, st.agent, name, _read_key(name), datetime.now(UTC))
    if not quiet:
        common.echo(f"{name} key stored for agent {st.agent} in {path}")


@app.command("list", epilog="Examples:\n\n  openclaw auth list\n\n  openclaw auth list --agent work --json")
def list_cmd(as_json: JsonOpt = False) -> None:
    """The providers the agent has a key for, and when each was set (never the keys)."""
    from openclaw_cli.identity.auth_profiles import profiles_path, read_profiles

    st = common.state()
    path = profiles_path(st.home, st.agent)
    rows = [profile.listed() for _, profile in sorted(read_profiles(path).items())]
    if as_json:
        common.emit_json({"agent": st.agent, "path": str(path), "profiles": rows})
        return
    if not rows:
        common.echo(f"agent {st.agent} has no stored keys (the environment's are used)")
    for row in rows:
        common.echo(f"{row['provider']}  set {row['updatedAt'] or 'unknown'}")


@app.command(
    "remove",
    epilog="Examples:\n\n  openclaw auth remove openai\n\n  openclaw auth remove anthropic --agent work",
)
def remove_cmd(provider: Provider, quiet: common.QuietOpt = False) -> None:
    """Forget the agent's key for PROVIDER; its calls fall back to llm.apiKey, then the environment."""
    from openclaw_cli.identity.auth_profiles import remove_key

    st = common.state()
    remove_key(st.home, st.agent, provider)
    if not quiet:
        common.echo(f"{provider.strip().lower()} key removed for agent {st.agent}")
