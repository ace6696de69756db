"""Is a new memory already known? Exact dedup by normalised L0, then semantic dedup in three zones.

Exact: the same user and scope holding a live memory whose `l0Hash` (NFKC, case, whitespace and
punctuation folded: text.normalise_l0) equals the candidate's. The category is not part of the key: the
same words are the same memory whichever category a classifier gave them, and the stored one keeps its own.

Semantic (seed 000 §6.1): the candidate's vector against its nearest memories of the same user, scope and
category. Below the profile's `dedup_new_below` it is new, above `dedup_duplicate_above` a duplicate, and in
between the caller's judge (the LLM) decides. The similarity is the one search trusts (semantic.combine):
per-leg cosines, the English leg weighted by how far both texts are English. On the labelled pairs it
separated the zones better than the composite cosine or either model alone (tests/test_dedup_zones.py).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from openclaw_cli.memory.merge import STRATEGIES
from openclaw_cli.memory.semantic import LANGUAGE_TRUST, combine

if TYPE_CHECKING:
    import apsw
    import numpy as np

    from openclaw_cli.config import DedupSettings
    from openclaw_cli.memory.profiles import SearchProfile
    from openclaw_cli.memory.records import MemoryRecord
    from openclaw_cli.memory.semantic import VectorSource
    from openclaw_cli.memory.store import MemoryStore

Zone = Literal["new", "grey", "duplicate"]


@dataclass(frozen=True)
class DedupZones:
    new_below: float
    duplicate_above: float
    neighbours: int = 5
    english_only: bool = False

    def zone(self, similarity: float) -> Zone:
        if similarity > self.duplicate_above:
            return "duplicate"
        return "new" if similarity < self.new_below else "grey"

    def classify(self, similarity: float, new_l0: str, old_l0: str, category: str) -> Zone:
        """The zone of a candidate and a stored memory, with the two cases a cosine cannot see moved
        from "duplicate" to the grey zone, where only a judge may call them the same:

        - texts whose numbers differ ("prefers 2 spaces" / "prefers 4 spaces": 0.92 apart; a new age,
          an address, a version): dropping one as a duplicate would lose the update;
        - events and cases, which never merge: "meeting with Bob on Monday" and "...on Friday" are 0.95
          apart and are two events.
        """
        zone = self.zone(similarity)
        if zone == "duplicate" and (category in NEVER_MERGED or numbers(new_l0) != numbers(old_l0)):
            return "grey"
        return zone


# Categories whose memories stay independent (merge.py): a near-duplicate is not dropped without a judge.
NEVER_MERGED = frozenset(category for category, rule in STRATEGIES.items() if rule == "never")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")


def numbers(text: str) -> list[str]:
    """The numbers in a text, in order (full-width digits folded to ASCII)."""
    return _NUMBER.findall(unicodedata.normalize("NFKC", text))


def zones_for(profile: SearchProfile, settings: DedupSettings | None = None) -> DedupZones:
    """The profile's measured zones, with `memory.dedup.*` settings on top."""
    new_below, duplicate_above, neighbours = profile.dedup_new_below, profile.dedup_duplicate_above, 5
    if settings is not None:
        new_below = profile.dedup_new_below if settings.new_below is None else settings.new_below
        duplicate_above = (
            profile.dedup_duplicate_above if settings.duplicate_above is None else settings.duplicate_above
        )
        neighbours = settings.neighbours
    return DedupZones(new_below, max(new_below, duplicate_above), neighbours, profile.dedup_english_only)


def pair_similarity(
    profile: SearchProfile, legs: Sequence[float], language_a: str, language_b: str
) -> float | None:
    """How alike two memories are for dedup, or None when this embedder cannot tell (an English-only
    model and a text that is not English)."""
    if len(legs) == 1:
        if profile.dedup_english_only and not (language_a == "en" and language_b == "en"):
            return None
        return float(legs[0])
    weight = profile.english_weight * LANGUAGE_TRUST.get(language_a, 0.0)
    return combine(legs, weight, language_b)


def leg_cosines(a: np.ndarray, b: np.ndarray, legs: Sequence[int]) -> tuple[float, ...]:
    """Each model's cosine between two stored vectors."""
    import numpy as np

    out, start = [], 0
    for width in legs:
        x, y = a[start : start + width], b[start : start + width]
        norm = float(np.linalg.norm(x) * np.linalg.norm(y))
        out.append(float(x @ y) / norm if norm > 0 else 0.0)
        start += width
    return tuple(out)


@dataclass(frozen=True)
class Neighbour:
    record: MemoryRecord
    similarity: float


def exact_duplicate(conn: apsw.Connection, record: MemoryRecord) -> MemoryRecord | None:
    """A live memory of the same user and scope with the same normalised L0 (never the record itself)."""
    return _first(
        conn,
        "l0_hash = ? AND scope = ? AND user_id IS ? AND id != ?",
        (record.l0_hash, record.scope, record.user_id, record.id),
    )


def same_attribute(conn: apsw.Connection, record: MemoryRecord) -> MemoryRecord | None:
    """The live profile fact of the same user and scope about the same attribute ("job", "city")."""
    if record.category != "profile" or not record.attribute:
        return None
    return _first(
        conn,
        "user_id IS ? AND category = 'profile' AND attribute = ? AND scope = ? AND id != ?",
        (record.user_id, record.attribute, record.scope, record.id),
    )


def _first(conn: apsw.Connection, where: str, params: tuple[object, ...]) -> MemoryRecord | None:
    from openclaw_cli.memory.store import RECORD_COLUMNS, row_to_record

    row = conn.execute(
        f"SELECT {RECORD_COLUMNS} FROM records WHERE deleted = 0 AND {where} ORDER BY created_at DESC LIMIT 1",
        params,
    ).fetchone()
    return None if row is None else row_to_record(row)


def nearest(
    store: MemoryStore,
    source: VectorSource,
    profile: SearchProfile,
    record: MemoryRecord,
    vector: np.ndarray,
    count: int,
) -> list[Neighbour]:
    """The `count` most similar live memories of the record's user, scope and category, best first."""
    from openclaw_cli.memory.embed import QueryEmbedding
    from openclaw_cli.memory.semantic import candidates
    from openclaw_cli.memory.vectors import VectorFilter

    where = VectorFilter(user_id=record.user_id or "", scopes=(record.scope,), categories=(record.category,))
    # A passage is "read" by the English model as far as its language is English: the same trust
    # search gives a memory, so a Chinese candidate is matched by the multilingual leg alone.
    unknown = 1.0 - LANGUAGE_TRUST.get(record.language, 0.0)
    legs = candidates(source, QueryEmbedding(vector, unknown), profile, count, where)
    found = store.by_rowids(legs)
    scored = []
    for rowid, stored in found.items():
        similarity = pair_similarity(profile, legs[rowid], record.language, stored.language)
        if similarity is not None and stored.id != record.id:
            scored.append(Neighbour(stored, similarity))
    scored.sort(key=lambda n: -n.similarity)
    return scored[:count]
