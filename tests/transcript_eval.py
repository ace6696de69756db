"""The conversational eval of transcript search (fixtures/eval/transcripts.json): build a home whose sessions
are the fixture's dialogues plus generated distractor sessions, index it, and score each question kind
by recall@5, recall@10 and MRR on turn-level evidence (a group of turns is found when any of them is)."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from openclaw_cli.core.paths import Home
from openclaw_cli.memory.store.transcripts import TurnFilter
from openclaw_cli.memory.transcripts.index import TranscriptIndex
from openclaw_cli.memory.transcripts.search import TranscriptRequest
from openclaw_cli.sessions.keys import parse_key
from openclaw_cli.sessions.store import SessionStore

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "eval" / "transcripts.json"
KEY = "agent:main:telegram:default:direct:maya"
DISTRACTOR_SESSIONS = 40


def load() -> dict[str, Any]:
    return dict(json.loads(FIXTURE.read_text(encoding="utf-8")))


def distractor_sessions(data: dict[str, Any], count: int = DISTRACTOR_SESSIONS) -> list[dict[str, Any]]:
    """Deterministic small-talk sessions on other topics, in both languages, spread over the same months."""
    spec = data["distractors"]
    rng = random.Random(24)
    sessions = []
    for number in range(count):
        chinese = number % 4 == 3
        templates, topics = (spec["zh"], spec["topics_zh"]) if chinese else (spec["en"], spec["topics_en"])
        topic = rng.choice(topics)
        turns = []
        for turn in range(rng.randint(4, 8)):
            role = "user" if turn % 2 == 0 else "assistant"
            turns.append([role, rng.choice(templates).format(topic=topic)])
        day = datetime(2026, 1, 5, tzinfo=UTC) + timedelta(days=rng.randint(0, 75))
        sessions.append(
            {"id": f"noise-{number}", "person": "maya", "date": day.date().isoformat(), "turns": turns}
        )
    return sessions


def write_home(home: Path, data: dict[str, Any], distractors: int = DISTRACTOR_SESSIONS) -> dict[str, str]:
    """Every session of the eval (in date order, each archived when the next starts); fixture id -> session id."""
    sessions = sorted([*data["sessions"], *distractor_sessions(data, distractors)], key=lambda s: s["date"])
    store = SessionStore(Home(home), "main")
    ids: dict[str, str] = {}
    previous = None
    try:
        for session in sessions:
            start = datetime.fromisoformat(session["date"]).replace(hour=19, tzinfo=UTC)
            if previous is not None:
                store.set_status(previous, "archived", start)
            meta = store.create_session(parse_key(KEY), start, user_id=session["person"])
            previous = ids[session["id"]] = meta["sessionId"]
            for number, (role, text) in enumerate(session["turns"]):
                person = session["person"] if role == "user" else None
                store.append(previous, role, text, start + timedelta(minutes=number), user_id=person)
    finally:
        store.close()
    return ids


@dataclass
class Scores:
    recall5: list[float] = field(default_factory=list)
    recall10: list[float] = field(default_factory=list)
    reciprocal: list[float] = field(default_factory=list)

    def add(self, groups: list[set[tuple[str, int]]], ranked: list[tuple[str, int]]) -> None:
        for k, out in ((5, self.recall5), (10, self.recall10)):
            top = set(ranked[:k])
            out.append(sum(1 for group in groups if group & top) / len(groups))
        wanted = set().union(*groups)
        rank = next((n for n, turn in enumerate(ranked, start=1) if turn in wanted), None)
        self.reciprocal.append(0.0 if rank is None else 1.0 / rank)

    def as_dict(self) -> dict[str, float]:
        n = len(self.recall10) or 1
        return {
            "questions": len(self.recall10),
            "recall@5": round(sum(self.recall5) / n, 3),
            "recall@10": round(sum(self.recall10) / n, 3),
            "mrr": round(sum(self.reciprocal) / n, 3),
        }


def evaluate(
    index: TranscriptIndex, data: dict[str, Any], ids: dict[str, str]
) -> dict[str, dict[str, float]]:
    """recall@5, recall@10 and MRR per kind and overall (searching as the operator, k=10)."""
    by_kind: dict[str, Scores] = defaultdict(Scores)
    overall = Scores()
    for question in data["questions"]:
        groups = [{(ids[session], turn) for session, turn in group} for group in question["evidence"]]
        result = index.search(TranscriptRequest(question["q"], 10, TurnFilter()))
        ranked = [(hit.turn.session_id, hit.turn.index) for hit in result.hits if hit.turn.kind == "message"]
        by_kind[question["kind"]].add(groups, ranked)
        overall.add(groups, ranked)
    out = {kind: scores.as_dict() for kind, scores in sorted(by_kind.items())}
    out["overall"] = overall.as_dict()
    return out
