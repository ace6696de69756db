"""`openclaw config`: read and change openclaw.json (or openclaw.toml)."""

from __future__ import annotations

from typing import Annotated

import typer

from openclaw_cli.cli import common

app = typer.Typer(
    help="Read and change openclaw.json (JSON5), or openclaw.toml when there is no openclaw.json. Environment variables OPENCLAW_SECTION__KEY override it.",
    no_args_is_help=True,
    epilog="Examples:\n\n  openclaw config get session.dmScope\n\n  openclaw config set session.reset.atHour 5\n\n"
    "  OPENCLAW_SESSION__FSYNC=always openclaw config show --json",
)

JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]


@app.command("path", epilog="Examples:\n\n  openclaw config path\n\n  openclaw config path --json")
def path_cmd(as_json: JsonOpt = False) -> None:
    """Print where the config file lives (it may not exist yet)."""
    target = common.state().home.config_file
    if as_json:
        common.emit_json({"path": str(target), "exists": target.exists()})
    else:
        common.echo(str(target))


@app.command(
    "show",
    epilog="Examples:\n\n  openclaw config show\n\n  OPENCLAW_SESSION__DMSCOPE=per-peer openclaw config show --json",
)
def show_cmd(as_json: JsonOpt = False) -> None:
    """Print the effective settings: defaults, then the file, then OPENCLAW_* variables."""
    from openclaw_cli.config.loading import dumps, settings_as_dict

    values = settings_as_dict(common.state().settings)
    if as_json:
        common.emit_json(values)
    else:
        common.echo(dumps(values))


@app.command(
    "get",
    epilog="Examples:\n\n  openclaw config get session.dmScope\n\n  openclaw config get memory.search --json",
)
def get_cmd(
    key: Annotated[str, typer.Argument(help="Dotted key, e.g. session.dmScope.")], as_json: JsonOpt = False
) -> None:
    """Print one effective setting."""
    from openclaw_cli.config.loading import dumps, get_key

    value = get_key(common.state().settings, key)
    if as_json:
        common.emit_json({"key": key, "value": value})
    elif isinstance(value, str):
        common.echo(value)
    else:
        common.echo(dumps(value))


@app.command(
    "set",
    epilog="Examples:\n\n  openclaw config set session.dmScope per-channel-peer\n\n  openclaw config set session.reset.idleMinutes 120"
    "\n\n  openclaw config set memory.search.cosFloor -0.1\n\n  openclaw config set llm.apiBase http://127.0.0.1:8080/v1",
    # A VALUE such as -5 or -0.1 is a value, not an unknown option (`set` has no options but --help).
    context_settings={"ignore_unknown_options": True},
)
def set_cmd(
    key: Annotated[str, typer.Argument(help="Dotted key, e.g. session.reset.atHour.")],
    value: Annotated[str, typer.Argument(help="Value: JSON5 (5, true, null, [..], {..}) or a plain string.")],
) -> None:
    """Set one key in openclaw.json (or openclaw.toml); the whole file is validated before it is replaced
    atomically.

    Only the value changes (a new key is added after the last one of its object or table): comments, key
    order and layout of the rest of the file are kept.
    """
    from openclaw_cli.config.loading import parse_value, set_key

    st = common.state()
    st.home.ensure_root()
    set_key(st.home.config_file, key, parse_value(value), st.env)
    common.echo(f"{key} = {_shown(key, value)}")


def _shown(key: str, value: str) -> str:
    """The value as it may be echoed: an API key or a token (mcp.token) never, a DSN without its password
    (as `config show`)."""
    from openclaw_cli.config.models import SECRET_MASK

    name = key.rsplit(".", 1)[-1].lower()
    if name in ("apikey", "api_key", "token"):
        return SECRET_MASK
    if name == "dsn":
        from openclaw_cli.core.dsn import mask_dsn

        return mask_dsn(value)
    return value
