"""`openclaw memory search`: one query or a --batch of them, rendered as lines, JSON or an --explain of each
stage. Registered by cli/memory/commands.py."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from openclaw_cli.cli import common
from openclaw_cli.cli.memory import helpers as memory_common
from openclaw_cli.cli.memory.helpers import JsonOpt, UserOpt
from openclaw_cli.core.errors import InvalidInput

SEARCH_EXAMPLES = """Examples:

  openclaw memory search 'which colour theme does he like in his editor' --explain

  openclaw memory search 咖啡 -k 3 --user lin --json

  openclaw memory search -- -leading-dash

  printf '{"query": "PR 342", "k": 3}\\n' | openclaw memory search --batch -

  openclaw memory search 'would a steak dinner suit me?' --expand --explain

  openclaw memory search 'Lisbon flights' --source memory,sessions --explain
"""
SEARCH_MODES = ("hybrid", "bm25", "vector")


def _complete_modes() -> list[str]:
    return list(SEARCH_MODES)


def _render_search(result: dict[str, Any], explain: bool, as_json: bool) -> None:
    """Print a result as SearchResult.to_dict gives it: the same from this process and from a gateway."""
    if common.render_search_head(result, as_json):
        return
    from openclaw_cli.memory.search.explain import lines as search_explain

    for d in result["results"]:
        text = d["l0"] if "location" not in d else f"{d['location']}  {_one_line(d['l0'])}"
        common.echo(f"{d['score']:.2f}  {d['id']}  [{d['category']}, {d['createdAt'][:10]}]  {text}")
        if explain:
            for line in search_explain.result_lines(d["explain"]):
                common.echo(line)
    if explain:
        _render_analysis(result)
        if "expansion" in result:
            common.echo(search_explain.expansion_line(result["expansion"]))


def _one_line(text: str, limit: int = 160) -> str:
    """A Markdown chunk on one line of the result list (--json gives it whole)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _render_analysis(result: dict[str, Any]) -> None:
    from openclaw_cli.memory.search.explain import lines as search_explain

    timing = ", ".join(f"{k} {v:.1f}ms" for k, v in result["timingsMs"].items())
    analysis = result["analysis"]
    profile = analysis["profile"]
    label = "none" if profile is None else profile["name"] + ("" if profile["tuned"] else " (not tuned)")
    floor = analysis["floor"]
    common.echo(search_explain.words_line({"words": analysis["words"], "leftOut": analysis["leftOut"]}))
    common.echo(
        f"profile: {label}; English-model weight {analysis['englishWeight']}; "
        f"floor {'-' if floor is None else floor}; {timing}"
    )


def search_cmd(
    query: Annotated[str | None, typer.Argument(help="What to look for; '-' reads stdin.")] = None,
    k: Annotated[int, typer.Option("-k", "--top", help="Number of results.")] = 10,
    user: UserOpt = None,
    category: Annotated[
        list[str] | None,
        typer.Option(
            "--category",
            "-c",
            help="Only these categories (-c a,b or repeated).",
            autocompletion=memory_common.complete_categories,
        ),
    ] = None,
    scope: Annotated[
        str | None,
        typer.Option("--scope", help="user or agent.", autocompletion=memory_common.complete_scopes),
    ] = None,
    mode: Annotated[
        str, typer.Option("--mode", help="hybrid, bm25 or vector.", autocompletion=_complete_modes)
    ] = "hybrid",
    explain: Annotated[
        bool, typer.Option("--explain", help="Show each stage's ranks, scores and timings.")
    ] = False,
    all_results: Annotated[
        bool, typer.Option("--all", help="Also show results below the relevance floor.")
    ] = False,
    record_hit: Annotated[
        bool, typer.Option("--record-hit", help="Count the results as recalled (FSRS review).")
    ] = False,
    batch: Annotated[
        str | None,
        typer.Option(
            "--batch",
            help="JSON Lines of {query, k, userId, category} ('-' = stdin); answers JSON Lines, one per query.",
        ),
    ] = None,
    expand: memory_common.ExpandOpt = False,
    source: Annotated[
        str,
        typer.Option(
            "--source",
            help="memory, sessions or memory,sessions: also search what was said in past sessions.",
            autocompletion=lambda: ["memory", "sessions", "memory,sessions"],
        ),
    ] = "memory",
    as_json: JsonOpt = False,
    local: memory_common.LocalOpt = False,
) -> None:
    """Hybrid search: keywords and meaning, in English, Chinese and other languages.

    Each result's score is in [0, 1]: its relevance (the share of the query's words it holds, combined
    with how close its meaning is, calibrated per embedder) times its FSRS retrievability (how well it is
    remembered). Nothing is returned when even the best result is below the relevance floor (0.35 by default; 0.7 when no memory holds any of its words, 0.3 for a query of four terms or more); --all shows everything.
    Read-only unless --record-hit. --batch answers one JSON line per input line, in order, loading the
    model once. When a gateway runs for this home, a single query is answered by it (its model is
    already loaded) with the same output; --local, --record-hit and --batch run in this process.
    --expand asks the model for other phrasings of a weak query, as a chat turn's memory injection does,
    and --explain or --json shows what it answered.
    --source sessions (or memory,sessions) also searches the session transcripts as `session search` does
    (--user keeps the sessions that person took part in) and ranks turns and memories in one list, each
    hit marked memory or sessions; --explain says which leg each came from and its score there.
    """
    if mode not in SEARCH_MODES:
        raise typer.BadParameter(f"unknown mode {mode!r}: use hybrid, bm25 or vector", param_hint="'--mode'")
    if (query is None) == (batch is None):
        raise typer.BadParameter("give QUERY or --batch FILE, not both or neither")
    if expand and batch is not None:
        raise typer.BadParameter("--expand takes one QUERY, not a --batch", param_hint="'--expand'")
    chosen_scopes = memory_common.scopes(scope)
    chosen_categories = memory_common.categories(category)
    sources = _sources(source, batch, expand, mode)
    text = common.read_text_arg(query) if query is not None else None
    if sources != ("memory",):
        from openclaw_cli.cli.memory import search_sources as memory_search_sources

        assert text is not None  # _sources refused --batch
        memory_search_sources.search(
            text,
            sources,
            k,
            user,
            chosen_scopes,
            chosen_categories,
            explain,
            all_results,
            record_hit,
            as_json,
            local,
        )
        return
    if text is not None and not (local or record_hit):  # --record-hit writes: it stays in-process
        remote = memory_common.through_gateway(
            "memory.search",
            {
                "query": text,
                "k": k,
                "filterUserId": user,
                "scopes": list(chosen_scopes),
                "categories": list(chosen_categories),
                "mode": mode,
                "explain": explain,
                "all": all_results,
                **({"expand": True} if expand else {}),
            },
        )
        if remote is not None:
            _render_search(remote, explain, as_json)
            return
    _search_here(
        text,
        batch,
        k,
        user,
        chosen_scopes,
        chosen_categories,
        mode,
        explain,
        all_results,
        record_hit,
        as_json,
        expand,
    )


def _sources(value: str, batch: str | None, expand: bool, mode: str) -> tuple[str, ...]:
    """--source as a tuple of legs; the options only the memory leg has are refused beside sessions."""
    from openclaw_cli.memory.search.sources import parse_sources

    try:
        sources = parse_sources(value)
    except InvalidInput as exc:
        raise typer.BadParameter(f"{exc.message}: {exc.hint}", param_hint="'--source'") from exc
    if sources != ("memory",):
        if batch is not None:
            raise typer.BadParameter(
                "--batch searches memory only: leave out --source", param_hint="'--source'"
            )
        if expand:
            raise typer.BadParameter(
                "--expand searches memory only: leave out --source", param_hint="'--source'"
            )
        if mode != "hybrid":
            raise typer.BadParameter(f"--mode {mode} applies to memory only", param_hint="'--source'")
    return sources


def _search_here(
    text: str | None,
    batch: str | None,
    k: int,
    user: str | None,
    scopes: tuple[str, ...],
    categories: tuple[str, ...],
    mode: str,
    explain: bool,
    all_results: bool,
    record_hit: bool,
    as_json: bool,
    expand: bool,
) -> None:
    """The search in this process (no gateway, --local, --record-hit, --batch or --expand)."""
    expander = memory_common.asked_expander() if expand else None  # no model: fail before loading one
    if text is not None and mode != "bm25":
        # Before the search's own imports (~0.5 s of records, pydantic, the store), which then overlap
        # the model load instead of preceding it.
        memory_common.start_model_load(one_shot=True)
    from openclaw_cli.memory.search.result import MAX_K, SearchRequest

    if not 1 <= k <= MAX_K:
        raise typer.BadParameter(f"{k} is not between 1 and {MAX_K}", param_hint="'-k' / '--top'")
    defaults = SearchRequest(
        query="",
        k=k,
        user_id=user,
        scopes=scopes,
        categories=categories,
        mode=mode,  # type: ignore[arg-type]  # checked by search_cmd
        explain=explain,
        all_results=all_results,
    )
    if batch is not None:
        _search_batch(batch, defaults, record_hit)
        return
    assert text is not None
    request = SearchRequest(**{**defaults.__dict__, "query": text})
    with memory_common.service(one_shot=True) as service:
        memory_common.announce_model_preparation(service)
        if request.mode != "bm25":
            service.preload_embedder()
        if expander is None:
            result = service.search(request)
        else:
            from openclaw_cli.memory.query_expansion import search_expanded

            result = search_expanded(service.search, request, expander)
        if record_hit:
            service.record_hits([hit.record.id for hit in result.hits])
    _render_search(result.to_dict(request), request.explain, as_json)


def _search_batch(source: str, defaults: Any, record_hit: bool) -> None:
    from openclaw_cli.memory.portability.batch import parse_search_line

    label = "stdin" if source == "-" else source
    lines = memory_common.read_lines(source, memory_common.record_cap())
    with memory_common.service(warm=True) as service:
        memory_common.announce_model_preparation(service)
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            request = parse_search_line(line, number, defaults, label)
            try:
                result = service.search(request)
            except InvalidInput as exc:
                raise InvalidInput(f"{label} line {number}: {exc.message}") from exc
            if record_hit:
                service.record_hits([hit.record.id for hit in result.hits])
            common.emit_json_line(result.to_dict(request))


def register(app: typer.Typer) -> None:
    """Add `search` to the `memory` group (cli/memory/commands.py calls this once)."""
    app.command("search", epilog=SEARCH_EXAMPLES)(search_cmd)
