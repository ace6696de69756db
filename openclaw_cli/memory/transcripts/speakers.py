"""The speaker cue of transcript search (issue 54, transcript recall).

In a chat between named people a question names the person it is about in the third person ("What did
Jonas name his sourdough starter?"), while that person's own turns say "I" and never hold their name; the
turns that do hold it are the others' small talk addressed to them ("how are things with you, Jonas?").
Searched as typed, the name is the query's most specific word and finds exactly those. So when the query
names one of the index's senders (store/sqlite/transcripts/senders.py):

- the keyword share no longer credits a turn for holding the name (it still counts in the share's
  denominator, so a score never rises for it), and the keyword candidates are found without it;
- the nearest turns are found by the query's vector without the name, and a turn's cosines are the lower
  of the query as typed and without the name: the small talk loses what the name gave it, and no score
  rises above what the query as typed gives (a turn's score still compares with a memory's in
  `memory search --source memory,sessions`);
- the ranking then prefers the named person's own turns: another person's turn in a session where the
  named person speaks among the candidates keeps OTHER_SPEAKER of its relevance (a reply often carries
  the fact), a turn of a session where they are not seen keeps ELSEWHERE.

The floor that turns a nonsense query away sees the relevance before the preference. Measured on
fixtures/eval/locomo_like (tests/test_transcript_locomo.py): recall@10 0.349 -> 0.720 on the tuning half,
0.349 -> 0.622 held out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from openclaw_cli.memory.store.transcripts import Turn
from openclaw_cli.memory.text.analysis import is_stopword, query_terms

OTHER_SPEAKER = 0.8  # another person's turn in a session where the named person speaks
ELSEWHERE = 0.2  # a turn of a session where the named person is not seen
_HAN = re.compile(r"[\u3400-\u9fff]")


@dataclass(frozen=True)
class SpeakerCue:
    query: str  # what is searched: the query without the names
    names: frozenset[str]  # the named senders, casefolded


class Weighed(Protocol):
    rowid: int
    relevance: float


def speaker_cue(query: str, senders: Iterable[str]) -> SpeakerCue:
    """The senders `query` names, and the query without them (as typed when nothing else would be left)."""
    stripped, named = query, set()
    for sender in senders:
        pattern = _pattern(sender)
        if pattern is not None and pattern.search(stripped):
            stripped = pattern.sub(" ", stripped)
            named.add(sender.casefold())
    if not named:
        return SpeakerCue(query, frozenset())
    stripped = re.sub(r"\s+", " ", stripped).strip()
    return SpeakerCue(stripped if query_terms(stripped) else query, frozenset(named))


@lru_cache(maxsize=4096)
def _pattern(sender: str) -> re.Pattern[str] | None:
    """How a sender's name is written in a query: the whole name or its first word, with a possessive;
    None for a name that is also a common word or too short to tell (it would steal a query's word)."""
    name = " ".join(sender.split())
    first = name.split(" ")[0]
    forms = sorted({name, first}, key=len, reverse=True)
    if any(_HAN.search(form) for form in forms):
        forms = [form for form in forms if len(form) >= 2]
        return re.compile("|".join(re.escape(form) for form in forms)) if forms else None
    forms = [
        form for form in forms if len(form) >= 3 and not form.isdigit() and not is_stopword(form.casefold())
    ]
    if not forms:
        return None
    alternatives = "|".join(re.escape(form) for form in forms)
    return re.compile(rf"(?<!\w)(?:{alternatives})(?:['’]s|s['’])?(?!\w)", re.IGNORECASE)


def weigh(candidates: Iterable[Weighed], turns: dict[int, tuple[Turn, str]], names: frozenset[str]) -> None:
    """Scale each candidate's relevance by who sent it (see the module's doc)."""
    if not names:
        return
    chosen = list(candidates)
    spoken = {
        turns[c.rowid][0].session_id for c in chosen if c.rowid in turns and _named(turns[c.rowid][0], names)
    }
    for cand in chosen:
        turn = turns[cand.rowid][0] if cand.rowid in turns else None
        if turn is None or _named(turn, names):
            continue
        cand.relevance *= OTHER_SPEAKER if turn.session_id in spoken else ELSEWHERE


def _named(turn: Turn, names: frozenset[str]) -> bool:
    if not turn.sender:
        return False
    sender = " ".join(turn.sender.split()).casefold()
    return sender in names


def plain_terms(terms: list[str], cue: SpeakerCue) -> list[str]:
    """The query's terms that are not (part of) a name it names: those a turn is credited for holding."""
    if not cue.names:
        return terms
    kept = set(query_terms(cue.query))
    return [t for t in terms if t in kept] or terms


def name_free_share(terms: list[str], plain: list[str], weights: dict[str, float]) -> float:
    """What a keyword relevance computed over `plain` is multiplied by to read as one over every term of
    the query of which a turn held none of the names (search/legs/lexical.py's share times the query's
    strength): taking a name out never raises a turn's score, it only stops crediting the name."""
    if plain == terms:
        return 1.0
    full = sum(weights.get(t, 0.0) for t in terms)
    part = sum(weights.get(t, 0.0) for t in plain)
    strongest = max((weights.get(t, 0.0) for t in plain), default=0.0)
    if full <= 0 or strongest <= 0:
        return 0.0
    return (part / full) * (max(weights.get(t, 0.0) for t in terms) / strongest)


def lower_cosines(
    typed: dict[int, tuple[float, ...]], plain: dict[int, tuple[float, ...]]
) -> dict[int, tuple[float, ...]]:
    """Each turn's cosines with the query as typed and without the names, leg by leg, the lower: the turns
    that held the name (small talk addressed to the person) lose what it gave them, and no turn scores
    above what the query as typed gives it, so a turn's score still compares with a memory's."""
    return {
        rowid: tuple(min(a, b) for a, b in zip(legs, plain.get(rowid, legs), strict=True))
        for rowid, legs in typed.items()
    }
