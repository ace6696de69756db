"""Merge by category (seed 000 §3.1) and the dedup traps of seed 000 §6.2, through `write_memories`.

Real database files and the real default embedder; the judge is the caller's plain function (in use, the
LLM). Trap 4 (every injected memory shows its date) belongs to injection and is tested there.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from openclaw_cli.memory.search.pipeline import SearchRequest
from openclaw_cli.memory.service import MemoryService
from openclaw_cli.memory.writing.candidate import Candidate
from openclaw_cli.memory.writing.write_path import write_memories
from tests import fake_openai as fake_server
from tests.memory_helpers import WIDE_GREY, api_settings, service_for
from tests.memory_helpers import FixedJudge as Judge
from tests.memory_helpers import dedup_service as _service

fake_openai = fake_server.fake_openai

T0 = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)
T1 = T0 + timedelta(days=30)


def _history_actions(service: MemoryService, record_id: str) -> list[str]:
    return [h["action"] for h in service.history(record_id)]


def _update_then(
    tmp_path: Path, category: str, old: str, new: str, **fields: Any
) -> tuple[MemoryService, str, Any]:
    service = _service(tmp_path, **WIDE_GREY)
    [first] = write_memories(service, [Candidate(old, category, l2=f"user: {old}")], now=T0)
    [second] = write_memories(service, [Candidate(new, category, **fields)], judge=Judge("update"), now=T1)
    return service, first.record_id or "", second


def test_preference_update_is_latest_wins_with_the_old_value_in_history(tmp_path: Path) -> None:
    old, new = "Drinks coffee every morning", "Gave up coffee and drinks tea in the morning now"
    service, rid, outcome = _update_then(tmp_path, "preference", old, new, l2="user: no more coffee for me")
    assert (outcome.action, outcome.record_id) == ("merged", rid)
    [record] = service.list_records()
    assert (record.id, record.l0, record.l2) == (rid, new, "user: no more coffee for me")
    assert record.created_at == T1 and record.updated_at == T1
    history = service.history(rid)
    assert [h["action"] for h in history] == ["add", "update"]
    assert history[1]["old"]["l0"] == old and history[1]["old"]["l2"] == f"user: {old}"
    assert history[1]["new"]["l0"] == new
    assert history[0]["new"]["l0"] == old


def test_merge_reindexes_keywords_and_vector(tmp_path: Path) -> None:
    old, new = "Drinks coffee every morning", "Gave up coffee and drinks tea in the morning now"
    service, rid, _ = _update_then(tmp_path, "preference", old, new)
    tea = service.search(SearchRequest(query="tea", mode="bm25"))
    assert [h.record.id for h in tea.hits] == [rid]
    assert service.search(SearchRequest(query="every", mode="bm25")).hits == []
    assert service.get(rid).vector_status == "ready"
    by_meaning = service.search(SearchRequest(query="gave up coffee, drinks tea now", mode="vector"))
    assert by_meaning.hits[0].record.id == rid


def test_insight_update_is_latest_wins(tmp_path: Path) -> None:
    old = "The user seems to prefer async communication"
    new = "The user strongly prefers async communication and avoids calls"
    service, rid, outcome = _update_then(tmp_path, "insight", old, new)
    assert outcome.action == "merged"
    assert [r.l0 for r in service.list_records()] == [new]
    assert _history_actions(service, rid) == ["add", "update"]


def test_lesson_update_appends_with_dates(tmp_path: Path) -> None:
    old = "Back up the database before a migration"
    new = "Back up the database and test the restore before a migration"
    service, rid, outcome = _update_then(
        tmp_path, "lesson", old, new, l2="user: the restore failed last time"
    )
    assert (outcome.action, outcome.record_id) == ("merged", rid)
    [record] = service.list_records()
    assert record.l0 == new
    assert record.l1 == f"[2026-02-01] {old}\n[2026-03-03] {new}"
    assert record.l2 == f"user: {old}\n\nuser: the restore failed last time"
    assert record.created_at == T0  # the lesson has been known since then
    assert _history_actions(service, rid) == ["add", "update"]


def test_event_and_case_never_merge(tmp_path: Path) -> None:
    for category in ("event", "case"):
        old, new = "Drinks coffee every morning", "Gave up coffee and drinks tea in the morning now"
        service, rid, outcome = _update_then(tmp_path / category, category, old, new)
        assert outcome.action == "added"
        assert f"{category}s never merge" in outcome.reason
        assert sorted(r.l0 for r in service.list_records()) == sorted([old, new])
        assert _history_actions(service, rid) == ["add"]


def test_profile_overwrites_by_attribute_without_a_similar_vector(tmp_path: Path) -> None:
    service = _service(tmp_path)  # the default zones: these two texts are not alike by meaning
    judge = Judge("different")
    [first] = write_memories(service, [Candidate("Lives in Berlin", "profile", attribute="city")], now=T0)
    [moved] = write_memories(
        service, [Candidate("Moved to Munich last month", "profile", attribute="city")], judge=judge, now=T1
    )
    assert (moved.action, moved.record_id) == ("merged", first.record_id)
    assert judge.asked == []
    assert [r.l0 for r in service.list_records()] == ["Moved to Munich last month"]
    [other_user] = write_memories(
        service, [Candidate("Lives in Berlin", "profile", attribute="city", user_id="sam")]
    )
    assert other_user.action == "added"


def test_merge_counts_as_a_review(tmp_path: Path) -> None:
    old, new = "Drinks coffee every morning", "Gave up coffee and drinks tea in the morning now"
    service, rid, _ = _update_then(tmp_path, "preference", old, new)
    record = service.get(rid)
    assert (record.fsrs.reps, record.fsrs.last_review) == (1, T1)


def test_history_of_a_memory_gone_after_index_is_still_readable(tmp_path: Path) -> None:
    old, new = "Drinks coffee every morning", "Gave up coffee and drinks tea in the morning now"
    service, rid, _ = _update_then(tmp_path, "preference", old, new)
    service.delete(rid)
    service.repair_indexes()  # clears the tombstone
    assert not any(store.exists(rid) for store in service.existing_stores())
    history = service.history(rid)
    assert [h["action"] for h in history] == ["add", "update", "delete"]
    assert [h["old"]["l0"] if h["old"] else None for h in history] == [None, old, new]


# --------------------------------------------------------------------------- seed 000 §6.2


def test_trap1_repeating_i_like_coffee_is_a_noop_never_a_delete(tmp_path: Path) -> None:
    # Mem0 #1674: the LLM called a repetition a contradiction and deleted the preference. Here exact and
    # near-exact repetitions never reach the judge, and no verdict can delete anything.
    service = _service(tmp_path)
    judge = Judge("update")
    [first] = write_memories(service, [Candidate("I like coffee", "preference")], judge=judge, now=T0)
    repeats = write_memories(
        service,
        [
            Candidate("I like coffee", "preference"),
            Candidate("I like coffee!", "preference"),
            Candidate("我喜欢咖啡", "preference"),  # the same said in Chinese: a duplicate by meaning
            Candidate("我喜欢咖啡。", "preference"),
        ],
        judge=judge,
        now=T1,
    )
    assert [(o.action, o.record_id) for o in repeats] == [("duplicate", first.record_id)] * 4
    assert judge.asked == []
    assert [r.l0 for r in service.list_records()] == ["I like coffee"]
    assert _history_actions(service, first.record_id or "") == ["add"]
    assert service.get(first.record_id or "").fsrs.reps == 4


def test_trap2_promotion_keeps_new_value_in_record_and_old_in_history(tmp_path: Path) -> None:
    # cognee #1831: first write wins and the promotion is silently dropped. Profile overwrites.
    service = _service(tmp_path)
    [first] = write_memories(
        service, [Candidate("Zhang San is an engineer", "profile", attribute="zhang san: job")], now=T0
    )
    [promoted] = write_memories(
        service,
        [Candidate("Zhang San was promoted to manager", "profile", attribute="zhang san: job")],
        now=T1,
    )
    assert (promoted.action, promoted.record_id) == ("merged", first.record_id)
    assert [r.l0 for r in service.list_records()] == ["Zhang San was promoted to manager"]
    history = service.history(first.record_id or "")
    assert history[-1]["action"] == "update"
    assert history[-1]["old"]["l0"] == "Zhang San is an engineer"
    # Without an attribute key the judge decides, and an update still overwrites.
    zh = _service(tmp_path / "zh", **WIDE_GREY)
    [old] = write_memories(zh, [Candidate("张三是工程师", "profile")], now=T0)
    [new] = write_memories(zh, [Candidate("张三升了经理", "profile")], judge=Judge("update"), now=T1)
    assert (new.action, new.record_id) == ("merged", old.record_id)
    assert [r.l0 for r in zh.list_records()] == ["张三升了经理"]
    assert zh.history(old.record_id or "")[-1]["old"]["l0"] == "张三是工程师"


def test_trap3_l2_keeps_the_users_exact_words(tmp_path: Path) -> None:
    # The summary may be distorted ("likes vegetables"); L2 keeps what the user said, word for word.
    words = "2026-02-01 09:00 user: 我讨厌西兰花 (I hate broccoli)"
    service = _service(tmp_path, **WIDE_GREY)
    [first] = write_memories(service, [Candidate("User likes vegetables", "preference", l2=words)], now=T0)
    assert service.get(first.record_id or "").l2 == words
    # A later summary merged over it without its own source keeps the user's words...
    [merged] = write_memories(
        service, [Candidate("User likes green vegetables", "preference")], judge=Judge("update"), now=T1
    )
    assert merged.action == "merged"
    assert service.get(first.record_id or "").l2 == words
    # ...and one with its own source keeps both: the new in the record, the old in history.
    later = "2026-03-03 10:00 user: 其实我喜欢菠菜"
    write_memories(
        service, [Candidate("User likes spinach", "preference", l2=later)], judge=Judge("update"), now=T1
    )
    assert service.get(first.record_id or "").l2 == later
    assert [h["old"]["l2"] for h in service.history(first.record_id or "") if h["action"] == "update"] == [
        words,
        words,
    ]
    # A distorted summary is never taken for the user's words: the two are not duplicates.
    plain = _service(tmp_path / "plain")
    write_memories(plain, [Candidate("Hates broccoli", "preference")])
    [other] = write_memories(plain, [Candidate("Likes vegetables", "preference")])
    assert other.action == "added"


def test_embedder_down_keeps_exact_dedup_and_merges_without_losing_anything(
    tmp_path: Path, fake_openai
) -> None:  # type: ignore[no-untyped-def]
    service = service_for(tmp_path, api_settings(fake_openai.url))
    fake_openai.fail_next(1, status=500)
    [first] = write_memories(service, [Candidate("Lives in Berlin", "profile", attribute="city")])
    assert first.action == "added" and "no vector yet" in first.reason
    assert service.get(first.record_id or "").vector_status == "pending"
    fake_openai.fail_next(1, status=500)
    [again] = write_memories(service, [Candidate("Lives in Berlin.", "profile", attribute="city")])
    assert (again.action, again.record_id) == ("duplicate", first.record_id)
    [moved] = write_memories(service, [Candidate("Moved to Munich", "profile", attribute="city")])
    assert moved.action == "merged" and service.get(first.record_id or "").vector_status == "ready"
    fake_openai.fail_next(1, status=500)
    [later] = write_memories(service, [Candidate("Moved to Hamburg", "profile", attribute="city")])
    assert later.action == "merged"
    record = service.get(first.record_id or "")
    assert (record.l0, record.vector_status) == ("Moved to Hamburg", "pending")  # the old vector is gone
    assert service.repair_indexes()[0].vectors_added == 1
    assert service.search(SearchRequest("Hamburg", mode="vector")).hits[0].record.id == first.record_id
    assert _history_actions(service, first.record_id or "") == ["add", "update", "update"]
    service.close()
