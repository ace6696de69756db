"""The `openclaw` root command: global options and the command groups."""

from __future__ import annotations

import errno
import sys
from pathlib import Path
from typing import Annotated

import typer

from openclaw_cli import __version__
from openclaw_cli.cli import common, shell
from openclaw_cli.cli.home.doctor import EPILOG as DOCTOR_EPILOG
from openclaw_cli.cli.home.doctor import doctor_cmd
from openclaw_cli.cli.lazy import LazyRootGroup
from openclaw_cli.core.errors import OpenclawError, UsageError
from openclaw_cli.core.fsutil import DirectoryError

# Errors of the machine, not of openclaw: reported in one line (exit 1) rather than as internal errors.
ENVIRONMENT_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT})

app = typer.Typer(
    name="openclaw",
    help="A personal AI assistant's memory: sessions (short-term) and long-term memory, on your machine. "
    "--home, --agent and -v may also follow the command.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=LazyRootGroup,  # config, session and memory are imported when used (lazy.LAZY_GROUPS)
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog="Examples:\n\n  openclaw session list\n\n  openclaw --home /tmp/oc config show --json\n\n"
    "  openclaw memory search coffee --home /tmp/oc --agent work",
)
LazyRootGroup.owner = app
app.command("doctor", epilog=DOCTOR_EPILOG)(doctor_cmd)
app.command("completion", epilog=shell.COMPLETION_EPILOG)(shell.completion_cmd)
app.command("man", epilog=shell.MAN_EPILOG)(shell.man_cmd)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"openclaw {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    home: Annotated[
        Path | None,
        typer.Option(
            "--home",
            envvar="OPENCLAW_HOME",
            help="State directory (default ~/.openclaw).",
            show_default=False,
        ),
    ] = None,
    agent: Annotated[str, typer.Option("--agent", envvar="OPENCLAW_AGENT", help="Agent id.")] = "main",
    verbose: Annotated[
        bool, typer.Option("-v", "--verbose", help="Show tracebacks and debug detail.")
    ] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """openclaw: sessions and long-term memory for a personal AI assistant."""
    common.set_state(home, agent, verbose)


def run() -> None:
    """Console entry point: runs the app and turns domain errors into one line and an exit code."""
    try:
        check_argv(sys.argv[1:])
        code = app(prog_name="openclaw", standalone_mode=False)
    except DirectoryError as error:
        common.report_error(common.home_problem(error))
        sys.exit(error.exit_code)
    except OpenclawError as error:
        common.report_error(error)
        sys.exit(error.exit_code)
    except typer.Exit as done:
        sys.exit(done.exit_code)
    except typer.Abort:
        typer.echo("openclaw: aborted", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        typer.echo("openclaw: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(141)
    except OSError as exc:
        if exc.errno in ENVIRONMENT_ERRNOS:
            _report_environment(exc)
        _usage_or_internal(exc)
    except Exception as exc:  # noqa: BLE001 - the last line of defence against tracebacks
        _usage_or_internal(exc)
    # Without standalone mode, click returns a command's `typer.Exit(code)` instead of exiting.
    sys.exit(code if isinstance(code, int) else 0)


def _report_environment(exc: OSError) -> None:
    """A write refused by the system (permissions, a read-only or full disk): the user's to fix, not a bug."""
    where = f"{exc.filename}: " if exc.filename else ""
    typer.echo(
        f"openclaw: error: {where}{exc.strerror} "
        "(check the permissions and free space of the home: --home / OPENCLAW_HOME)",
        err=True,
    )
    sys.exit(1)


def check_argv(args: list[str]) -> None:
    """Refuse arguments that are not UTF-8 before any command runs.

    Python decodes such bytes to lone surrogates (surrogateescape), which fail only later, when they are
    written to a file or a database, possibly after part of the change was made.
    """
    for position, arg in enumerate(args, start=1):
        bad = next((i for i, ch in enumerate(arg) if "\udc80" <= ch <= "\udcff"), None)
        if bad is not None:
            byte = ord(arg[bad]) - 0xDC00
            raise UsageError(
                f"argument {position} is not valid UTF-8 (byte 0x{byte:02x} at character {bad + 1})",
                hint="pass text as UTF-8, or convert it with iconv and give it on standard input with '-'",
            )


def _usage_or_internal(exc: Exception) -> None:
    # Typer vendors click, so its exceptions are recognised by shape rather than by class.
    exit_code = getattr(exc, "exit_code", None)
    if type(exc).__name__ == "NoArgsIsHelpError":
        exc.show()  # type: ignore[attr-defined]
        sys.exit(2)
    if isinstance(exit_code, int) and hasattr(exc, "format_message"):
        ctx = getattr(exc, "ctx", None)
        where = f"`{ctx.command_path} --help`" if ctx is not None else "`openclaw --help`"
        typer.echo(f"openclaw: error: {exc.format_message()} (see {where})", err=True)
        sys.exit(exit_code)
    if type(exc).__module__ == "apsw" and type(exc).__name__ in ("CorruptError", "NotADBError"):
        # Damage found after the database opened (a page read mid-query): the file is left as it is.
        typer.echo(
            f"openclaw: error: a memory database is damaged ({exc}); run `openclaw memory recover --yes` "
            "(`openclaw doctor` names the file)",
            err=True,
        )
        sys.exit(1)
    if common.is_verbose():
        raise exc
    name = type(exc).__name__
    typer.echo(f"openclaw: internal error: {name}: {exc} (rerun with --verbose for details)", err=True)
    sys.exit(70)
