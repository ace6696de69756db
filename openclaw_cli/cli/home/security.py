"""`openclaw security`: encryption at rest for a home (init, status, rekey, decrypt)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from openclaw_cli.cli import common
from openclaw_cli.core.errors import Conflict, UsageError

if TYPE_CHECKING:
    from openclaw_cli.security.convert import Converted

app = typer.Typer(
    help="Encryption at rest: a passphrase-wrapped key encrypts the home's databases and session files; "
    "unlock keeps the key in an agent for a while.",
    no_args_is_help=True,
    epilog="Examples:\n\n  openclaw security status\n\n  OPENCLAW_NEW_PASSPHRASE=... openclaw security init --yes\n\n"
    "  openclaw security rekey",
)
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation (for scripts).")]
JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]


def _no_gateway() -> None:
    """A conversion rewrites files a running gateway holds open: refuse rather than race it."""
    from openclaw_cli.gateway.client.pidfile import home_gateway

    if home_gateway(common.state().home) is not None:
        raise Conflict(
            "the gateway of this home is running",
            hint="stop it (`openclaw gateway stop`), then run this again",
        )


def _workspaces() -> list[Path]:
    """The main agent's workspace when configured outside the home (those inside are all found anyway)."""
    from openclaw_cli.memory.workspace.files import workspace_dir

    st = common.state()
    return [workspace_dir(st.home, st.agent, st.settings.memory)]


def _confirm(question: str) -> None:
    if not sys.stdin.isatty():
        raise UsageError(
            f"{question} Refusing without --yes (standard input is not a terminal)", hint="add --yes"
        )
    if not typer.confirm(question, default=False, err=True):
        common.fail("nothing was changed", hint="answer y, or pass --yes")


def _render(done: Converted, what: str, as_json: bool, quiet: bool) -> None:
    if as_json:
        common.emit_json(done.to_dict())
        return
    if quiet:
        return
    common.echo(
        f"{what}: {len(done.databases)} databases, {len(done.documents)} session documents, "
        f"{len(done.transcripts)} JSONL files, {len(done.workspace)} workspace notes ({done.already} already done)"
    )


@app.command(
    "init",
    epilog="Examples:\n\n  openclaw security init\n\n  OPENCLAW_NEW_PASSPHRASE=... openclaw security init --yes --json",
)
def init_cmd(yes: YesOpt = False, as_json: JsonOpt = False, quiet: common.QuietOpt = False) -> None:
    """Encrypt this home in place with a new passphrase (or finish a run that was cut short).

    A random data key encrypts the databases (ChaCha20-Poly1305 pages) and the session files (AES-256-GCM
    per line); scrypt turns the passphrase into the key that wraps it, stored in security/datakey.json.
    The passphrase is never stored: lose it and the data is gone. Run it again after an interruption: it
    goes on where it stopped and loses nothing. The gateway must be stopped.
    """
    from openclaw_cli.cli import passphrase_edge
    from openclaw_cli.security.convert import init_home
    from openclaw_cli.security.keyfile import is_encrypted
    from openclaw_cli.security.passphrase import obtain

    st = common.state()
    root = st.home.root
    _no_gateway()
    if is_encrypted(root):  # a rerun after an interruption: the passphrase already set opens it
        passphrase = obtain(
            root, passphrase_edge.sources(st.env, list(st.settings.security.passphrase_sources))
        )
    else:
        if not yes:
            _confirm(f"Encrypt {root}? Without the passphrase nothing in it can be read again.")
        passphrase = passphrase_edge.new_passphrase(st.env, root, also_current=True)
    done = init_home(
        root, passphrase, workspaces=_workspaces() if st.settings.security.encrypt_workspace else None
    )
    _render(done, "encrypted", as_json, quiet)


@app.command("status", epilog="Examples:\n\n  openclaw security status\n\n  openclaw security status --json")
def status_cmd(as_json: JsonOpt = False) -> None:
    """Say whether this home is encrypted, with which cipher and KDF, and which files are still plain."""
    from openclaw_cli.cli import passphrase_edge
    from openclaw_cli.security.status import home_status

    st = common.state()
    result = home_status(st.home.root, passphrase_edge.run_dir(st.env, st.home.root))
    if as_json:
        common.emit_json(result)
        return
    common.echo(f"home: {result['home']}")
    common.echo(f"encrypted: {common.human(result['encrypted'])}")
    if result["encrypted"]:
        common.echo(f"databases: {result['databaseCipher']}")
        common.echo(f"files: {result['fileCipher']}")
        common.echo(f"kdf: {common.human(result['kdf'])}")
        unlocked = result["unlockedUntil"]
        common.echo(
            f"unlocked: until {_until(unlocked)}" if unlocked else "unlocked: no (`openclaw security unlock`)"
        )
    for kind, counts in result["files"].items():
        common.echo(f"{kind}: {counts['encrypted']} encrypted, {counts['plain']} plain")
    if result["interrupted"]:
        common.warn(f"a `security {result['lastRun']}` run was cut short: run it again to finish")
    for note in result["notes"]:
        common.echo(f"note: {note}")


@app.command(
    "rekey",
    epilog="Examples:\n\n  openclaw security rekey\n\n"
    "  OPENCLAW_PASSPHRASE=old OPENCLAW_NEW_PASSPHRASE=new openclaw security rekey --quiet",
)
def rekey_cmd(quiet: common.QuietOpt = False) -> None:
    """Change the passphrase: the data key is wrapped again; no data is re-encrypted.

    The key file is replaced in one rename, so an interrupted rekey leaves the old passphrase or the new
    one working, never neither.
    """
    from openclaw_cli.cli import passphrase_edge
    from openclaw_cli.security.convert import rekey_home
    from openclaw_cli.security.passphrase import obtain

    st = common.state()
    root = st.home.root
    old = obtain(root, passphrase_edge.sources(st.env, list(st.settings.security.passphrase_sources)))
    new = passphrase_edge.new_passphrase(st.env, root)
    rekey_home(root, old, new)
    if not quiet:
        common.echo(f"passphrase changed for {root}")


@app.command(
    "decrypt",
    epilog="Examples:\n\n  openclaw security decrypt\n\n  OPENCLAW_PASSPHRASE=... openclaw security decrypt --yes --json",
)
def decrypt_cmd(yes: YesOpt = False, as_json: JsonOpt = False, quiet: common.QuietOpt = False) -> None:
    """Turn encryption off: every file back to plain, the key file removed last. Resumable like init."""
    from openclaw_cli.cli import passphrase_edge
    from openclaw_cli.security.convert import decrypt_home
    from openclaw_cli.security.passphrase import obtain

    st = common.state()
    root = st.home.root
    _no_gateway()
    if not yes:
        _confirm(f"Decrypt {root}? Everything in it will be readable by anyone who reads the disk.")
    passphrase = obtain(root, passphrase_edge.sources(st.env, list(st.settings.security.passphrase_sources)))
    done = decrypt_home(root, passphrase, workspaces=_workspaces())
    _render(done, "decrypted", as_json, quiet)


def _duration(text: str) -> float:
    """`--for`: 90s, 15m, 2h, 1d, or a bare number of minutes."""
    import re

    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*", text.lower())
    seconds = (
        float(match.group(1)) * {"s": 1, "m": 60, "": 60, "h": 3600, "d": 86400}[match.group(2)]
        if match
        else 0
    )
    if not 0 < seconds <= 7 * 86400:
        raise UsageError(f"--for {text!r} is not a duration up to 7 days", hint="e.g. --for 90s, 15m, 2h, 1d")
    return seconds


def _until(expires: object) -> str:
    from datetime import datetime

    return datetime.fromtimestamp(float(str(expires))).astimezone().isoformat(timespec="seconds")


@app.command(
    "unlock",
    epilog="Examples:\n\n  openclaw security unlock\n\n  openclaw security unlock --for 2h\n\n"
    "  OPENCLAW_PASSPHRASE=... openclaw security unlock --for 30m --json",
)
def unlock_cmd(
    for_: Annotated[
        str | None,
        typer.Option(
            "--for",
            help="How long (90s, 15m, 2h, 1d; a bare number is minutes). Default security.unlockMinutes.",
        ),
    ] = None,
    as_json: JsonOpt = False,
    quiet: common.QuietOpt = False,
) -> None:
    """Keep this home's key in a key agent for a while, so commands need no passphrase and no KDF.

    Like ssh-agent: a small process of yours holds the unwrapped data key in memory only, serves it on a
    private Unix socket ($XDG_RUNTIME_DIR/openclaw/, else the home's run/; 0600, your uid only) and forgets
    it at the expiry or at `openclaw security lock`. Running it again while unlocked extends the time.
    Anyone who can run programs as you meanwhile can read the home, as with the passphrase in the environment.
    """
    from openclaw_cli.cli import passphrase_edge
    from openclaw_cli.security.unlock import unlock_home

    st = common.state()
    ttl = _duration(for_) if for_ is not None else st.settings.security.unlock_minutes * 60
    root = st.home.root
    result = unlock_home(root, passphrase_edge.run_dir(st.env, root), ttl, passphrase_edge.agent_env(st.env))
    if as_json:
        common.emit_json(result)
    elif not quiet:
        common.echo(f"unlocked {root} until {_until(result['expires'])}")


@app.command("lock", epilog="Examples:\n\n  openclaw security lock\n\n  openclaw security lock --json")
def lock_cmd(as_json: JsonOpt = False, quiet: common.QuietOpt = False) -> None:
    """Make the key agent forget this home's key now: commands need the passphrase again."""
    from openclaw_cli.cli import passphrase_edge
    from openclaw_cli.security.unlock import lock_home

    st = common.state()
    root = st.home.root
    was = lock_home(root, passphrase_edge.run_dir(st.env, root))
    if as_json:
        common.emit_json({"home": str(root), "wasUnlocked": was})
    elif not quiet:
        common.echo(f"locked {root}" if was else f"{root} was not unlocked")
