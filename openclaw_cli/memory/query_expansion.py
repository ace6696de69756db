"""Asking the configured model to expand a weak query (search/legs/expansion.py says when and how it is used).

One short call: no retries, a short timeout (`memory.queryExpansion.timeoutSeconds`), MAX_TOKENS of
reply, temperature 0. Only the query goes to the model, the user's own words, never a memory.

Answers are kept in an in-process LRU keyed by model, address and query (CACHE_SIZE entries, a few hundred
bytes each), so the same question asked again, in the same chat or by the memory_search tool in the same
turn, makes no second call. An answer of no phrasings is kept too. A failure is not kept: the next turn
may try again. No disk cache: a question rarely comes back word for word in a later process, the gateway
keeps its process for days, and a file of the user's questions would be one more copy of their words to
purge.

A failure of any kind (the model unreachable, a timeout, an HTTP error, a reply that is not the JSON
asked for, an empty reply) is one warning line in the log, and the search goes on with the local result.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import ConfigError, OpenclawError
from openclaw_cli.memory.search.legs import expansion

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.llm.usage import Usage
    from openclaw_cli.memory.search.result import SearchHit, SearchRequest, SearchResult

log = logging.getLogger("openclaw.memory")

CACHE_SIZE = 1024


class AnswerCache:
    """The kept answers, least recently used out first; thread-safe (turns of several sessions run on
    their own threads)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[tuple[str, str | None, str], tuple[str, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str | None, str]) -> tuple[str, ...] | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[str, str | None, str], value: tuple[str, ...]) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


SHARED = AnswerCache(CACHE_SIZE)  # every expander of the process: keyed by model and address


@dataclass(frozen=True)
class Expansion:
    """One expansion: the phrasings (empty: none), why the model gave none when it failed, and the tokens
    the call used (None when the answer was kept from before or the provider said nothing)."""

    phrasings: tuple[str, ...]
    failure: str | None = None
    usage: Usage | None = None


@dataclass(frozen=True)
class ModelExpander:
    """Expands a query with one model; callable as `expander(query) -> phrasings` (empty: none)."""

    model: str
    api_base: str | None
    timeout: float
    answers: AnswerCache = field(default_factory=lambda: SHARED)
    api_key: str | None = field(default=None, repr=False)  # never in a log line or a repr

    def __call__(self, query: str) -> tuple[str, ...]:
        return self.expand(query).phrasings

    def expand(self, query: str) -> Expansion:
        """The phrasings for `query`, why the model could not give them, and what the call used."""
        key = (self.model, self.api_base, query)
        cached = self.answers.get(key)
        if cached is not None:
            return Expansion(cached)
        try:
            phrasings, used = self._ask(query)
        except (OpenclawError, expansion.InvalidExpansion) as exc:
            reason = exc.message if isinstance(exc, OpenclawError) else str(exc)
            log.warning("query expansion with %s failed, the local result is used: %s", self.model, reason)
            return Expansion((), failure=reason)
        self.answers.put(key, phrasings)
        return Expansion(phrasings, usage=used)

    def _ask(self, query: str) -> tuple[tuple[str, ...], Usage | None]:
        from openclaw_cli.llm.usage import complete_counted

        reply, used = complete_counted(
            self.model,
            expansion.messages(query),
            self.api_base,
            api_key=self.api_key,
            max_retries=0,
            timeout=self.timeout,
            max_tokens=expansion.MAX_TOKENS,
            temperature=0,
        )
        return expansion.parse_reply(reply), used


def expander_for(settings: Settings, *, asked: bool = False) -> ModelExpander | None:
    """The expander the settings configure: the extraction model (the cheaper one, else the chat model),
    unless `memory.queryExpansion.enabled` is off and the caller was not `asked` for it explicitly (the
    CLI's --expand); None without a model."""
    config = settings.memory.query_expansion
    model = settings.llm.extract_model or settings.llm.model
    if not (config.enabled or asked) or model is None:
        return None
    return ModelExpander(model, settings.llm.api_base, config.timeout_seconds, api_key=settings.llm.api_key)


def asked_expander(settings: Settings) -> ModelExpander:
    """The model an explicit --expand asks (whether or not expansion is on for chat turns); a one-line
    error when no model is configured."""
    expander = expander_for(settings, asked=True)
    if expander is None:
        raise ConfigError(
            "--expand needs a model and none is configured",
            hint="set one with `openclaw config set llm.model openai/gpt-4o-mini`",
        )
    return expander


def clear_cache() -> None:
    """Forget every kept answer."""
    SHARED.clear()


def search_expanded(
    search: Callable[[SearchRequest], SearchResult], request: SearchRequest, expander: ModelExpander
) -> SearchResult:
    """`request` searched as `memory search --expand` does: the local result, completed as a chat turn's
    injection completes it (inject.recall) when it is weak, with the same filters for every phrasing. The
    result says whether the model was asked and what it answered (SearchResult.expansion); a model that
    fails leaves the local result and a warning."""
    result = search(request)
    if not expansion.wanted(request.query, result.hits):
        result.expansion = {"model": expander.model, "asked": False, "phrasings": []}
        return result
    answered = expander.expand(request.query)
    phrasings = expansion.usable(request.query, answered.phrasings)
    result.expansion = {"model": expander.model, "asked": True, "phrasings": phrasings}
    if answered.failure is not None:
        reason = answered.failure
        result.warnings.append(f"the model could not expand the query ({reason}): local results only")
    if not phrasings:
        return result

    def hits(query: str, k: int, everything: bool) -> list[SearchHit]:
        wanted = everything or request.all_results
        return search(
            replace(request, query=query, k=k, all_results=wanted, explain=request.explain and not everything)
        ).hits

    result.hits = expansion.complete(request.query, request.k, result.hits, phrasings, hits)
    return result
