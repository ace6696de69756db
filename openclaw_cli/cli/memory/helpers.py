"""What every `openclaw memory` command module shares: the memory service of the chosen agent, the
first-embedding notice, the --scope and --category checks and completions, the --json and --user options,
and the reading of a JSON Lines input.

A module of its own so that memory.py (which registers the command modules) and the command modules
import it, and never each other.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Annotated, Any

import typer

from openclaw_cli.cli import common
from openclaw_cli.core import input_lines
from openclaw_cli.core.errors import InvalidInput, OpenclawError, StoreError
from openclaw_cli.core.input_lines import DEFAULT_MAX_TEXT_CHARS, record_line_cap

if TYPE_CHECKING:
    from openclaw_cli.memory.query_expansion import ModelExpander
    from openclaw_cli.memory.service import MemoryService

JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]
LocalOpt = Annotated[
    bool,
    typer.Option("--local", help="Run in this process even when a gateway runs for this home."),
]
UserOpt = Annotated[str | None, typer.Option("--user", "-u", help="User id the memory belongs to / filter.")]
ExpandOpt = Annotated[
    bool,
    typer.Option(
        "--expand",
        help="Let the configured model expand a weak query, as a chat turn does (needs llm.model).",
    ),
]


@contextmanager
def service(
    *, warm: bool = False, one_shot: bool = False, fast_start: bool = False
) -> Iterator[MemoryService]:
    """The memory service of the agent this command runs for, closed when the command is done."""
    from openclaw_cli.identity.persons import owner_id
    from openclaw_cli.memory.service import MemoryService

    st = common.state()
    opened = MemoryService(
        st.home,
        st.agent,
        st.agent_settings.memory,
        warm=warm,
        one_shot=one_shot,
        fast_start=fast_start,
        owner=owner_id(st.agent_settings),
    )
    try:
        yield opened
    finally:
        opened.close()


def only_on_files(command: str) -> None:
    """Refuse a command that works on the SQLite memory files when memory.backend is postgres."""
    if common.state().agent_settings.memory.backend == "postgres":
        raise StoreError(
            f"`openclaw memory {command}` works on the SQLite memory files; memory.backend is postgres",
            hint="back up, restore and repair the server's data with its own tools (pg_dump, pg_restore, "
            "a replica); `memory export` writes a portable copy of the memories",
        )


def through_gateway(method: str, params: dict[str, Any]) -> Any | None:
    """The payload of `method` from this home's running gateway, None when none serves it (then the
    command runs in-process; -v says why in one line)."""
    from openclaw_cli.gateway.client.reads import ask_gateway, home_token

    st = common.state()
    token = home_token(st.home, st.env.get("OPENCLAW_GATEWAY_TOKEN"))
    answer = ask_gateway(st.home, token, method, {**params, "agentId": st.agent})
    if common.is_verbose() and (answer.answered or answer.reason):
        said = (
            f"through the gateway at {answer.via}" if answer.answered else f"in this process: {answer.reason}"
        )
        typer.echo(f"openclaw: {method} {said}", err=True)
    return answer.payload if answer.answered else None


def start_bulk_loads(source: str, count: int | None = None) -> bool:
    """For a command about to embed the lines of `source` (a file, or '-' for stdin): start loading what
    only bulk work needs, before the settings are read (embedding/loader.py load_bulk_ahead), then the
    models (start_model_load). Nothing for an empty source or one read_lines will refuse, so that its
    answer or its one-line error comes at once, not after a model load: False then."""
    from openclaw_cli.memory.embedding.loader import load_bulk_ahead

    count = _line_count(source) if count is None else count
    if count == 0:
        return False
    load_bulk_ahead(count)
    start_model_load(one_shot=False)
    return True


def _line_count(source: str) -> int | None:
    """The lines of a regular file; None for stdin or a pipe (`--batch <(jq ...)`), whose lines are not
    known before they end and which only read_lines may read; 0 for what read_lines will refuse."""
    if source == "-":
        return None
    count, last = 0, b"\n"
    # A line past the cap is refused by read_lines: seen here, no model loads for it. The home's own cap
    # (which reads the settings) is asked only of a line longer than the default one.
    cap, line, settled = record_line_cap(DEFAULT_MAX_TEXT_CHARS), 0, False
    try:
        mode = os.stat(source).st_mode
        if not stat.S_ISREG(mode):
            return 0 if stat.S_ISDIR(mode) else None
        with open(source, "rb") as file:
            for chunk in iter(lambda: file.read(1 << 20), b""):
                count, last = count + chunk.count(b"\n"), chunk[-1:]
                end = chunk.rfind(b"\n")
                line = len(chunk) - end - 1 if end >= 0 else line + len(chunk)
                if line > cap and not settled:
                    cap, settled = record_cap(), True
                if line > cap:
                    return 0
    except OSError:
        return 0
    return count + (last != b"\n")  # a last line without its newline counts too


def start_model_load(*, one_shot: bool) -> None:
    """Start loading the packaged embedding models now, as soon as the settings are read: a command that
    embeds soon (one search) then imports its own modules while the sessions build. Not when the models
    must first be converted (the service says so, then converts) or come from elsewhere. An error here
    (settings that do not validate, a missing package) is left for the command to meet where it did
    before, so that the command's own checks still come first."""
    from openclaw_cli.memory.embedding.deferred import model_needs_preparing
    from openclaw_cli.memory.embedding.loader import model_cache_dir, preload

    st = common.state()
    with suppress(OpenclawError):
        settings = st.agent_settings.memory.embedding
        cache = model_cache_dir(settings, st.home.model_cache_dir)
        if settings.provider == "local" and not model_needs_preparing(settings, cache):
            preload(settings, cache_dir=cache, one_shot=one_shot)


def announce_model_preparation(service: MemoryService) -> None:
    """Say why the first embedding in a new home pauses, when someone is watching a terminal."""
    if sys.stderr.isatty() and service.model_needs_preparing():
        typer.echo(
            "openclaw: preparing the local embedding model (once per home, a few seconds)...", err=True
        )


def scopes(value: str | None) -> tuple[str, ...]:
    """The --scope filter: nothing (every scope) or one of user, agent."""
    if value is None:
        return ()
    if value not in ("user", "agent"):
        raise typer.BadParameter(f"unknown scope {value!r}: use user or agent", param_hint="'--scope'")
    return (value,)


def complete_categories() -> list[str]:
    from openclaw_cli.memory.store.records import CATEGORIES

    return list(CATEGORIES)


def complete_scopes() -> list[str]:
    return ["user", "agent"]


CategoryOpt = Annotated[
    str | None,
    typer.Option(
        "--category",
        "-c",
        help="profile, preference, event, case, lesson, insight or note.",
        autocompletion=complete_categories,
    ),
]


def record_cap() -> int:
    """The longest line a JSON Lines record of this home's memories can take (input_lines.py)."""
    return record_line_cap(common.state().agent_settings.memory.max_text_chars)


def read_lines(source: str, cap: int) -> list[str]:
    """The lines of `source` ('-': stdin), each refused as soon as it passes `cap` bytes.

    JSON Lines end at "\n" only: str.splitlines() also splits at U+2028, U+0085 and others, which
    json.dumps(ensure_ascii=False) leaves raw inside strings, so it would cut valid records in two."""
    if source == "-":
        return _decoded(input_lines.lines(sys.stdin.buffer, cap, "standard input"), "standard input")
    try:
        with open(source, "rb") as handle:
            return _decoded(input_lines.lines(handle, cap, source), source)
    except FileNotFoundError as exc:
        raise InvalidInput(f"no such file: {source}") from exc
    except IsADirectoryError as exc:
        raise InvalidInput(
            f"{source} is a directory", hint="give a JSON Lines file, or '-' for stdin"
        ) from exc
    except OSError as exc:
        raise InvalidInput(f"cannot read {source} ({exc.strerror})") from exc


def _decoded(raw: Iterator[bytes], name: str) -> list[str]:
    return [
        input_lines.decoded(line, name, number).removesuffix("\r") for number, line in enumerate(raw, start=1)
    ]


def categories(values: list[str] | None) -> tuple[str, ...]:
    """-c a,b and -c a -c b both work; an unknown category is a usage error."""
    if values is None:
        return ()  # without importing the record model (pydantic): a search through the gateway needs none
    from openclaw_cli.memory.store.records import CATEGORIES

    chosen = [part.strip() for value in values or () for part in value.split(",") if part.strip()]
    if values and not chosen:  # -c "" or -c ",": a filter that names nothing would silently match all
        raise typer.BadParameter(f"no category given: use {', '.join(CATEGORIES)}", param_hint="'--category'")
    unknown = [c for c in chosen if c not in CATEGORIES]
    if unknown:
        raise typer.BadParameter(
            f"unknown category {unknown[0]!r}: use {', '.join(CATEGORIES)}", param_hint="'--category'"
        )
    return tuple(dict.fromkeys(chosen))


def one_category(value: str) -> str:
    """Commands that take a single category: unknown ones are usage errors, as in `memory search`."""
    chosen = categories([value])
    if len(chosen) != 1:
        raise typer.BadParameter(f"give one category, not {value!r}", param_hint="'--category'")
    return chosen[0]


def asked_expander() -> ModelExpander:
    """The model that --expand asks; a one-line error when no model is configured."""
    from openclaw_cli.memory.query_expansion import asked_expander as for_settings

    return for_settings(common.state().agent_settings)
