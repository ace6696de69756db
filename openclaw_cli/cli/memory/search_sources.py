"""`openclaw memory search --source sessions` or `--source memory,sessions`: memories and transcript turns in
one ranking (memory/search/sources.py), through the home's gateway when one runs, else in this process.
memory_search.py hands over here for any --source but the default `memory`, whose path is unchanged."""

from __future__ import annotations

from typing import Any

import typer

from openclaw_cli.cli import common
from openclaw_cli.cli.memory import helpers as memory_common


def search(
    text: str,
    sources: tuple[str, ...],
    k: int,
    user: str | None,
    scopes: tuple[str, ...],
    categories: tuple[str, ...],
    explain: bool,
    all_results: bool,
    record_hit: bool,
    as_json: bool,
    local: bool,
) -> None:
    """The merged search: each leg as its own command runs it (`memory search --user` and `session search
    --user` keep exactly their filters), merged by search_sources."""
    from openclaw_cli.memory.search.result import MAX_K, SearchRequest, validate_request
    from openclaw_cli.memory.search.sources import search_sources

    if not 1 <= k <= MAX_K:  # as the memory-only path says it
        raise typer.BadParameter(f"{k} is not between 1 and {MAX_K}", param_hint="'-k' / '--top'")
    request = SearchRequest(
        query=text,
        k=k,
        user_id=user,
        scopes=scopes,
        categories=categories,
        explain=explain,
        all_results=all_results,
    )
    validate_request(request)  # a bad k or query is one line before either leg runs
    memory_params = {
        "query": text,
        "k": k,
        "filterUserId": user,
        "scopes": list(scopes),
        "categories": list(categories),
        "mode": "hybrid",
        "explain": explain,
        "all": all_results,
    }
    session_params = {"query": text, "k": k, "filterUserId": user, "explain": explain, "all": all_results}
    if not (local or record_hit):  # --record-hit writes: it stays in-process
        remote_memory = memory_common.through_gateway("memory.search", memory_params)
        if remote_memory is not None:
            remote_sessions = memory_common.through_gateway("session.search", session_params)
            if remote_sessions is not None:
                result = search_sources(
                    sources,
                    k,
                    lambda: remote_memory,
                    lambda: remote_sessions,
                    query=text,
                    explain=explain,
                )
                render(result, explain, as_json)
                return
    render(_here(request, sources, record_hit), explain, as_json)


def _here(request: Any, sources: tuple[str, ...], record_hit: bool) -> dict[str, Any]:
    from openclaw_cli.identity.persons import owner_id
    from openclaw_cli.memory.search.sources import memory_ids, search_sources
    from openclaw_cli.memory.transcripts.filters import viewer_filter
    from openclaw_cli.memory.transcripts.index import TranscriptIndex
    from openclaw_cli.memory.transcripts.search import TranscriptRequest

    st = common.state()
    # The operator's view narrowed to --user, exactly as `session search --user` reads it.
    where = viewer_filter(None, owner=owner_id(st.agent_settings), filter_user=request.user_id)
    turns = TranscriptRequest(request.query, request.k, where, request.explain, request.all_results)
    memory_common.start_model_load(one_shot=True)
    with memory_common.service(one_shot=True) as service:
        memory_common.announce_model_preparation(service)
        service.preload_embedder()

        def memory_leg() -> dict[str, Any]:
            payload: dict[str, Any] = service.search(request).to_dict(request)
            return payload

        def sessions_leg() -> dict[str, Any]:
            index = TranscriptIndex(st.home, st.agent, st.agent_settings.memory, service.embedder)
            try:
                payload: dict[str, Any] = index.search(turns).to_dict(turns)
                return payload
            finally:
                index.close()

        result = search_sources(
            sources, request.k, memory_leg, sessions_leg, query=request.query, explain=request.explain
        )
        if record_hit:
            service.record_hits(memory_ids(result))
    return result


def render(result: dict[str, Any], explain: bool, as_json: bool) -> None:
    """One line a hit, its source first; --explain adds the leg it came from and that leg's evidence."""
    if common.render_search_head(result, as_json):
        return
    for hit in result["results"]:
        if hit["source"] == "memory":
            where = f"{hit['id']}  [{hit['category']}, {hit['createdAt'][:10]}]"
            if "location" in hit:  # a chunk of the workspace notes: where it is
                where += f"  {hit['location']}"
        else:
            who = hit["role"] + (f" {hit['sender']}" if hit.get("sender") else "")
            where = f"{hit['sessionKey']}#{hit['index']}  [{who}, {(hit.get('ts') or '')[:10]}]"
        common.echo(f"{hit['score']:.2f}  {hit['source']:<8}  {where}  {_one_line(hit['text'])}")
        if explain:
            for line in _explain_lines(hit):
                common.echo(line)
    if explain:
        for name, leg in result["legs"].items():
            floor = "-" if leg["floor"] is None else leg["floor"]
            common.echo(f"{name} leg: {leg['found']} found, floor {floor}, weight {leg['weight']:g}")


def _explain_lines(hit: dict[str, Any]) -> list[str]:
    leg = hit["leg"]
    if hit["source"] == "memory":
        from openclaw_cli.memory.search.explain import lines as search_explain

        head = f"        from the memory leg (#{leg['rank']}): score {leg['score']:.2f}, as `memory search` gives it"
        return [head, *search_explain.result_lines(hit["explain"])]
    head = (
        f"        from the sessions leg (#{leg['rank']}): relevance {leg['score']:.2f} × turn weight "
        f"{leg['weight']:g} → {hit['score']:.2f}"
    )
    evidence = hit.get("explain") or {}
    return [head, "          " + ", ".join(f"{k} {v}" for k, v in evidence.items())]


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
