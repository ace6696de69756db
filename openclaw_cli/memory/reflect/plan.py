"""Reflection's read side: the groups of unreflected memories, and the insights the model makes of each.

Nothing here writes. The model's reply is checked before it is believed: evidence that names no memory
of the group is set aside and reported, an insight left without evidence is skipped, two insights on one
topic keep the more confident, and at most `maxInsights` (the most confident) are kept.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.memory.reflect.prompt import (
    InsightReply,
    ReflectionReply,
    build_messages,
    reference,
    topic_key,
)
from openclaw_cli.memory.writing.candidate import Candidate
from openclaw_cli.sessions.budget.tokens import count_tokens

if TYPE_CHECKING:
    from openclaw_cli.config.loading import LlmSettings
    from openclaw_cli.memory.service import MemoryService
    from openclaw_cli.memory.store.records import MemoryRecord

# The facts reflection distils; never the insights it writes, nor workspace notes (files own those).
REFLECTABLE: tuple[str, ...] = ("profile", "preference", "event", "case", "lesson")
# Memory lines per model call: ~500 short memories. A bigger group is asked in parts, each its own call.
MAX_PROMPT_TOKENS = 12_000
# An insight starts at this many times the mean stability of its evidence, so it outlasts the facts.
INSIGHT_STABILITY_FACTOR = 3.0


@dataclass
class Group:
    """Unreflected memories of one database, scope, user and category (or one part of such a group)."""

    store_path: Path
    scope: str
    user_id: str | None
    category: str
    records: list[MemoryRecord]

    def to_dict(self) -> dict[str, Any]:
        return {
            "category": self.category,
            "scope": self.scope,
            "userId": self.user_id,
            "sources": len(self.records),
        }


@dataclass
class PlannedInsight:
    candidate: Candidate
    topic: str
    confidence: float
    evidence: list[str]  # record ids, all of the group
    stability: float | None  # INSIGHT_STABILITY_FACTOR x the mean stability of the evidence
    action: str = "planned"  # then what write_memories did: added, merged, duplicate, skipped
    record_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "l0": self.candidate.l0,
            "l1": self.candidate.l1,
            "confidence": self.confidence,
            "evidence": self.evidence,
            "stability": self.stability,
            "action": self.action,
            "id": self.record_id,
        }


@dataclass
class GroupOutcome:
    group: Group
    insights: list[PlannedInsight] = field(default_factory=list)
    ignored_evidence: list[str] = field(default_factory=list)  # references the model made up
    skipped: list[dict[str, str]] = field(default_factory=list)  # insights not kept, and why
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.group.to_dict(),
            "insights": [i.to_dict() for i in self.insights],
            "ignoredEvidence": self.ignored_evidence,
            "skipped": self.skipped,
            "notes": self.notes,
        }


def collect_groups(service: MemoryService, categories: Sequence[str]) -> list[Group]:
    """The unreflected memories of every database this agent reads, grouped, oldest first in each."""
    groups: list[Group] = []
    for store in service.existing_stores():
        by_key: dict[tuple[str, str | None, str], list[MemoryRecord]] = {}
        for record in store.storage.unreflected(categories):
            by_key.setdefault((record.scope, record.user_id, record.category), []).append(record)
        for (scope, user, category), records in by_key.items():
            groups += [Group(store.path, scope, user, category, part) for part in _parts(records)]
    return groups


def _parts(records: list[MemoryRecord]) -> Iterator[list[MemoryRecord]]:
    """The records in runs whose prompt lines stay within MAX_PROMPT_TOKENS."""
    part: list[MemoryRecord] = []
    used = 0
    for record in records:
        cost = count_tokens(record.l0) + 12  # the reference and date around it
        if part and used + cost > MAX_PROMPT_TOKENS:
            yield part
            part, used = [], 0
        part.append(record)
        used += cost
    if part:
        yield part


def ask_group(
    group: Group, llm: LlmSettings, model: str, *, max_insights: int, max_text_chars: int, now: datetime
) -> GroupOutcome:
    """One model call for `group`, its reply checked and turned into insights to write."""
    from openclaw_cli.llm import calls as client

    messages = build_messages(group.category, group.records, max_insights)
    try:
        reply = client.complete_json(
            model,
            messages,
            ReflectionReply,
            llm.api_base,
            api_key=llm.api_key,
            max_retries=llm.max_retries,
            timeout=llm.timeout_seconds,
            temperature=0,
        )
    except client.ModelUnavailable as exc:
        raise type(exc)(
            f"reflection on {group.category} memories failed: {exc.message}",
            hint="nothing was changed; check llm.model and llm.apiBase, then run `openclaw reflect` again",
        ) from exc
    return plan_insights(group, reply, max_insights=max_insights, max_text_chars=max_text_chars, now=now)


def plan_insights(
    group: Group, reply: ReflectionReply, *, max_insights: int, max_text_chars: int, now: datetime
) -> GroupOutcome:
    outcome = GroupOutcome(group)
    known = _references(group.records)
    kept: dict[str, PlannedInsight] = {}
    for item in sorted(reply.insights, key=lambda i: -i.confidence):
        evidence = _evidence(item, known, outcome)
        topic = topic_key(item.topic)
        reason = _reason_to_skip(evidence, topic, kept, max_insights)
        if reason:
            outcome.skipped.append({"insight": item.insight, "reason": reason})
            continue
        if item.category not in (None, "insight"):
            outcome.notes.append(f"the model called an insight {item.category!r}: stored as insight")
        kept[topic] = _planned(
            group, item, topic, [known[ref].id for ref in evidence], known, max_text_chars, now
        )
    outcome.insights = list(kept.values())
    return outcome


def _references(records: Sequence[MemoryRecord]) -> dict[str, MemoryRecord]:
    """What the model may call a memory: its line reference (m3) or its own id."""
    known = {reference(n): record for n, record in enumerate(records)}
    known.update({record.id.casefold(): record for record in records})
    return known


def _evidence(item: InsightReply, known: dict[str, MemoryRecord], outcome: GroupOutcome) -> list[str]:
    found: list[str] = []
    for given in item.evidence:
        ref = given.strip().casefold()
        if ref not in known:
            outcome.ignored_evidence.append(given)
        elif known[ref].id not in (known[f].id for f in found):
            found.append(ref)
    return found


def _reason_to_skip(
    evidence: list[str], topic: str, kept: dict[str, PlannedInsight], max_insights: int
) -> str | None:
    if not evidence:
        return "no evidence among the memories it was shown"
    if topic in kept:
        return f"a more confident insight on the same topic ({topic!r})"
    if len(kept) >= max_insights:
        return f"over the limit of {max_insights} insights per group"
    return None


def _planned(
    group: Group,
    item: InsightReply,
    topic: str,
    evidence_ids: list[str],
    known: dict[str, MemoryRecord],
    max_text_chars: int,
    now: datetime,
) -> PlannedInsight:
    by_id = {record.id: record for record in known.values()}
    sources = [by_id[i] for i in evidence_ids]
    stabilities = [s.fsrs.stability for s in sources if s.fsrs.stability is not None]
    # L2 is the verbatim source: here the evidence as it was recorded, dated, within the size limit.
    l2 = "\n".join(f"[{s.created_at:%Y-%m-%d}] {' '.join(s.l0.split())}" for s in sources)[:max_text_chars]
    candidate = Candidate(
        l0=" ".join(item.insight.split()),
        category="insight",
        l1=" ".join(item.detail.split()) if item.detail else None,
        l2=l2,
        scope=group.scope,
        user_id=group.user_id,
        attribute=topic,
        source={
            "kind": "reflection",
            "category": group.category,
            "evidence": evidence_ids,
            "confidence": item.confidence,
        },
        created_at=now,
    )
    stability = INSIGHT_STABILITY_FACTOR * sum(stabilities) / len(stabilities) if stabilities else None
    return PlannedInsight(candidate, topic, item.confidence, evidence_ids, stability)
