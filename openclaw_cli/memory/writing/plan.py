"""Writing candidates into one database: decide each (dedup, judge, merge strategy), then write them all.

Deciding reads the store and may call the judge (a model); writing holds the write lock only for the
inserts and updates. Candidates of one call see each other: the second of two equal candidates is a
duplicate of the first, even though neither is stored when it is decided.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.writing import dedup, merge
from openclaw_cli.memory.writing.candidate import Action, Candidate, Judge, WriteOutcome
from openclaw_cli.memory.writing.values import value_change

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.agent_memory import AgentMemory
    from openclaw_cli.memory.search.profiles import SearchProfile
    from openclaw_cli.memory.store.memory_store import MemoryStore
    from openclaw_cli.memory.store.records import MemoryRecord
    from openclaw_cli.memory.writing.dedup import DedupZones, Neighbour


@dataclass
class Decision:
    action: Action
    reason: str
    existing: str | None = None  # the memory a duplicate or merge goes to
    beside: str | None = None  # the memory an added one is a new value of (both kept)


def quoted(record: MemoryRecord) -> str:
    """A stored memory as a reason names it: its id and its words, so a person sees what it matched."""
    from openclaw_cli.memory.text.bounded import bounded

    return f'{record.id} "{bounded(record.l0, 80)}"'


class StoreWriter:
    def __init__(self, service: AgentMemory, store: MemoryStore, judge: Judge | None, now: datetime) -> None:
        from openclaw_cli.memory.search.profiles import profile_for

        self.store = store
        self.judge = judge
        self.now = now
        self.embedder, self.warning = store.usable_embedder()
        identity = store.storage.vector_identity()
        if identity is None and self.embedder is not None:
            identity = self.embedder.identity.to_dict()
        self.profile: SearchProfile = profile_for(identity, service.settings.search)
        self.zones: DedupZones = dedup.zones_for(self.profile, service.settings.dedup)
        # Kept on the store, so a long-lived process loads each group of neighbours once.
        if store.dedup_index is None:
            store.dedup_index = dedup.NeighbourIndex()
        self.index: dedup.NeighbourIndex = store.dedup_index
        self.index.sync(store.storage)
        # This call's records as they will be once written (added, or merged into), for the later ones.
        self.fresh: dict[str, tuple[MemoryRecord, np.ndarray | None]] = {}

    # ------------------------------------------------------------------ deciding

    def write(
        self, candidates: Sequence[Candidate], records: Sequence[MemoryRecord], dry_run: bool
    ) -> list[WriteOutcome]:
        found = self._vectors(records)
        decisions = [
            self._decide(candidate, record, vector)
            for candidate, record, vector in zip(candidates, records, found, strict=True)
        ]
        if not dry_run:
            decisions = self._apply(records, found, decisions)
        return [
            _outcome(candidate, record, decision, dry_run)
            for candidate, record, decision in zip(candidates, records, decisions, strict=True)
        ]

    def _vectors(self, records: Sequence[MemoryRecord]) -> list[np.ndarray | None]:
        """One batch of passage vectors (stored ones reused); None for all when the embedder is unusable."""
        from openclaw_cli.memory.embedding.onnx_embedder import EmbeddingUnavailable

        if self.embedder is None or not records:
            return [None] * len(records)
        try:
            return list(self.store.embed_cached(self.embedder, [r.l0 for r in records]))
        except EmbeddingUnavailable as exc:
            self.warning = f"{exc.message}; vectors are pending, run `openclaw memory index` later"
            return [None] * len(records)

    def _decide(self, candidate: Candidate, record: MemoryRecord, vector: np.ndarray | None) -> Decision:
        if self.store.exists(record.id) or record.id in self.fresh:
            return Decision("skipped", f"a memory with id {record.id!r} already exists")
        known = dedup.exact_duplicate(self.store.storage, record) or self._fresh_match(record, by="hash")
        if known is not None:
            return Decision("duplicate", f"same words as {quoted(known)}", known.id)
        same_fact = dedup.same_attribute(self.store.storage, record) or self._fresh_match(
            record, by="attribute"
        )
        if same_fact is not None:
            decision = Decision(
                "merged",
                f"{record.category} {record.attribute!r}: the new value replaces {quoted(same_fact)} "
                "(the old one is kept in history)",
                same_fact.id,
            )
        else:
            decision = self._by_meaning(candidate, record, vector)
        if decision.action == "added":
            self.fresh[record.id] = (record, vector)
        elif decision.action == "merged" and decision.existing is not None:
            self.fresh[decision.existing] = (record.model_copy(update={"id": decision.existing}), vector)
        return decision

    def _fresh_match(self, record: MemoryRecord, *, by: str) -> MemoryRecord | None:
        for other, _ in self.fresh.values():
            if (other.user_id, other.scope) != (record.user_id, record.scope):
                continue
            if by == "hash" and other.l0_hash == record.l0_hash:
                return other
            same_fact = record.category == other.category and record.category in dedup.KEYED_CATEGORIES
            same_fact = same_fact and bool(record.attribute)
            if by == "attribute" and same_fact and other.attribute == record.attribute:
                return other
        return None

    def _by_meaning(self, candidate: Candidate, record: MemoryRecord, vector: np.ndarray | None) -> Decision:
        if vector is None:
            pending = f": {self.warning}" if self.warning else ""
            return Decision("added", f"new (no vector yet, so not compared by meaning{pending})")
        ranked = self._neighbours(record, vector)
        changed = self._changed_value(record, ranked)
        if changed is not None:
            return changed
        if self.judge is None and record.category in dedup.NEVER_MERGED:
            # Their near-duplicates go to the judge (DedupZones.classify): without one, none is dropped.
            return Decision("added", f"new ({record.category}s are only dropped by a model's judgement)")
        if not ranked:
            return Decision("added", "new (nothing similar stored)")
        zones = [self.zones.classify(n.similarity, record.l0, n.record.l0, record.category) for n in ranked]
        if "duplicate" in zones:
            match = ranked[zones.index("duplicate")]
            above = self.zones.duplicate_above
            reason = f"same meaning as {quoted(match.record)} ({match.similarity:.2f} > {above})"
            return Decision("duplicate", reason, match.record.id)
        grey = [n for n, zone in zip(ranked, zones, strict=True) if zone == "grey"]
        if not grey:
            return Decision(
                "added", f"new (closest {quoted(ranked[0].record)} at {ranked[0].similarity:.2f})"
            )
        return self._judged(candidate, grey)

    def _changed_value(self, record: MemoryRecord, ranked: Sequence[Neighbour]) -> Decision | None:
        """The nearest memory that states the same fact with another value (writing/values.py), as a
        decision: a profile fact (or a keyed one) is replaced, with a history row; anything else keeps the
        new value beside the old one. Never a duplicate, whatever the cosine: that would lose the value."""
        for neighbour in ranked:
            old = neighbour.record
            if record.attribute and old.attribute and record.attribute != old.attribute:
                continue  # two keyed facts about different things ("topic 3" / "topic 4")
            change = value_change(record.l0, old.l0)
            if change is None or not change.same_fact:
                continue
            what = f"{change.describe()}, {neighbour.similarity:.2f}"
            keyed = record.category == "profile" or (
                record.category in dedup.KEYED_CATEGORIES and bool(record.attribute)
            )
            if keyed and merge.strategy(old.category) != "never":
                reason = f"a new value of {quoted(old)} ({what}): it replaces the old one, kept in history"
                return Decision("merged", reason, old.id)
            return Decision(
                "added", f"a new value beside {quoted(old)} ({what}): both are kept", beside=old.id
            )
        return None

    def _judged(self, candidate: Candidate, grey: Sequence[Neighbour]) -> Decision:
        """Ask the judge about each grey-zone neighbour, nearest first, until one is not different."""
        from openclaw_cli.core.errors import OpenclawError

        nearest = f"{grey[0].similarity:.2f} to {quoted(grey[0].record)}"
        if self.judge is None:
            reason = f"kept as new: {nearest} needs a model to judge"
            return Decision("added", reason, beside=grey[0].record.id)
        for neighbour in grey:
            other, similarity = neighbour.record, neighbour.similarity
            try:
                verdict = self.judge(candidate, other)
            except OpenclawError as exc:
                return Decision("added", f"kept as new: {nearest}, the judge failed ({exc.message})")
            if verdict == "same" and value_change(candidate.l0, other.l0) is not None:
                verdict = "update"  # other values are never the same meaning, whatever the judge says
            if verdict == "same":
                reason = f"judged the same as {quoted(other)} ({similarity:.2f})"
                return Decision("duplicate", reason, other.id)
            rule = merge.strategy(other.category)
            if verdict == "update" and rule != "never":
                reason = f"judged an update of {quoted(other)} ({similarity:.2f}, {rule}; the old one is kept in history)"
                return Decision("merged", reason, other.id)
            if verdict == "update":
                reason = (
                    f"judged related to {quoted(other)}, but {other.category}s never merge: both are kept"
                )
                return Decision("added", reason, beside=other.id)
        return Decision("added", f"judged different from {len(grey)} similar memories (nearest {nearest})")

    def _neighbours(self, record: MemoryRecord, vector: np.ndarray) -> list[Neighbour]:
        """The most similar memories of the same user, scope and category, stored or written by this
        call, best first."""
        from openclaw_cli.memory.writing.dedup import Neighbour, leg_cosines, pair_similarity

        found = dedup.nearest(self.store, self.index, self.profile, record, vector, self.zones.neighbours)
        found = [n for n in found if n.record.id not in self.fresh]  # their stored text is outdated
        for other, other_vector in self.fresh.values():
            same_place = (other.user_id, other.scope, other.category)
            if other_vector is None or same_place != (record.user_id, record.scope, record.category):
                continue
            legs = leg_cosines(vector, other_vector, self.profile.legs)
            similarity = pair_similarity(self.profile, legs, record.language, other.language)
            if similarity is not None:
                found.append(Neighbour(other, similarity))
        found.sort(key=lambda n: -n.similarity)
        return found[: self.zones.neighbours]

    # ------------------------------------------------------------------ writing

    def _apply(
        self,
        records: Sequence[MemoryRecord],
        found: Sequence[np.ndarray | None],
        decisions: list[Decision],
    ) -> list[Decision]:
        """Carry the decisions out in one transaction; one overtaken by another writer meanwhile (an
        equal memory stored, the merge target deleted) is decided again the safe way."""
        done: list[Decision] = []
        with self.store.storage.transaction():
            # Nobody else can write now: if the index saw the vectors as they are, it can follow ours.
            self.index.sync(self.store.storage)
            for record, vector, decision in zip(records, found, decisions, strict=True):
                done.append(self._apply_one(record, vector, decision))
            self.index.generation = self.store.storage.vector_generation()
        return done

    def _indexed(self, record: MemoryRecord, vector: np.ndarray | None) -> None:
        """Tell the neighbour index about a row just written (its vector is what is stored now)."""
        self.index.note_write(dedup.group_key(record), self.store.rowid(record.id), record.language, vector)

    def _apply_one(self, record: MemoryRecord, vector: np.ndarray | None, decision: Decision) -> Decision:
        from openclaw_cli.core.errors import NotFound

        store = self.store
        if decision.action == "added":
            known = dedup.exact_duplicate(store.storage, record)
            if known is not None:
                decision = Decision("duplicate", f"same words as {quoted(known)}", known.id)
            else:
                store.insert_record(record, vector)
                self._indexed(record, vector)
                return decision
        if decision.action in ("duplicate", "merged") and decision.existing is not None:
            try:
                old = store.get(decision.existing)
            except NotFound:
                store.insert_record(record, vector)
                self._indexed(record, vector)
                return Decision("added", f"new ({decision.existing} was deleted meanwhile)")
            corrected = False
            if decision.action == "merged":
                new = merge.merged(old, record, self.now)
                if new is None:  # its category never merges
                    store.insert_record(record, vector)
                    self._indexed(record, vector)
                    return Decision("added", f"new ({old.category}s never merge)")
                merge.apply(store, old, new, vector, decision.reason)
                self._indexed(new, vector)
                corrected = new.l0 != old.l0  # what was remembered was wrong: a lapse (seed 000 §5.2)
            store.review(old.id, self.now, corrected=corrected)
        return decision


def _outcome(candidate: Candidate, record: MemoryRecord, decision: Decision, dry_run: bool) -> WriteOutcome:
    reason = f"{decision.reason} (dry run)" if dry_run else decision.reason
    if decision.action == "skipped":
        return WriteOutcome(candidate, "skipped", reason)
    if decision.action == "added":
        return WriteOutcome(candidate, "added", reason, record.id, existing_id=decision.beside)
    return WriteOutcome(candidate, decision.action, reason, decision.existing)


def summary(outcomes: Sequence[WriteOutcome]) -> dict[str, Any]:
    """Counts by action, for a command's report."""
    counts = {action: 0 for action in ("added", "merged", "duplicate", "skipped")}
    for outcome in outcomes:
        counts[outcome.action] += 1
    return counts
