"""Skills in real turns against the fake model (issue 50): the system prompt lists them without any body
until the model calls skill_read; `/skill NAME` puts one body into that turn; an unknown name is answered
without the model; an edited or added SKILL.md counts from the next turn of the same process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openclaw_cli.agent.runtime import AgentRuntime
from openclaw_cli.core.paths import Home
from openclaw_cli.sessions.store import SessionStore
from tests import agent_helpers
from tests.agent_helpers import ScriptedModel, WindowedFakeOpenAI, chat_settings, system_text, tool_call, turn
from tests.skill_helpers import home_skills, workspace_skills, write_skill

fake, model = agent_helpers.fake, agent_helpers.model

BODY = "SKILL-BODY-MARKER: greet the person by name, then list today's three priorities.\n"


def _runtime(home: Path, url: str, env: dict[str, str] | None = None) -> AgentRuntime:
    settings = chat_settings(url, embed_url=url, memory={"extraction": {"enabled": False}})
    return AgentRuntime(Home(home), settings, env=env or {})


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools") or []]


def _stored(home: Path, session_id: str) -> list[dict[str, Any]]:
    store = SessionStore(Home(home), "main")
    try:
        return list(store.read_messages(session_id).messages)
    finally:
        store.close()


def test_no_skill_body_is_in_the_system_prompt_until_skill_read(
    home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    write_skill(home_skills(home), "morning-brief", "Starts the day: greeting and priorities.", body=BODY)
    model.replies += [tool_call("skill_read", {"name": "morning-brief"}), "Good morning, Ann."]
    runtime = _runtime(home, fake.url)
    try:
        result, events = turn(runtime, "start my day")
    finally:
        runtime.close()

    assert result.reply == "Good morning, Ann."
    first, second = model.agent_requests
    for request in (first, second):
        system = system_text(request)
        assert "- morning-brief: Starts the day: greeting and priorities." in system
        assert "SKILL-BODY-MARKER" not in system
        assert "skill_read" in _tool_names(request)
    assert all("SKILL-BODY-MARKER" not in json.dumps(m) for m in first["messages"])  # nowhere before the call
    [tool_message] = [m for m in second["messages"] if m["role"] == "tool"]
    answer = json.loads(tool_message["content"])
    assert answer["name"] == "morning-brief" and answer["body"] == BODY.strip()
    assert answer["folder"] == str(home_skills(home) / "morning-brief")
    [tool_event] = events.of("tool")
    assert tool_event["name"] == "skill_read"
    usage = json.loads((home / "agents" / "main" / "skill-usage.json").read_text(encoding="utf-8"))
    assert list(usage) == ["morning-brief"]


def test_an_agent_without_skills_is_not_offered_skill_read(
    home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    write_skill(home_skills(home), "gated", front="requires:\n  env: [SKILL_GATE_TOKEN]\n")
    model.replies.append("Plain answer.")
    runtime = _runtime(home, fake.url)  # its env has no SKILL_GATE_TOKEN: the only skill is gated
    try:
        turn(runtime, "hello")
    finally:
        runtime.close()
    [request] = model.agent_requests
    assert "skill_read" not in _tool_names(request)
    assert "## Skills" not in system_text(request)


def test_a_skill_gated_on_env_is_offered_when_the_runtime_env_has_it(
    home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    write_skill(home_skills(home), "gated", "Needs the token.", front="requires:\n  env: [SKILL_GATE_TOKEN]\n")
    model.replies.append("Plain answer.")
    runtime = _runtime(home, fake.url, env={"SKILL_GATE_TOKEN": "set"})
    try:
        turn(runtime, "hello")
    finally:
        runtime.close()
    [request] = model.agent_requests
    assert "- gated: Needs the token." in system_text(request)
    assert "skill_read" in _tool_names(request)


def test_slash_skill_puts_the_body_into_that_turn_only(
    home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    write_skill(workspace_skills(home), "morning-brief", "Starts the day.", body=BODY)
    model.replies += ["Following the brief.", "Just chatting."]
    runtime = _runtime(home, fake.url)
    try:
        first, _ = turn(runtime, "/skill morning-brief for Ann please")
        turn(runtime, "thanks", run_id="r2")
    finally:
        runtime.close()

    invoked, later = model.agent_requests
    system = system_text(invoked)
    assert "## Skill morning-brief (invoked by the user with /skill" in system
    assert BODY.strip() in system
    assert f"Its folder is {workspace_skills(home) / 'morning-brief'}" in system
    assert invoked["messages"][-1] == {"role": "user", "content": "/skill morning-brief for Ann please"}
    assert "SKILL-BODY-MARKER" not in system_text(later)  # the next turn lists it again, no body
    assert "- morning-brief: Starts the day." in system_text(later)
    assert first.reply == "Following the brief."


def test_slash_skill_with_an_unknown_name_is_answered_without_the_model(
    home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    write_skill(home_skills(home), "morning-brief", "Starts the day.")
    runtime = _runtime(home, fake.url)
    try:
        result, events = turn(runtime, "/skill evening-brief now")
    finally:
        runtime.close()
    assert result.status == "ok"
    assert result.reply == "No skill named 'evening-brief'. Available skills: morning-brief."
    assert events.text() == result.reply
    assert model.agent_requests == []
    assert result.session_id == ""  # nothing was stored: the command did not run


def test_an_edited_and_an_added_skill_count_from_the_next_turn(
    home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    path = write_skill(home_skills(home), "report", "Writes the weekly report.")
    model.replies += ["One.", "Two.", "Three."]
    runtime = _runtime(home, fake.url)
    try:
        turn(runtime, "first")
        catalog = runtime.services("main").skills.catalog
        assert catalog is not None and catalog.parses == 1
        turn(runtime, "second, nothing changed", run_id="r2")
        assert catalog.parses == 1  # the unchanged file was not read again
        path.write_text(
            "---\nname: report\ndescription: Writes the monthly report instead.\n---\nBody\n", encoding="utf-8"
        )
        write_skill(workspace_skills(home), "triage", "Sorts the inbox.")
        turn(runtime, "third", run_id="r3")
    finally:
        runtime.close()

    first, second, third = (system_text(body) for body in model.agent_requests)
    assert "- report: Writes the weekly report." in first and first == second
    assert "- report: Writes the monthly report instead." in third
    assert "- triage: Sorts the inbox." in third
    assert "weekly" not in third
    assert catalog.parses == 3
