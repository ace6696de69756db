"""One search across memories and session transcripts (seed 003 §4.2: memorySearch sources
["memory", "sessions"]): both legs' hits in ONE ranking on ONE relevance scale, each saying where it came from.

The two scales are already close. The transcript search (transcripts/search.py) is the memory search's
evidence model over turns: the same query analysis, the same keyword relevance (the specificity-weighted share
of the query's terms held), the same per-embedder calibration of similarity, the same fusion and floors. What
differs: a memory's score is its relevance times its FSRS retrievability and its hand-set stages (who it is
about, answer type), while a turn's is its relevance alone, lent in part to the turns around it (a question's
answer rarely repeats its words). A turn is raw conversation, longer and noisier than a distilled memory,
so the same relevance could be weaker evidence of an answer: TURN_WEIGHT scales a turn's relevance onto the
memories' scale, tuned on one half of a mixed eval and reported on the other (tests/sources_eval.py,
benchmarks/test_bench_sources.py). The tuning half chose 1.0 among 0.50-1.50: on that eval the two scales
already mean the same, and a turn competes with a memory on its relevance as is. What the eval cannot show:
decay (every memory there is a day old, recall ~1; an old memory's score falls, a turn's never does),
group chats, or many people: its transcript questions are 33 (15 held out), all about one person.

Each leg is asked for `k` and answers with its own floor (nothing relevant enough: nothing from that leg);
the merge works on the legs' JSON payloads (SearchResult.to_dict, TranscriptResult.to_dict), so a gateway's
answers and this process's merge alike, and every caller (the CLI, the agent's tool, the MCP server) shares it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from openclaw_cli.core.errors import InvalidInput

SOURCES = ("memory", "sessions")
DEFAULT_SOURCES: tuple[str, ...] = ("memory",)
# A turn's relevance on the memories' scale: chosen on the tuning half of the mixed eval (see the module doc).
TURN_WEIGHT = 1.0
_ORDER = {name: rank for rank, name in enumerate(SOURCES)}  # among equal scores, a memory first

Leg = Callable[[], Mapping[str, Any]]


def parse_sources(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """`memory`, `sessions`, `memory,sessions` (or a list of them) as a tuple without repeats, in the
    order given; None is the default (memory). Anything else is InvalidInput."""
    if value is None:
        return DEFAULT_SOURCES
    parts = value.split(",") if isinstance(value, str) else list(value)
    names = [part.strip() if isinstance(part, str) else part for part in parts]
    unknown = [name for name in names if name not in SOURCES]
    if unknown or not names:
        shown = ", ".join(repr(name) for name in unknown) if unknown else "nothing"
        raise InvalidInput(f"unknown source {shown}", hint="use memory, sessions or memory,sessions")
    return tuple(dict.fromkeys(names))


def search_sources(
    sources: Iterable[str],
    k: int,
    memory_leg: Leg | None,
    sessions_leg: Leg | None,
    *,
    query: str = "",
    explain: bool = False,
    turn_weight: float = TURN_WEIGHT,
) -> dict[str, Any]:
    """Run the legs `sources` names (each a callable answering its search's payload, already restricted
    to what the person may see) and merge them: see `merge`. A leg that is chosen but not given (None)
    answers nothing, with a warning."""
    chosen = parse_sources(list(sources))
    payloads: dict[str, Mapping[str, Any]] = {}
    for name, leg in (("memory", memory_leg), ("sessions", sessions_leg)):
        if name not in chosen:
            continue
        if leg is None:
            payloads[name] = {"results": [], "warnings": [f"no {name} to search here"]}
        else:
            payloads[name] = leg()
    return merge(chosen, payloads, k, query=query, explain=explain, turn_weight=turn_weight)


def merge(
    sources: tuple[str, ...],
    payloads: Mapping[str, Mapping[str, Any]],
    k: int,
    *,
    query: str = "",
    explain: bool = False,
    turn_weight: float = TURN_WEIGHT,
) -> dict[str, Any]:
    """The legs' payloads as one result: `results` best first by `score` (a memory's own; a turn's
    relevance x `turn_weight`), the top `k`, each with `source` and its kind's fields; `legs` says what
    each leg found and its floor; with `explain` each hit carries `leg` (its name, rank and score there)."""
    hits: list[dict[str, Any]] = []
    for name in sources:
        payload = payloads.get(name, {})
        weight = 1.0 if name == "memory" else turn_weight
        for rank, hit in enumerate(payload.get("results", []), 1):
            hits.append(_hit(name, hit, rank, weight, explain))
    hits.sort(key=lambda hit: (-hit["score"], _ORDER[hit["source"]]))
    several = len(sources) > 1
    warnings = [
        f"{name}: {message}" if several else str(message)
        for name in sources
        for message in payloads.get(name, {}).get("warnings", [])
    ]
    return {
        "query": query,
        "k": k,
        "sources": list(sources),
        "results": hits[:k],
        "legs": {name: _leg_summary(payloads.get(name, {}), name, turn_weight) for name in sources},
        "warnings": warnings,
    }


def _hit(source: str, hit: Mapping[str, Any], rank: int, weight: float, explain: bool) -> dict[str, Any]:
    leg_score = float(hit.get("score", 0.0))
    out: dict[str, Any] = {"source": source, **hit, "score": round(min(1.0, leg_score * weight), 4)}
    if source == "memory":
        out.setdefault("text", hit.get("l0"))
    if explain:
        out["leg"] = {"name": source, "rank": rank, "score": round(leg_score, 4), "weight": weight}
    return out


def _leg_summary(payload: Mapping[str, Any], name: str, turn_weight: float) -> dict[str, Any]:
    analysis = payload.get("analysis") or {}
    return {
        "found": len(payload.get("results", [])),
        "floor": analysis.get("floor"),
        "weight": 1.0 if name == "memory" else turn_weight,
        "timingsMs": payload.get("timingsMs", {}),
    }


def memory_ids(result: Mapping[str, Any]) -> list[str]:
    """The ids of the memories among a merged result's hits (what an FSRS review records)."""
    return [hit["id"] for hit in result["results"] if hit["source"] == "memory"]
