"""The agent writes its own Markdown memory (seed 003 §4.1): the memory_note tool writes the owner's log or
MEMORY.md, anyone else's note goes to their own memory (and says so), and the owner's "remember this" is
written to today's log at once as well as to the store."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from openclaw_cli.agent.runtime import AgentRuntime
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.workspace.files import daily_log_name
from openclaw_cli.sessions.store import SessionStore
from tests import agent_helpers
from tests.agent_helpers import ScriptedModel, WindowedFakeOpenAI, chat_settings, tool_call, turn

fake, model = agent_helpers.fake, agent_helpers.model


def _runtime(home: Path, fake: WindowedFakeOpenAI) -> AgentRuntime:
    return AgentRuntime(Home(home), chat_settings(fake.url, embed_url=fake.url))


def _workspace(home: Path) -> Path:
    return Home(home).workspace_dir("main")


def _tool_results(home: Path, session_id: str) -> list[dict[str, Any]]:
    messages = SessionStore(Home(home), "main").read_session(session_id).messages
    return [json.loads(m["content"]) for m in messages if m["role"] == "tool"]


def test_the_owner_notes_to_memory_md_and_to_todays_log(
    home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    runtime = _runtime(home, fake)
    try:
        model.replies += [
            tool_call("memory_note", {"text": "Decided: the trip is in May", "durable": True}),
            tool_call("memory_note", {"text": "Talked about the garden"}),
            "Noted both.",
        ]
        result, _ = turn(runtime, "note the trip and the garden")
    finally:
        runtime.close()
    durable, daily = _tool_results(home, result.session_id)
    assert durable["written"] == "workspace" and durable["location"].startswith("MEMORY.md:")
    memory_md = (_workspace(home) / "MEMORY.md").read_text(encoding="utf-8")
    line = int(durable["location"].split(":")[1])
    assert "Decided: the trip is in May" in memory_md.splitlines()[line - 1]
    log = _workspace(home) / daily_log_name(datetime.now().astimezone().date())
    assert daily["file"] == daily_log_name(datetime.now().astimezone().date())
    assert "Talked about the garden" in log.read_text(encoding="utf-8")


def test_another_persons_note_goes_to_their_own_memory_and_says_so(
    home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    runtime = _runtime(home, fake)
    try:
        model.replies += [tool_call("memory_note", {"text": "Sam keeps bees", "durable": True}), "Noted."]
        result, _ = turn(runtime, "note that I keep bees", "agent:main:direct:sam", user_id="sam")
        [answer] = _tool_results(home, result.session_id)
        assert answer["written"] == "memory" and "owner" in answer["note"]
        record = runtime.services("main").memory.get(answer["id"])
        assert (record.user_id, record.category, record.l0) == ("sam", "note", "Sam keeps bees")
    finally:
        runtime.close()
    assert not (_workspace(home) / "MEMORY.md").exists()


def test_a_note_without_a_person_or_with_bad_arguments_is_a_tool_error(
    home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    runtime = _runtime(home, fake)
    try:
        model.replies += [tool_call("memory_note", {"text": ""}), tool_call("memory_note", {"text": "x\u0000y"}), "ok"]
        result, _ = turn(runtime, "note nothing")
    finally:
        runtime.close()
    empty, nul = _tool_results(home, result.session_id)
    assert "error" in empty and "error" in nul
    assert not (_workspace(home) / "MEMORY.md").exists()


def test_the_owners_remember_this_goes_to_todays_log_at_once(
    home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    runtime = _runtime(home, fake)
    try:
        model.replies += ["Got it.", "Sure."]
        turn(runtime, "Remember that my dentist is Dr. Wu")
        log = _workspace(home) / daily_log_name(datetime.now().astimezone().date())
        assert "dentist is Dr. Wu" in log.read_text(encoding="utf-8")
        before = log.read_text(encoding="utf-8")
        turn(runtime, "Remember that my sister lives in Oslo", "agent:main:direct:sam", user_id="sam")
        assert log.read_text(encoding="utf-8") == before  # not the owner: the store only
        stored = [r.l0 for r in runtime.services("main").memory.list_records(user_id="sam")]
        assert any("Oslo" in text for text in stored)
    finally:
        runtime.close()
