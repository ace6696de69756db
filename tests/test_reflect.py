"""Reflection (seed 000 §7) in process: real databases, the model played by the fake server on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from openclaw_cli.core.errors import Conflict, InvalidInput
from openclaw_cli.llm.calls import InvalidReply, ModelUnavailable
from openclaw_cli.memory.reflect.run import LAST_RUN_KEY, reflection_due, run_lock, run_reflection
from openclaw_cli.memory.service import MemoryService
from openclaw_cli.memory.store.sqlite.meta import get_meta
from tests import fake_openai as fake_server
from tests.fake_openai import FakeOpenAI
from tests.memory_helpers import add, service_for
from tests.reflect_helpers import llm_settings, prompt_of, snapshot, summarising_model

fake_openai = fake_server.fake_openai
NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
WRITTEN = NOW - timedelta(days=10)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[MemoryService]:
    svc = service_for(tmp_path / "home")
    yield svc
    svc.close()


@pytest.fixture
def locks(tmp_path: Path) -> Path:
    return tmp_path / "locks"


def seed(service: MemoryService) -> dict[str, list[str]]:
    """Three preferences and two events of the default user, written ten days ago."""
    return {
        "preference": [
            add(service, text, category="preference", created_at=WRITTEN)
            for text in ("prefers dark mode in the editor", "chose a dark Slack theme", "likes minimal UIs")
        ],
        "event": [
            add(service, text, category="event", created_at=WRITTEN)
            for text in ("submitted PR #342 fixing login", "submitted PR #351 for the dashboard")
        ],
    }


def reply(*insights: dict[str, object]) -> str:
    return json.dumps({"insights": list(insights)})


def insight(
    evidence: list[str], topic: str = "theme", confidence: float = 0.9, **more: object
) -> dict[str, object]:
    return {
        "topic": topic,
        "insight": f"insight on {topic}",
        "confidence": confidence,
        "evidence": evidence,
        **more,
    }


def insights_of(service: MemoryService) -> list:  # type: ignore[type-arg]
    return service.list_records(category="insight")


# ------------------------------------------------------------------ the run


def test_reflection_writes_insights_and_reweights_their_sources(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    ids = seed(service)
    before = {i: service.get(i).fsrs.stability for group in ids.values() for i in group}
    fake_openai.respond_with(summarising_model)
    report = run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW)

    assert report.ran and report.model_calls == 2 == len(fake_openai.requests_to("/chat/completions"))
    assert report.reflected == 5 and report.insights_written == 2
    written = {r.source["category"]: r for r in insights_of(service)}  # type: ignore[index]
    assert set(written) == {"preference", "event"}
    pref = written["preference"]
    assert pref.category == "insight" and pref.attribute == "preference pattern"
    assert pref.source["evidence"] == ids["preference"] and pref.source["confidence"] == 0.8  # type: ignore[index]
    assert pref.created_at == NOW
    mean = sum(before[i] for i in ids["preference"]) / 3
    assert pref.fsrs.stability == pytest.approx(3 * mean)
    assert pref.fsrs.next_review == pref.fsrs.last_review + timedelta(days=3 * mean)  # type: ignore[operator]
    for record_id in ids["preference"] + ids["event"]:
        after = service.get(record_id)
        assert after.reflected_at == NOW
        assert after.fsrs.stability == pytest.approx(before[record_id] * 0.5)
        history = service.history(record_id)
        assert history[-1]["action"] == "update" and "reflection" in history[-1]["reason"]
        assert history[-1]["old"]["fsrs"]["stability"] == pytest.approx(before[record_id])
    store = next(service.existing_stores())
    assert get_meta(store.conn, LAST_RUN_KEY) == "2026-05-01T12:00:00.000Z"


def test_memories_not_cited_as_evidence_are_marked_but_keep_their_stability(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    ids = seed(service)
    cited, uncited = ids["preference"][0], ids["preference"][2]
    before = service.get(uncited).fsrs.stability
    fake_openai.script_chat(reply(), reply(insight(["m1", "m2"])))  # events are asked first
    run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW)
    assert service.get(uncited).reflected_at == NOW
    assert service.get(uncited).fsrs.stability == before
    assert service.get(cited).fsrs.stability == pytest.approx(
        service.history(cited)[-1]["old"]["fsrs"]["stability"] * 0.5
    )


def test_groups_are_per_category_and_per_user(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    add(service, "likes green tea", category="preference", user_id="lin")
    add(service, "likes black tea", category="preference", user_id="sam")
    add(service, "works in Berlin", category="profile", user_id="sam")
    fake_openai.respond_with(summarising_model)
    report = run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW)
    assert report.model_calls == 3
    owners = sorted((r.user_id, r.source["category"]) for r in insights_of(service))  # type: ignore[index]
    assert owners == [("lin", "preference"), ("sam", "preference"), ("sam", "profile")]


def test_insights_and_notes_are_never_reflected_on(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    add(service, "an older insight", category="insight")
    add(service, "a workspace note", category="note")
    fake_openai.respond_with(summarising_model)
    report = run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW)
    assert not report.ran and report.reason == "no unreflected memories"
    assert fake_openai.requests_to("/chat/completions") == []


def test_a_second_run_finds_nothing_new(service: MemoryService, fake_openai: FakeOpenAI, locks: Path) -> None:
    seed(service)
    fake_openai.respond_with(summarising_model)
    run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW)
    again = run_reflection(
        service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW + timedelta(days=2)
    )
    assert not again.ran and len(fake_openai.requests_to("/chat/completions")) == 2


def test_category_option_reflects_on_that_category_only(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    ids = seed(service)
    fake_openai.respond_with(summarising_model)
    report = run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW, category="event")
    assert [g.group.category for g in report.groups] == ["event"]
    assert all(service.get(i).reflected_at is None for i in ids["preference"])


def test_reflecting_on_insights_is_refused(service: MemoryService, locks: Path) -> None:
    with pytest.raises(InvalidInput, match="cannot reflect on category 'insight'"):
        run_reflection(service, llm_settings("http://127.0.0.1:9"), lock_dir=locks, category="insight")


def test_a_new_insight_on_the_same_topic_replaces_the_older_one_which_stays_in_history(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    """Latest-wins: the topic, folded, is the attribute the writer finds the older insight by."""
    add(service, "prefers dark mode", category="preference")
    fake_openai.script_chat(reply(insight(["m1"], topic="Editor Theme")))
    run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW)
    add(service, "switched the terminal to a dark theme", category="preference")
    fake_openai.script_chat(reply(insight(["m1"], topic="editor theme!")))
    run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW + timedelta(days=1))
    found = insights_of(service)
    assert {r.attribute for r in found} == {"editor theme"}
    assert len(found) == 1, "the second insight replaces the first instead of sitting beside it"
    changes = [row["action"] for row in service.history(found[0].id)]
    assert changes[0] == "add" and "update" in changes


def test_dry_run_reports_the_insights_and_changes_nothing(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    seed(service)
    before = snapshot(service)
    fake_openai.respond_with(summarising_model)
    report = run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW, dry_run=True)
    assert report.ran and report.dry_run and report.reflected == 0
    planned = [i for g in report.groups for i in g.insights]
    assert len(planned) == 2 and all(i.action == "planned" for i in planned)
    assert report.to_dict()["groups"][0]["insights"][0]["l0"].startswith("Across ")
    assert snapshot(service) == before


# ------------------------------------------------------------------ what the model gets wrong


def test_each_group_yields_at_most_max_insights(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    seed(service)
    many = [insight(["m1"], topic=f"topic {n}", confidence=n / 10) for n in range(1, 8)]
    fake_openai.script_chat(reply(*many), reply())
    report = run_reflection(
        service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW, category="preference"
    )
    kept = report.groups[0].insights
    assert len(kept) == 5 == len(insights_of(service))
    assert [i.confidence for i in kept] == [0.7, 0.6, 0.5, 0.4, 0.3]
    assert [s["reason"] for s in report.groups[0].skipped] == ["over the limit of 5 insights per group"] * 2


def test_max_insights_follows_the_setting(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    seed(service)
    fake_openai.script_chat(reply(*[insight(["m1"], topic=f"t{n}") for n in range(4)]))
    settings = llm_settings(fake_openai.url).model_copy(deep=True)
    settings.memory.reflection.max_insights = 2
    report = run_reflection(service, settings, lock_dir=locks, now=NOW, category="preference")
    assert len(report.groups[0].insights) == 2
    assert (
        "at most 2 insights" in fake_openai.requests_to("/chat/completions")[0].body["messages"][0]["content"]
    )


def test_model_returns_prose_fails_with_nothing_changed(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    seed(service)
    before = snapshot(service)
    fake_openai.script_chat("The user seems to like dark themes.", "Again: they like dark themes.")
    with pytest.raises(InvalidReply, match="reflection on event memories failed: the reply holds no JSON"):
        run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW)
    assert snapshot(service) == before
    assert len(fake_openai.requests_to("/chat/completions")) == 2  # the corrective retry, then give up


def test_model_returns_prose_once_then_json_after_the_correction(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    seed(service)
    fake_openai.script_chat("Let me think about this...", reply(insight(["m1", "m2"])))
    report = run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW, category="event")
    assert report.insights_written == 1
    correction = fake_openai.requests_to("/chat/completions")[1].body["messages"][-1]["content"]
    assert "not valid" in correction


def test_model_returns_truncated_json_fails_with_nothing_changed(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    seed(service)
    before = snapshot(service)
    truncated = reply(insight(["m1", "m2"]))[:-12]
    fake_openai.script_chat(truncated, truncated)
    with pytest.raises(InvalidReply, match="does not fit the expected JSON"):
        run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW)
    assert snapshot(service) == before


def test_model_returns_an_unknown_category(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    seed(service)
    fake_openai.script_chat(reply(insight(["m1", "m2"], category="hobby")))
    report = run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW, category="event")
    assert [r.category for r in insights_of(service)] == ["insight"]
    assert report.groups[0].notes == ["the model called an insight 'hobby': stored as insight"]


def test_model_returns_an_empty_list(service: MemoryService, fake_openai: FakeOpenAI, locks: Path) -> None:
    ids = seed(service)
    before = {i: service.get(i).fsrs.stability for i in ids["event"]}
    fake_openai.script_chat("[]")
    report = run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW, category="event")
    assert report.ran and report.insights_written == 0 and insights_of(service) == []
    for record_id in ids["event"]:  # considered: not sent again, not down-weighted
        assert service.get(record_id).reflected_at == NOW
        assert service.get(record_id).fsrs.stability == before[record_id]


def test_model_makes_up_evidence_ids_they_are_ignored_and_reported(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    ids = seed(service)
    fake_openai.script_chat(
        reply(
            insight(["m1", "m99", "mem-0000-made-up", ids["preference"][0]], topic="prs"),
            insight(["m7", "m8"], topic="invented", confidence=0.95),
        )
    )
    report = run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW, category="event")
    outcome = report.groups[0]
    assert outcome.ignored_evidence == ["m7", "m8", "m99", "mem-0000-made-up", ids["preference"][0]]
    assert outcome.skipped == [
        {"insight": "insight on invented", "reason": "no evidence among the memories it was shown"}
    ]
    (written,) = insights_of(service)
    assert written.source["evidence"] == [ids["event"][0]]  # type: ignore[index]
    assert report.to_dict()["groups"][0]["ignoredEvidence"][-1] == ids["preference"][0]


def test_model_may_cite_by_record_id(service: MemoryService, fake_openai: FakeOpenAI, locks: Path) -> None:
    ids = seed(service)
    fake_openai.script_chat(reply(insight([ids["event"][1].upper(), "M1"])))
    run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW, category="event")
    assert insights_of(service)[0].source["evidence"] == [ids["event"][1], ids["event"][0]]  # type: ignore[index]


# ------------------------------------------------------------------ when the model cannot be reached


def test_without_a_model_is_a_clear_error_and_nothing_changes(service: MemoryService, locks: Path) -> None:
    from openclaw_cli.config.loading import Settings

    seed(service)
    before = snapshot(service)
    with pytest.raises(ModelUnavailable, match="reflection needs a chat model") as caught:
        run_reflection(service, Settings(), lock_dir=locks, now=NOW)
    assert "llm.model" in (caught.value.hint or "")
    assert snapshot(service) == before


def test_http_429_is_retried_with_backoff_then_succeeds(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    seed(service)
    fake_openai.fail_next(1, status=429)
    fake_openai.respond_with(summarising_model)
    report = run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW, category="event")
    assert report.insights_written == 1
    assert len(fake_openai.requests_to("/chat/completions")) == 2


@pytest.mark.parametrize("status", [429, 500])
def test_http_error_that_persists_fails_clearly_with_nothing_changed(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path, status: int
) -> None:
    seed(service)
    before = snapshot(service)
    fake_openai.fail_next(10, status=status)
    with pytest.raises(ModelUnavailable, match=f"failed after 2 attempts \\(HTTP {status}") as caught:
        run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW)
    assert "nothing was changed" in (caught.value.hint or "")
    assert len(fake_openai.requests) == 2  # maxRetries=1: the call and one retry
    assert snapshot(service) == before


def test_a_failure_in_a_later_group_leaves_the_earlier_groups_unwritten(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    seed(service)
    before = snapshot(service)
    fake_openai.script_chat(reply(insight(["m1"])))  # the event group, asked first
    fake_openai.respond_with(lambda body: "no JSON here")
    with pytest.raises(InvalidReply):
        run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW)
    assert snapshot(service) == before


def test_timeout_is_retried_then_fails_with_nothing_changed(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    seed(service)
    before = snapshot(service)
    fake_openai.delay = 1.5
    with pytest.raises(ModelUnavailable, match="after 2 attempts"):
        run_reflection(service, llm_settings(fake_openai.url, timeoutSeconds=0.3), lock_dir=locks, now=NOW)
    fake_openai.delay = 0
    assert snapshot(service) == before


# ------------------------------------------------------------------ when to run, and one at a time


def test_due_at_min_unreflected(service: MemoryService) -> None:
    settings = llm_settings("http://127.0.0.1:9").memory.reflection.model_copy(update={"min_unreflected": 3})
    add(service, "one", category="event", created_at=NOW)
    add(service, "two", category="event", created_at=NOW)
    assert not reflection_due(service, settings, NOW).due
    add(service, "three", category="lesson", created_at=NOW)
    due = reflection_due(service, settings, NOW)
    assert due.due and due.unreflected == 3 and due.reason.startswith("3 unreflected memories")


def test_due_after_interval_hours_since_the_last_run(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    settings = llm_settings(fake_openai.url)
    add(service, "first", category="event", created_at=NOW - timedelta(hours=30))
    assert reflection_due(service, settings.memory.reflection, NOW).due  # oldest waited 30 h
    fake_openai.respond_with(summarising_model)
    run_reflection(service, settings, lock_dir=locks, now=NOW)
    add(service, "second", category="event", created_at=NOW + timedelta(hours=1))
    assert not reflection_due(service, settings.memory.reflection, NOW + timedelta(hours=23)).due
    later = reflection_due(service, settings.memory.reflection, NOW + timedelta(hours=24))
    assert later.due and later.last_run == NOW


def test_if_due_returns_quietly_when_not_due(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    seed(service)
    before = snapshot(service)
    report = run_reflection(
        service, llm_settings(fake_openai.url), lock_dir=locks, now=WRITTEN + timedelta(hours=1), if_due=True
    )
    assert not report.ran and report.reason.startswith("not due")
    assert fake_openai.requests == [] and snapshot(service) == before


def test_if_due_runs_when_due(service: MemoryService, fake_openai: FakeOpenAI, locks: Path) -> None:
    seed(service)  # written ten days ago, never reflected
    fake_openai.respond_with(summarising_model)
    report = run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW, if_due=True)
    assert report.ran and report.insights_written == 2


def test_the_lock_stops_a_second_run(service: MemoryService, fake_openai: FakeOpenAI, locks: Path) -> None:
    seed(service)
    before = snapshot(service)
    with run_lock(locks) as held:
        assert held
        with pytest.raises(Conflict, match="another reflection is running"):
            run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW)
        quiet = run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW, if_due=True)
        assert not quiet.ran
    assert fake_openai.requests == [] and snapshot(service) == before
    fake_openai.respond_with(summarising_model)
    assert run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW).ran


def test_the_prompt_shows_references_and_dates_not_ids(
    service: MemoryService, fake_openai: FakeOpenAI, locks: Path
) -> None:
    ids = seed(service)
    fake_openai.respond_with(summarising_model)
    run_reflection(service, llm_settings(fake_openai.url), lock_dir=locks, now=NOW, category="event")
    body = fake_openai.requests_to("/chat/completions")[0].body
    category, lines = prompt_of(body)
    assert category == "event"
    assert lines == [("m1", "submitted PR #342 fixing login"), ("m2", "submitted PR #351 for the dashboard")]
    assert ids["event"][0] not in json.dumps(body)


def test_nested_write_transactions_commit_or_roll_back_as_one(tmp_path: Path) -> None:
    """Reflection's one transaction per database holds write_memories' own transactions as savepoints."""
    from openclaw_cli.memory.store.sqlite.connection import open_db
    from openclaw_cli.memory.store.sqlite.meta import set_meta, write_txn

    conn = open_db(tmp_path / "memory.sqlite")
    with pytest.raises(RuntimeError), write_txn(conn):
        with write_txn(conn):
            set_meta(conn, "inner", 1)
        raise RuntimeError("the outer transaction fails after the inner one finished")
    assert get_meta(conn, "inner") is None
    with write_txn(conn):
        with pytest.raises(RuntimeError), write_txn(conn):
            set_meta(conn, "rolled back", 1)
            raise RuntimeError("only the inner part fails")
        set_meta(conn, "kept", 1)
    assert (get_meta(conn, "rolled back"), get_meta(conn, "kept")) == (None, "1")
    assert not conn.in_transaction
    conn.close()
