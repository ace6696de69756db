"""What `openclaw memory purge` asks for (ForgetRequest) and what it did (ForgetReport), as the CLI prints it
and as the running gateway sends it back (forget/client.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ForgetRequest:
    person: str  # canonical (resolve_person)
    agent_id: str
    all_agents: bool = False
    sessions: bool = False


@dataclass
class ForgetReport:
    user: str
    memories: int = 0
    history_rows: int = 0
    derived: int = 0  # memories of others (or the agent's) made from the person's messages
    sessions: int = 0  # the person's own sessions, deleted
    redacted_sessions: int = 0
    redacted_messages: int = 0
    summaries: int = 0  # summaries dropped because they were built from redacted messages
    journal: int = 0  # gateway journal entries removed
    files: list[str] = field(default_factory=list)  # other files cleaned or removed
    left: list[str] = field(default_factory=list)  # files that still hold the words (not ours to edit)
    databases: list[str] = field(default_factory=list)
    stores: list[dict[str, Any]] = field(default_factory=list)  # per store purged: where, what it removed
    unreachable: list[dict[str, str]] = field(default_factory=list)  # known stores it could not reach
    not_covered: list[str] = field(default_factory=list)  # agents this purge did not cover
    # Other ids that may be the same person (the same peer id on another channel, or bare), not purged:
    # `/v1` `user: "victim"` is `openai:victim`, and `--user victim` another person unless linked.
    lookalikes: list[str] = field(default_factory=list)
    via: str = "direct"  # or "gateway": the running gateway did the work
    disk_note: str | None = None  # what the purge guarantees on disk, where that is less than every byte

    @property
    def warning(self) -> str | None:
        parts = []
        if self.not_covered:
            parts.append(
                f"{self.user!r} remains in other agents ({', '.join(self.not_covered)}): this purge covered "
                "only this agent and the shared store; rerun with --all-agents"
            )
        if self.unreachable:
            parts += [u["error"] for u in self.unreachable]
        if self.left:
            parts.append(
                f"these files still hold words of {self.user!r} and were left as they are (they are yours "
                f"to edit): {', '.join(self.left)}"
            )
        return "; ".join(parts) or None

    def to_dict(self) -> dict[str, Any]:
        return {
            "user": self.user,
            "purged": self.memories,
            "historyRows": self.history_rows,
            "derived": self.derived,
            "sessions": self.sessions,
            "redactedSessions": self.redacted_sessions,
            "redactedMessages": self.redacted_messages,
            "summariesDropped": self.summaries,
            "journalEntries": self.journal,
            "files": self.files,
            "left": self.left,
            "databases": self.databases,
            "stores": self.stores,
            "unreachable": self.unreachable,
            "notCovered": self.not_covered,
            "lookalikes": self.lookalikes,
            "via": self.via,
            "warning": self.warning,
            "diskNote": self.disk_note,
        }

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> ForgetReport:
        """A report as the gateway's `memory.purge` sent it."""
        return cls(
            user=str(value.get("user")),
            memories=int(value.get("purged") or 0),
            history_rows=int(value.get("historyRows") or 0),
            derived=int(value.get("derived") or 0),
            sessions=int(value.get("sessions") or 0),
            redacted_sessions=int(value.get("redactedSessions") or 0),
            redacted_messages=int(value.get("redactedMessages") or 0),
            summaries=int(value.get("summariesDropped") or 0),
            journal=int(value.get("journalEntries") or 0),
            files=[str(f) for f in value.get("files") or []],
            left=[str(f) for f in value.get("left") or []],
            databases=[str(d) for d in value.get("databases") or []],
            stores=[dict(s) for s in value.get("stores") or []],
            unreachable=[{str(k): str(v) for k, v in u.items()} for u in value.get("unreachable") or []],
            not_covered=[str(a) for a in value.get("notCovered") or []],
            lookalikes=[str(p) for p in value.get("lookalikes") or []],
            via=str(value.get("via") or "gateway"),
            disk_note=value.get("diskNote"),
        )
