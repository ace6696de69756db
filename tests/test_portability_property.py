"""Property: export, import into an empty home, export again: the same records (exportedAt aside)."""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from openclaw_cli.memory.store.record_rows import new_record
from openclaw_cli.memory.store.records import FsrsState
from openclaw_cli.memory.text.analysis import normalise_l0
from tests.portability_helpers import FakeService, export_text, import_file

# English and Chinese letters, digits, spaces and punctuation (full-width too), so normalisation matters.
ALPHABET = list("abcdefghijklmnopqrstuvwxyzABCXYZ0129 ,.!?-'") + list(
    "我喜欢喝咖啡不茶用写代码的是了，。！？"
)
TEXT = st.text(alphabet=ALPHABET, min_size=1, max_size=60).filter(lambda t: t.strip() != "")
EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
MOMENT = st.integers(0, 60 * 24 * 3600 * 1000).map(lambda ms: EPOCH + timedelta(milliseconds=ms))
FSRS = st.builds(
    FsrsState,
    stability=st.none() | st.floats(0.01, 36500, allow_nan=False),
    difficulty=st.none() | st.floats(1, 10, allow_nan=False),
    last_review=st.none() | MOMENT,
    next_review=st.none() | MOMENT,
    reps=st.integers(0, 100),
    lapses=st.integers(0, 20),
)
ITEM = st.fixed_dictionaries(
    {
        "l0": TEXT,
        "l1": st.none() | TEXT,
        "l2": st.none() | TEXT,
        "scope": st.sampled_from(["user", "agent"]),
        "user": st.sampled_from(["lin", "alex", "default"]),
        "category": st.sampled_from(["profile", "preference", "event", "case", "lesson", "insight", "note"]),
        "created": MOMENT,
        "fsrs": FSRS,
        "source": st.none() | st.fixed_dictionaries({"chat": TEXT, "line": st.integers(0, 10**6)}),
    }
)


def _dedup_key(item: dict[str, Any]) -> tuple[str, str | None, str]:
    # Records that normalise to the same text for the same owner are exact duplicates: import keeps one.
    return item["scope"], item["user"] if item["scope"] == "user" else None, normalise_l0(item["l0"])


def _records_of(text: str, kind: str) -> list[dict[str, Any]]:
    if kind == "json":
        return list(json.loads(text)["records"])
    return [json.loads(line) for line in text.splitlines()[1:-1]]


@settings(max_examples=25, deadline=None)
@given(
    items=st.lists(ITEM, min_size=1, max_size=8, unique_by=_dedup_key),
    kind=st.sampled_from(["json", "jsonl"]),
)
def test_export_import_export_holds_the_same_records(items: list[dict[str, Any]], kind: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        first = FakeService(root / "a")
        records = [
            new_record(
                record_id=f"mem-{n}",
                l0=item["l0"].strip(),
                agent_id="main",
                scope=item["scope"],
                user_id=item["user"] if item["scope"] == "user" else None,
                category=item["category"],
                l1=item["l1"].strip() if item["l1"] else None,
                l2=item["l2"].strip() if item["l2"] else None,
                created_at=item["created"],
                source=item["source"],
                fsrs=item["fsrs"],
            )
            for n, item in enumerate(items)
        ]
        assert len(first.add_many(records).ids) == len(items)
        exported = export_text(first, kind)
        path = root / f"export.{kind}"
        path.write_text(exported, encoding="utf-8")
        second = FakeService(root / "b")
        report = import_file(second, path)
        assert len(report.added) == len(items) and not report.duplicates and not report.invalid
        again = export_text(second, kind)
        before, after = _records_of(exported, kind), _records_of(again, kind)
        assert sorted(after, key=lambda r: r["id"]) == sorted(before, key=lambda r: r["id"])
        first.close()
        second.close()
