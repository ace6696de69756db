"""`openclaw session search`: what was said in past sessions, with the memory search's engine. Registered
by cli/session/commands.py; the work is memory/transcripts/index.py's."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer

from openclaw_cli.cli import common
from openclaw_cli.cli.memory.helpers import LocalOpt

if TYPE_CHECKING:
    from openclaw_cli.memory.transcripts.index import TranscriptIndex

EXAMPLES = """Examples:

  openclaw session search 'Lisbon trip'

  openclaw session search 'what did we decide about the flights' --since 2026-03-01 --until 2026-03-07

  openclaw session search 上海出差 --user alice --role user -k 3 --json

  openclaw session search 'dentist' --session agent:main:telegram:default:direct:123 --explain
"""


def search_cmd(
    query: Annotated[str, typer.Argument(help="What to look for; '-' reads stdin.", show_default=False)],
    k: Annotated[int, typer.Option("-k", "--top", help="Number of results.")] = 10,
    session: Annotated[
        list[str] | None,
        typer.Option("--session", "-s", help="Only this session (key or id; repeat for several)."),
    ] = None,
    user: Annotated[
        str | None, typer.Option("--user", "-u", help="Only sessions this person took part in.")
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Said on or after this UTC date (YYYY-MM-DD) or time.")
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", help="Said up to this UTC date (inclusive) or before this time.")
    ] = None,
    role: Annotated[str | None, typer.Option("--role", help="Only user or assistant messages.")] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show each result's keyword and vector evidence.")
    ] = False,
    all_results: Annotated[
        bool, typer.Option("--all", help="Also show results below the relevance floor.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    local: LocalOpt = False,
) -> None:
    """Search what was said in this agent's sessions, archived ones included, and their summaries.

    The same hybrid engine as `openclaw memory search` (keywords and meaning, English and Chinese, a score in
    [0, 1] and a relevance floor: nothing is returned when nothing is relevant enough; --all shows weaker
    matches). Each hit shows its session, the message index, role, sender and time, with one message of
    context on each side; a summary hit is marked as such. --user keeps the sessions a person took part
    in. When a gateway runs for this home it answers (its model is already loaded) with the same output;
    --local runs in this process.
    """
    from openclaw_cli.memory.transcripts.filters import parse_bound, viewer_filter

    text = common.read_text_arg(query)
    bounds = (
        None if since is None else parse_bound(since, end=False),
        None if until is None else parse_bound(until, end=True),
    )
    where = viewer_filter(
        None, owner="", filter_user=user, sessions=session or (), role=role, since=bounds[0], until=bounds[1]
    )
    params = {
        "query": text,
        "k": k,
        "sessions": list(session or ()),
        "filterUserId": user,
        "role": role,
        "since": bounds[0],
        "until": bounds[1],
        "explain": explain,
        "all": all_results,
    }
    if not local:
        from openclaw_cli.cli.memory.helpers import through_gateway

        remote = through_gateway("session.search", params)
        if remote is not None:
            render(remote, explain, as_json)
            return
    from openclaw_cli.memory.transcripts.search import TranscriptRequest

    request = TranscriptRequest(text, k, where, explain, all_results)
    with transcript_index() as index:
        result = index.search(request)
    render(result.to_dict(request), explain, as_json)


@contextmanager
def transcript_index() -> Iterator[TranscriptIndex]:
    """This agent's transcript index, with the memory service's embedder loaded for one search."""
    from openclaw_cli.identity.persons import owner_id
    from openclaw_cli.memory.service import MemoryService
    from openclaw_cli.memory.transcripts.index import TranscriptIndex

    st = common.state()
    owner = owner_id(st.agent_settings)
    service = MemoryService(st.home, st.agent, st.agent_settings.memory, one_shot=True, owner=owner)
    service.preload_embedder()  # the models load while the index catches up and its signs are read
    index = TranscriptIndex(st.home, st.agent, st.agent_settings.memory, service.embedder)
    try:
        yield index
    finally:
        index.close()
        service.close()


def render(result: dict[str, Any], explain: bool, as_json: bool) -> None:
    """Print a result as TranscriptResult.to_dict gives it: the same from this process and from a gateway."""
    if common.render_search_head(result, as_json):
        return
    for hit in result["results"]:
        common.echo(f"{hit['score']:.2f}  {hit['sessionKey']}  {hit['sessionId']}")
        context = hit["context"]
        if context["before"] is not None:
            common.echo(f"        {_line(context['before'])}")
        common.echo(f"      > {_line(hit)}")
        if context["after"] is not None:
            common.echo(f"        {_line(context['after'])}")
        if explain:
            common.echo("        " + ", ".join(f"{k} {v}" for k, v in hit["explain"].items()))
    if explain:
        analysis = result["analysis"]
        timing = ", ".join(f"{k} {v:.1f}ms" for k, v in result["timingsMs"].items())
        vectors = result.get("vectors")  # absent from a gateway of an older version
        embedded = (
            ""
            if vectors is None
            else f"; {vectors['embeddedNow']} turns embedded by this search, "
            f"{vectors['withoutVector']} without a vector (found by their words only)"
        )
        common.echo(f"terms: {' '.join(analysis['terms'])}; floor {analysis['floor']}; {timing}{embedded}")


def _line(turn: dict[str, Any], limit: int = 200) -> str:
    flat = " ".join(str(turn["text"]).split())
    flat = flat if len(flat) <= limit else flat[: limit - 1] + "…"
    if turn["kind"] == "summary":
        return f"[summary of 0-{turn['index']}] {flat}"
    who = f" ({turn['sender']})" if turn.get("sender") else ""
    return f"[{turn['index']}] {(turn['ts'] or '')[:16]} {turn['role']}{who}: {flat}"


def register(app: typer.Typer) -> None:
    """Add `search` to the `session` group (cli/session/commands.py calls this once)."""
    app.command("search", epilog=EXAMPLES)(search_cmd)
