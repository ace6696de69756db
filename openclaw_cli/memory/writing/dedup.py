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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from openclaw_cli.memory.search.legs.semantic import combine
from openclaw_cli.memory.store.layout import LANGUAGE_TRUST
from openclaw_cli.memory.writing.merge import STRATEGIES
from openclaw_cli.memory.writing.values import value_change

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.config.loading import DedupSettings
    from openclaw_cli.memory.search.profiles import SearchProfile
    from openclaw_cli.memory.store.memory_store import MemoryStore
    from openclaw_cli.memory.store.protocol import MemoryStorage
    from openclaw_cli.memory.store.records import MemoryRecord

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
        """The zone of a candidate and a stored memory, with the cases a cosine cannot see moved from
        "duplicate" to the grey zone, where only a judge may relate them (and the write path keeps a
        changed value of the same fact: writing/values.py):

        - texts whose values differ (a number, an identifier, a date, an amount, a proper name, a
          negation: "passport … ALICEHKPASS4417" / "… ALICEWSPASS4417" are 0.97 apart), which are never
          the same meaning: dropping one as a duplicate would lose the new value;
        - events and cases, which never merge: "meeting with Bob on Monday" and "...on Friday" are 0.95
          apart and are two events.
        """
        zone = self.zone(similarity)
        if zone == "duplicate" and (category in NEVER_MERGED or value_change(new_l0, old_l0) is not None):
            return "grey"
        return zone


# Categories whose memories stay independent (writing/merge.py): a near-duplicate is not dropped without a judge.
NEVER_MERGED = frozenset(category for category, rule in STRATEGIES.items() if rule == "never")


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
    weight = profile.dedup_weight() * LANGUAGE_TRUST.get(language_a, 0.0)
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


def exact_duplicate(storage: MemoryStorage, record: MemoryRecord) -> MemoryRecord | None:
    """A live memory of the same user and scope with the same normalised L0 (never the record itself)."""
    return storage.same_text(record)


# Categories whose `attribute` names what the memory is about: a profile fact's key ("job", "city"), an
# insight's topic. A newer one about the same thing replaces the older (overwrite / latest-wins).
KEYED_CATEGORIES = ("profile", "insight")


def same_attribute(storage: MemoryStorage, record: MemoryRecord) -> MemoryRecord | None:
    """The live memory of the same user, scope and keyed category about the same attribute."""
    if record.category not in KEYED_CATEGORIES or not record.attribute:
        return None
    return storage.same_attribute(record)


class NeighbourIndex:
    """The vectors semantic dedup compares against, by (user, scope, category), held in memory.

    Dedup compares a candidate only with memories of its own user, scope and category, so only those
    groups are loaded (their rows read from the vector table by rowid), each the first time a candidate
    needs it, and every candidate is scored exactly against its whole group. The writer adds its own rows
    as it commits them; a write by anyone else (the vector generation moved) empties the index. At 10k
    memories this made a turn of 5 writes ~10x cheaper than two vec0 scans per candidate or a reload of
    the whole search matrix after every write.
    """

    def __init__(self) -> None:
        self.generation = -1
        self._groups: dict[tuple[str, str, str], _Group] = {}

    def sync(self, storage: MemoryStorage) -> None:
        """Forget everything when the vectors changed since this index last saw them (a new vector
        table, from a rebuild, moves the generation too)."""
        generation = storage.vector_generation()
        if generation != self.generation:
            self._groups.clear()
            self.generation = generation

    def group(self, storage: MemoryStorage, key: tuple[str, str, str]) -> _Group:
        if key not in self._groups:
            self._groups[key] = _Group.load(storage, key)
        return self._groups[key]

    def note_write(
        self, key: tuple[str, str, str], rowid: int, language: str, vector: np.ndarray | None
    ) -> None:
        """A row this process just wrote (added, or merged into: its vector replaced)."""
        if key in self._groups:
            self._groups[key].put(rowid, language, vector)


class _Group:
    def __init__(self) -> None:

        self.rowids: list[int] = []
        self._members: set[int] = set()  # rowids as a set: a 10k-row group's load tested a list (1.56 s)
        self.languages: list[str] = []
        self.rows: list[np.ndarray] = []
        # Rows scaled to unit legs, built on first use; rows added since are appended to it then.
        self._matrix: np.ndarray | None = None

    @classmethod
    def load(cls, storage: MemoryStorage, key: tuple[str, str, str]) -> _Group:
        group = cls()
        user, scope, category = key
        found = storage.ready_rows(user or None, scope, category)
        stored = storage.read_vectors([rowid for rowid, _ in found])
        for rowid, language in found:
            if rowid in stored:
                group.put(rowid, language, stored[rowid])
        return group

    def put(self, rowid: int, language: str, vector: np.ndarray | None) -> None:
        if rowid in self._members:  # a merge replaced its vector: rebuild (rare)
            at = self.rowids.index(rowid)
            del self.rowids[at], self.languages[at], self.rows[at]
            self._members.discard(rowid)
            self._matrix = None
        if vector is not None:
            self.rowids.append(rowid)
            self._members.add(rowid)
            self.languages.append(language)
            self.rows.append(vector)

    def leg_cosines(self, vector: np.ndarray, legs: Sequence[int]) -> np.ndarray:
        """(rows x legs) cosines of every row of the group with `vector`."""
        import numpy as np

        if not self.rows:
            return np.zeros((0, len(legs)), dtype=np.float32)
        if self._matrix is None:
            self._matrix = _unit_legs(np.stack(self.rows).astype(np.float32, copy=False), legs)
        elif len(self._matrix) < len(self.rows):
            added = _unit_legs(np.stack(self.rows[len(self._matrix) :]).astype(np.float32, copy=False), legs)
            self._matrix = np.concatenate([self._matrix, added])
        query = _unit_legs(vector[None, :].astype(np.float32, copy=False), legs)[0]
        products = self._matrix * query  # each leg's slice sums to that leg's cosine
        bounds = np.cumsum([0, *legs])
        return np.add.reduceat(products, bounds[:-1], axis=1)


def _unit_legs(matrix: np.ndarray, legs: Sequence[int]) -> np.ndarray:
    """Each row's legs scaled to unit length (a zero leg stays zero)."""
    import numpy as np

    out = matrix.copy()
    start = 0
    for width in legs:
        block = out[:, start : start + width]
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        block /= np.where(norms > 0, norms, 1.0)
        start += width
    return out


def group_key(record: MemoryRecord) -> tuple[str, str, str]:
    return record.user_id or "", record.scope, record.category


def nearest(
    store: MemoryStore,
    index: NeighbourIndex,
    profile: SearchProfile,
    record: MemoryRecord,
    vector: np.ndarray,
    count: int,
) -> list[Neighbour]:
    """The `count` most similar live memories of the record's user, scope and category, best first."""
    import numpy as np

    group = index.group(store.storage, group_key(record))
    similarities = group_similarities(
        profile, group.leg_cosines(vector, profile.legs), record.language, group.languages
    )
    order = np.argsort(-similarities, kind="stable")[:count]
    top = [int(n) for n in order if np.isfinite(similarities[n])]
    found = store.by_rowids([group.rowids[n] for n in top])
    return [
        Neighbour(found[group.rowids[n]], float(similarities[n])) for n in top if group.rowids[n] in found
    ]


def group_similarities(
    profile: SearchProfile, legs: np.ndarray, language: str, languages: Sequence[str]
) -> np.ndarray:
    """pair_similarity of one text against many rows at once (-inf where they cannot be compared)."""
    import numpy as np

    if legs.shape[1] == 1:
        values = legs[:, 0].astype(np.float64)
        if profile.dedup_english_only:
            readable = np.array([language == "en" and other == "en" for other in languages], dtype=bool)
            values = np.where(readable, values, -np.inf)
        return values
    weight = profile.dedup_weight() * LANGUAGE_TRUST.get(language, 0.0)
    english = weight * np.array([LANGUAGE_TRUST.get(other, 0.0) for other in languages], dtype=np.float64)
    other = 1.0 - weight
    total = english + other
    mixed = (english * legs[:, 0] + other * legs[:, 1]) / np.where(total > 0, total, 1.0)
    return np.where(total > 0, mixed, legs[:, 1])
