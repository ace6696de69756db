"""Background extraction after agent turns: coalescing, the hourly limit, never blocking, draining."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

from openclaw_cli.memory.extraction.run import ExtractionReport, ExtractionService
from openclaw_cli.memory.extraction.schedule import CoalescingScheduler
from openclaw_cli.memory.extraction.state import read_state
from tests import fake_openai as fake_server
from tests.extract_support import World, chat_requests, memory, reply, settings_for

fake_openai = fake_server.fake_openai


def world_with(tmp_path: Path, url: str | None, reports: list[ExtractionReport], **extraction: Any) -> World:
    return World(tmp_path / "home", settings_for(url, **extraction), on_report=reports.append)


def test_turns_within_the_window_coalesce_into_one_extraction(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    reports: list[ExtractionReport] = []
    world = world_with(tmp_path, fake_openai.url, reports, coalesceSeconds=0.5)
    try:
        fake_openai.respond_with(lambda body: reply())
        for text in ("I like tea.", "I like cake.", "I like rain."):
            world.say(text)
            world.extraction.note_turn(world.session_id)
        assert world.extraction.wait_idle(30)
        assert len(chat_requests(fake_openai)) == 1
        assert [(r.start, r.end) for r in reports] == [(0, 3)]
    finally:
        world.close()


def test_note_turn_never_blocks_even_when_the_model_is_slow(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    """The model's answer is held until note_turn has returned: had note_turn waited for the extraction,
    it could not return before the release (the hold would time out and the extraction be done)."""
    reports: list[ExtractionReport] = []
    world = world_with(tmp_path, fake_openai.url, reports, coalesceSeconds=0)
    try:
        fake_openai.respond_with(lambda body: reply(memory("preference", "User likes tea", [0])))
        world.say("I like tea.")
        with fake_openai.holding() as hold:
            world.extraction.note_turn(world.session_id)
            assert hold.wait_arrived(1)  # the background run has asked the model...
            assert world.records() == [] and reports == []  # ...and the caller is back before the answer
            assert not world.extraction.wait_idle(0)
            hold.release()
            assert world.extraction.wait_idle(30)
        assert [r.l0 for r in world.records()] == ["User likes tea"]
    finally:
        world.close()


def test_at_most_max_per_hour_automatic_runs_per_session_then_they_wait(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    reports: list[ExtractionReport] = []
    world = world_with(tmp_path, fake_openai.url, reports, coalesceSeconds=0, maxPerHour=2)
    try:
        fake_openai.respond_with(lambda body: reply())
        for text in ("one", "two"):
            world.say(text)
            world.extraction.note_turn(world.session_id)
            assert world.extraction.wait_idle(30)
            world.clock.advance(minutes=1)
        world.say("three")
        world.extraction.note_turn(world.session_id)
        deadline = time.monotonic() + 30
        while len(reports) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(reports) == 3
        assert not world.extraction.wait_idle(0)  # the third waits out the hour
        assert len(chat_requests(fake_openai)) == 2
        deferred = reports[-1]
        assert deferred.deferred_until is not None and deferred.outcomes == []
        assert read_state(world.store.session_dir(world.session_id)).checkpoint == 2

        # The limit is on disk: another process (here another service) sees it too.
        others: list[ExtractionReport] = []
        other = ExtractionService(
            world.home,
            "main",
            world.settings,
            world.memory,
            world.store,
            clock=world.clock,
            on_report=others.append,
        )
        other.note_turn(world.session_id)
        deadline = time.monotonic() + 30  # until its run has looked at the limit and reported
        while not others and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(others) == 1 and others[0].deferred_until is not None and others[0].outcomes == []
        assert len(chat_requests(fake_openai)) == 2
        other.close(wait=False)

        world.clock.advance(hours=1)  # the hour has passed: the postponed run goes ahead at the next turn
        world.extraction.note_turn(world.session_id)
        assert world.extraction.wait_idle(30)
        assert len(chat_requests(fake_openai)) == 3 and reports[-1].start == 2
        assert read_state(world.store.session_dir(world.session_id)).checkpoint == 3
    finally:
        world.close()


def test_close_with_wait_runs_pending_extractions_at_once(tmp_path: Path) -> None:
    """The window is an hour: had close waited it out, the closing thread would still be waiting at the
    deadline (a deadline for a hang, not a measure of speed)."""
    reports: list[ExtractionReport] = []
    world = world_with(tmp_path, None, reports, coalesceSeconds=3600)
    world.say("I prefer green tea.")
    world.extraction.note_turn(world.session_id)
    closing = threading.Thread(target=world.extraction.close, kwargs={"wait": True}, daemon=True)
    closing.start()
    closing.join(120)
    assert not closing.is_alive(), "close(wait=True) waited out the coalescing window"
    assert [r.l0 for r in world.records()] == ["User prefers green tea"]
    assert [(r.start, r.end) for r in reports] == [(0, 1)]
    world.close()


def test_close_without_wait_drops_pending_runs_but_no_message(tmp_path: Path) -> None:
    reports: list[ExtractionReport] = []
    world = world_with(tmp_path, None, reports, coalesceSeconds=30)
    try:
        world.say("I prefer green tea.")
        world.extraction.note_turn(world.session_id)
        world.extraction.close(wait=False)
        assert reports == [] and world.records() == []
        # The next run (here on demand) starts at the checkpoint and finds the message.
        later = ExtractionService(world.home, "main", world.settings, world.memory, world.store)
        assert [o.candidate.l0 for o in later.run(world.session_id).outcomes] == ["User prefers green tea"]
        later.close()
    finally:
        world.close()


def test_disabled_extraction_schedules_nothing(tmp_path: Path) -> None:
    reports: list[ExtractionReport] = []
    world = world_with(tmp_path, None, reports, enabled=False, coalesceSeconds=0)
    try:
        world.say("I prefer green tea.")
        world.extraction.note_turn(world.session_id)
        assert world.extraction.wait_idle(1) and reports == [] and world.records() == []
    finally:
        world.close()


def test_note_turn_from_an_asyncio_loop_returns_at_once(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    """Called on a running event loop, note_turn hands the run to the worker thread: the loop goes on
    (here it awaits the model's arrival) while the model's answer is still held."""
    reports: list[ExtractionReport] = []
    world = world_with(tmp_path, fake_openai.url, reports, coalesceSeconds=0)
    fake_openai.respond_with(lambda body: reply(memory("preference", "User likes chess", [0])))

    async def turn(hold: fake_server.Hold) -> tuple[bool, list[str]]:
        world.say("I like chess.")
        world.extraction.note_turn(world.session_id)
        arrived = await asyncio.to_thread(hold.wait_arrived, 1)
        return arrived, [r.l0 for r in world.records()]

    try:
        with fake_openai.holding() as hold:
            arrived, during = asyncio.run(turn(hold))
            assert arrived and during == []  # the loop ran on while the extraction waited for the model
            hold.release()
            assert world.extraction.wait_idle(30)
        assert [r.l0 for r in world.records()] == ["User likes chess"]
    finally:
        world.close()


def test_a_failing_job_is_reported_and_the_worker_goes_on() -> None:
    errors: list[tuple[str, BaseException]] = []
    ran: list[str] = []

    def job(key: str) -> float | None:
        if key == "bad":
            raise RuntimeError("boom")
        ran.append(key)
        return None

    scheduler = CoalescingScheduler(job, 0, on_error=lambda key, exc: errors.append((key, exc)))
    scheduler.poke("bad")
    assert scheduler.wait_idle(5)
    scheduler.poke("good")
    assert scheduler.wait_idle(5)
    scheduler.close()
    assert ran == ["good"] and errors[0][0] == "bad" and str(errors[0][1]) == "boom"
