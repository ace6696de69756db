"""The gateway's memory reads that `openclaw memory search` and `memory inject` send when it runs: the search
request of the params, the search itself with the memory lock, and the model that `expand: true` asks."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.gateway.rpc import protocol as p

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.memory.query_expansion import ModelExpander
    from openclaw_cli.memory.search.result import SearchRequest, SearchResult
    from openclaw_cli.memory.service import MemoryService


def operator_request(params: dict[str, Any], query: str, k: int) -> SearchRequest:
    """`filterUserId` keeps one person's memories, as the CLI's --user does; `categories`, `scopes`, `mode`,
    `explain`, `all`."""
    from openclaw_cli.memory.search.result import SearchRequest
    from openclaw_cli.memory.store.records import CATEGORIES

    mode = p.param_str(params, "mode", required=False, max_length=16) or "hybrid"
    if mode not in ("hybrid", "bm25", "vector"):
        raise InvalidInput(f"unknown mode {mode!r}", hint="use hybrid, bm25 or vector")
    return SearchRequest(
        query=query,
        k=k,
        user_id=p.param_str(params, "filterUserId", required=False, max_length=256),
        scopes=names(params, "scopes", ("user", "agent")),
        categories=names(params, "categories", CATEGORIES),
        mode=mode,  # type: ignore[arg-type]  # checked above
        explain=p.param_bool(params, "explain"),
        all_results=p.param_bool(params, "all"),
    )


def expander(params: dict[str, Any], settings: Settings) -> ModelExpander | None:
    """The model `expand: true` asks (the CLI's --expand), None when not asked; an error without a model."""
    if not p.param_bool(params, "expand"):
        return None
    from openclaw_cli.memory.query_expansion import asked_expander

    return asked_expander(settings)


def searched(
    service: MemoryService, lock: threading.Lock, request: SearchRequest, model: ModelExpander | None
) -> SearchResult:
    """The request's result, with the memory lock held for each search and never while the model answers."""

    def search(asked: SearchRequest) -> SearchResult:
        with lock:
            return service.search(asked)

    if model is None:
        return search(request)
    from openclaw_cli.memory.query_expansion import search_expanded

    return search_expanded(search, request, model)


def names(params: dict[str, Any], name: str, known: Any) -> tuple[str, ...]:
    value = params.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v in known for v in value):
        raise InvalidInput(f'parameter "{name}" must be a list of {", ".join(known)}')
    return tuple(value)
