"""Query expansion by a model: when to ask, what to ask, how to read the answer, how to use it (issue 24).

A paraphrase shares no word with its memory ("what look do I want for my code editor?" against "User
prefers dark mode"), and the local search ranks it low or not at all. A configured model knows the words a
memory would use. It is asked once, for a few short alternative phrasings of the query in the query's own
language(s), as JSON; each phrasing is searched as the query was (same person, same scopes), and what they
find joins what the query found (`fuse`). The calling side (memory/query_expansion.py) makes the call,
keeps the answers and says when it failed; this module has no model in it.

When it is asked (`wanted`): only when the local search is weak, so a turn whose memory is found by its
own words pays nothing. The gate is the word-neighbours stage's (search/legs/neighbours.py): no hit has keyword
evidence of WEAK_KEYWORDS or a relevance of FOUND (none at all when nothing passed the floor), and the
query is a sentence (SENTENCE_TERMS content words) or a question about the user. On top of that the query must read as
words (search/legs/vocabulary.py): "asdf qwerty", "xkcd 927" and 嗯嗯 are never sent, and a short phrase
naming nobody ("purple monkey dishwasher") is not either. A message over MAX_QUERY_CHARS is talk, not a
question about a memory, and is not sent.

Nonsense and wrong answers: the prompt lets the model answer with no phrasings for a query that means
nothing. Whatever it answers, the floors still hold: the expansion is used only for a query that passes
`wanted` (so never for a query the project's nonsense signal rejects), each phrasing is searched with the
relevance floor like any query, and what a phrasing finds is kept only when the query's own search ranks
it among its best AGREE (whatever its floor): the model may lift a memory the query's meaning points
at, not choose one. A hit found through a phrasing counts EXPANSION_WEIGHT of its score, so the user's
own words win at equal strength.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence, Set
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.search.legs.neighbours import WEAK_KEYWORDS
from openclaw_cli.memory.search.legs.vocabulary import content_words, reads_as_words
from openclaw_cli.memory.search.profiles import SENTENCE_TERMS
from openclaw_cli.memory.text.subject import refers_to_user

if TYPE_CHECKING:
    from openclaw_cli.memory.search.result import SearchHit

MAX_PHRASINGS = 3  # phrasings searched per query: each is one more search (mine + the agent's)
MAX_PHRASING_CHARS = 200
MAX_QUERY_CHARS = 500  # a longer message is talk, not a question about a memory
MAX_TOKENS = 120  # the reply: three short phrasings in JSON
# A hit this relevant was found by the query's own words or meaning: the model is not asked. Set on the
# eval's tuning half (a chat turn's recall of each question, top 20): with 0.5 the gate sends 8 of 194
# questions and reaches 6 of the 41 whose answer is not in the top 3; with 0.7, 25 and 13 (more than half
# of the questions sent are such misses); with 0.8, 30 and 16; with no relevance test, 51 and 23. Held-out
# at 0.7: 31 of 201 sent, 9 of 35 misses reached. Wrong memories in the other language are lifted by the
# cross-language bonus to 0.5-0.66 over three of the paraphrase set's misses (我平时驾驶什么车).
FOUND = 0.7
# A hit found only through a phrasing counts this share of its score: the model's guess is weaker
# evidence than the user's own words.
EXPANSION_WEIGHT = 0.8
# A phrasing may only bring in a memory that the query's own search (floor aside) ranks among its best
# AGREE: a model answering about something else must not choose what is injected. On the paraphrase set's
# gated questions the answer ranks 1st-32nd in the query's own list but for one (89th), and a wrong
# model's memory (the next question's answer) is outside the best 50 for all but one of 20.
AGREE = 50

SYSTEM_PROMPT = (
    "You help a personal assistant search its memories about the user. Memories are short statements "
    'such as "User plays the violin" or "用户对花生过敏". Given the user\'s message, write up to '
    f"{MAX_PHRASINGS} short alternative phrasings of it, using the words a stored memory answering it "
    "would use, in the same language(s) as the message. If the message does not mean anything, or asks "
    'nothing a memory could answer, give no phrasings. Answer with JSON only: {"phrasings": ["..."]} '
    'or {"phrasings": []}.'
)

_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


class InvalidExpansion(ValueError):
    """The model's reply is not the JSON asked for."""


def wanted(query: str, hits: Sequence[SearchHit]) -> bool:
    """Whether the model may be asked to expand `query`, whose local search found `hits` (see the module
    docstring)."""
    if not query.strip() or len(query) > MAX_QUERY_CHARS:
        return False
    if any(hit.candidate.lexical >= WEAK_KEYWORDS or hit.candidate.relevance >= FOUND for hit in hits):
        return False
    sentence = len(content_words(query)) >= SENTENCE_TERMS
    return (sentence or refers_to_user(query)) and reads_as_words(query)


def messages(query: str) -> list[dict[str, str]]:
    """The request: the instructions and the user's own words, nothing else (no memory is sent)."""
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": query}]


def parse_reply(text: str) -> tuple[str, ...]:
    """The phrasings of a reply: `{"phrasings": [...]}`, bare or in a ``` fence. An empty list is a valid
    answer (the query means nothing); anything else raises InvalidExpansion."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    try:
        loaded: Any = json.loads(body)
    except ValueError as exc:
        raise InvalidExpansion(f"not JSON: {_snippet(text)}") from exc
    if not isinstance(loaded, dict) or not isinstance(loaded.get("phrasings"), list):
        raise InvalidExpansion(f'no "phrasings" list: {_snippet(text)}')
    found = [_clean(item) for item in loaded["phrasings"] if isinstance(item, str)]
    return tuple(dict.fromkeys(p for p in found if p))[:MAX_PHRASINGS]


def _clean(phrasing: str) -> str:
    # Search refuses NUL; a newline means nothing to it. A phrasing as long as a paragraph is not one.
    return " ".join(_CONTROL.sub(" ", phrasing).split())[:MAX_PHRASING_CHARS]


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat[:60] + ("..." if len(flat) > 60 else ""))


def fuse(
    found: Sequence[SearchHit], expanded: Sequence[Sequence[SearchHit]], k: int, agreed: Set[str]
) -> list[SearchHit]:
    """The query's own hits and its phrasings' hits as one list, best score first, the top `k`: each
    memory once, at the better of its own score and EXPANSION_WEIGHT x its best phrasing score. A phrasing
    adds only memories in `agreed`: those the query's own search ranks among its best AGREE."""
    best: dict[str, SearchHit] = {hit.record.id: hit for hit in found}
    for hits in expanded:
        for hit in hits:
            if hit.record.id not in agreed:
                continue
            hit.candidate.score *= EXPANSION_WEIGHT
            hit.candidate.context["expansion"] = round(hit.candidate.score, 4)
            held = best.get(hit.record.id)
            if held is None or hit.candidate.score > held.candidate.score:
                best[hit.record.id] = hit
    return sorted(best.values(), key=lambda hit: -hit.candidate.score)[:k]


# A search for the completion: (query, k, all results whatever the floor) -> hits, best first, with the
# same person, scopes and filters as the query's own search.
HitSearch = Callable[[str, int, bool], list["SearchHit"]]


def usable(query: str, phrasings: Sequence[str]) -> list[str]:
    """The phrasings worth a search: not blank, not the query itself again."""
    return [p for p in phrasings if p.strip() and p.casefold() != query.casefold()]


def complete(
    query: str, k: int, found: Sequence[SearchHit], phrasings: Sequence[str], search: HitSearch
) -> list[SearchHit]:
    """The query's hits completed by what its phrasings find (`fuse`), each phrasing searched as the query
    was; the memories a phrasing may add are those the query's own search ranks among its best AGREE,
    whatever the floor. A hit found through a phrasing names it (Candidate.phrasing, for --explain)."""
    agreed = {hit.record.id for hit in search(query, max(AGREE, k), True)}
    expanded = []
    for phrasing in phrasings:
        hits = search(phrasing, k, False)
        for hit in hits:
            hit.candidate.phrasing = phrasing
        expanded.append(hits)
    return fuse(found, expanded, k, agreed)
