"""The search steps that read who a memory is about and where it was said, after fusion.

- Subjects: a memory about someone the query does not name counts for less (text/subject.py, store/people.py).
- Dialogue: the best hits lend relevance to what was said next to them (search/context_stages/dialogue.py).
- Answer kind: when the query asks for a time or a quantity, a memory holding none counts for less
  (search/context_stages/answer_type.py).
- Utterances: a memory that only asks, or that the assistant said, counts for less. These last two
  steps come after the dialogue step, so a question still lends its answer its full relevance.

One `ContextSteps` caches each memory's subject and answer kinds; a warm MemoryService keeps one per store
across its searches (a searcher is made per search).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from openclaw_cli.memory.search.candidate import Candidate, by_relevance
from openclaw_cli.memory.search.context_stages import answer_type, dialogue
from openclaw_cli.memory.store import people
from openclaw_cli.memory.text import subject

if TYPE_CHECKING:
    from openclaw_cli.config.loading import SearchSettings
    from openclaw_cli.memory.store.memory_store import MemoryStore
    from openclaw_cli.memory.store.protocol import VectorFilter
    from openclaw_cli.memory.store.record_rows import RankingFacts

SUBJECT_CACHE = 50_000  # memories whose subject (and answer kinds) a warm searcher keeps (~10 MB at most)
SUBJECT_CASTS = 8  # casts kept at once: everyone's and a few persons' (most memories fall under one or two)
# A memory about someone else that alone holds every word of a topic query is spared the other-person
# factor unless a memory about the user reaches this share of its relevance (weigh_subjects).
SPARED_BELOW = 0.7


class ContextSteps:
    def __init__(self, store: MemoryStore, settings: SearchSettings) -> None:
        self.store = store
        self.settings = settings
        # Per cast (the names a search knows): a turn searches the person's memories (their names) and
        # the agent's (everyone's), two casts one after the other; one cache for the last cast alone was
        # emptied by every search (~76 subject_of calls, 4-10 ms of a turn at 2,000 memories).
        self._subjects_of: dict[re.Pattern[str] | None, dict[str, subject.Subject]] = {}
        self._answers: dict[tuple[answer_type.AnswerKind, str], bool] = {}

    def weigh_subjects(
        self,
        merged: list[Candidate],
        facts: dict[int, RankingFacts],
        query: str,
        user_id: str | None,
        full_matches: set[int],
    ) -> None:
        """A memory about someone the query does not ask about counts for less; a dialogue turn less so,
        since the user names others in passing ("Three minutes max. Kevin's side is doing a long one").

        Spared: a memory holding every word of a query that refers to nobody at all (no name, no
        pronoun: "钢琴"), when no memory about the user comes close to it (SPARED_BELOW of its
        relevance). Then it is what the query asks for, whoever it is about ("我女儿在学钢琴" scored 0.30);
        where the user's own memory competes ("护照什么时候到期": the user's passport, not the sister's),
        the factor still ranks it first."""
        fact_factor, turn_factor = self.settings.other_person_factor, self.settings.other_person_turn_factor
        if min(fact_factor, turn_factor) >= 1.0 or not merged:
            return
        names = people.cast(self.store.storage, user_id)
        asked = subject.query_subject(query, names, people.own_names(self.store.storage, user_id))
        cast = subject.cast_pattern(names)
        if sum(map(len, self._subjects_of.values())) > SUBJECT_CACHE:  # the same bound as one cache had
            self._subjects_of = {}
        known = self._subjects_of.get(cast)  # a warm searcher reads each memory's subject once per cast
        if known is None:
            if len(self._subjects_of) >= SUBJECT_CASTS:
                self._subjects_of.pop(next(iter(self._subjects_of)))  # the oldest cast
            known = self._subjects_of[cast] = {}
        others = []
        for cand in merged:
            l0 = facts[cand.rowid].l0
            if l0 not in known:
                known[l0] = subject.subject_of(l0, cast)
            if subject.mismatch(asked, known[l0]):
                others.append(cand)
        about_others = {c.rowid for c in others}
        mine = max((c.relevance for c in merged if c.rowid not in about_others), default=0.0)
        topic_only = asked.is_user and not asked.about_user
        for cand in others:
            if topic_only and cand.rowid in full_matches and mine < SPARED_BELOW * cand.relevance:
                continue
            factor = turn_factor if subject.is_turn(facts[cand.rowid].l0) else fact_factor
            cand.relevance *= factor
            cand.note("otherPerson", factor)

    def lend_to_neighbours(
        self,
        merged: list[Candidate],
        facts: dict[int, RankingFacts],
        where: VectorFilter,
        floor: Callable[[int], float],
    ) -> None:
        """Turns said next to a good hit in the same conversation get a share of its relevance, combined
        with their own as independent evidence. Only a turn relevant by itself (at least `floor(rowid)`) or the
        answer to a hit that asks gets a share: a share alone put "User's name is Sam" under every
        search that found the turn before it."""
        lent, answers = self._lent_relevance(merged, facts, where)
        by_row = {cand.rowid: cand for cand in merged}
        lent = {
            rowid: value
            for rowid, value in lent.items()
            if rowid in answers or (rowid in by_row and by_row[rowid].relevance >= floor(rowid))
        }
        if not lent:
            return
        facts.update(self.store.ranking_facts(rowid for rowid in lent if rowid not in by_row))
        for rowid, value in lent.items():
            if rowid not in facts:  # deleted meanwhile
                continue
            if rowid not in by_row:
                by_row[rowid] = Candidate(rowid)
                merged.append(by_row[rowid])
            # Independent evidence, as in fusion: what the turn says itself and where it was said. Taking
            # the larger of the two instead ranked a repeat of the answer below the turn naming the topic.
            own = by_row[rowid].relevance
            by_row[rowid].relevance = own + value * (1.0 - own)
            by_row[rowid].note("dialogue", round(value, 4))
        by_relevance(merged)

    def _lent_relevance(
        self, merged: list[Candidate], facts: dict[int, RankingFacts], where: VectorFilter
    ) -> tuple[dict[int, float], set[int]]:
        """What each neighbour of the best hits is lent, and which neighbours answer a hit that asks."""
        shares = dialogue.Shares()
        sessions: dict[str, list[tuple[int, dialogue.Place]]] = {}
        lent: dict[int, float] = {}
        answers: set[int] = set()
        for cand in merged[: shares.seeds]:
            place = dialogue.place_of(facts[cand.rowid].source)
            if place is None:
                continue
            if place.session not in sessions:
                sessions[place.session] = dialogue.session_rows(self.store.storage, place.session, where)
            question = subject.is_question(facts[cand.rowid].l0)
            for rowid, value in dialogue.lent_relevance(
                place, cand.relevance, question, sessions[place.session], shares
            ).items():
                lent[rowid] = max(lent.get(rowid, 0.0), value)
            if question:
                answers.update(dialogue.said_after(place, sessions[place.session], shares))
        return lent, answers

    def weigh_answer_kind(self, merged: list[Candidate], facts: dict[int, RankingFacts], query: str) -> None:
        """A question that asks when, or how many, is answered by a memory that holds a time or a
        quantity; the others count for less. After the dialogue step, so the turn that only names the
        topic still lends the turn with the date its full relevance."""
        factor = self.settings.answer_kind_factor
        kind = answer_type.asked_for(query)
        if kind is None or factor >= 1.0:
            return
        if len(self._answers) > SUBJECT_CACHE:
            self._answers = {}
        held = self._answers  # a warm searcher reads each memory once per kind (~6 us a memory)
        for cand in merged:
            key = (kind, facts[cand.rowid].l0)
            if key not in held:
                held[key] = answer_type.could_answer(kind, key[1])
            if not held[key]:
                cand.relevance *= factor
                cand.note("answerKind", factor)

    def weigh_questions(self, merged: list[Candidate], facts: dict[int, RankingFacts]) -> None:
        """A memory that only asks is weaker evidence than one that states something."""
        _weigh_where(merged, facts, subject.is_question, self.settings.question_factor, "question")

    def weigh_assistant(self, merged: list[Candidate], facts: dict[int, RankingFacts]) -> None:
        """A turn the assistant said is weaker evidence than the user's own words."""
        _weigh_where(merged, facts, subject.said_by_assistant, self.settings.assistant_factor, "assistant")


def _weigh_where(
    merged: list[Candidate],
    facts: dict[int, RankingFacts],
    applies: Callable[[str], bool],
    factor: float,
    reason: str,
) -> None:
    """Multiply the relevance of each candidate whose L0 `applies` by `factor`, noting why, and re-sort."""
    for cand in merged:
        if applies(facts[cand.rowid].l0):
            cand.relevance *= factor
            cand.note(reason, factor)
    by_relevance(merged)
