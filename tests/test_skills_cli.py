"""`openclaw skills list|show|check` as real processes, and skills in a running gateway: gated on the
gateway's own environment, and an edited SKILL.md seen by its next turn with no restart (issue 50)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import run_cli
from tests.fake_openai import FakeOpenAI
from tests.gateway_helpers import http_json, running_gateway, write_config
from tests.skill_helpers import home_skills, workspace_skills, write_skill


def _setup(home: Path) -> None:
    write_skill(workspace_skills(home), "report", "The workspace's report.")
    write_skill(home_skills(home), "report", "The home's report.")
    write_skill(home_skills(home), "deploy", "Deploys the site.", front="requires:\n  env: [SKILL_CLI_TOKEN]\n")
    write_skill(home_skills(home), "notes", "Takes notes.", body="Write them in notes.md next to this file.\n")


def test_list_shows_tier_gating_and_size(home: Path) -> None:
    _setup(home)
    listed = run_cli(home, "skills", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in listed.json()["skills"]}
    assert sorted(rows) == ["deploy", "notes", "report"]
    assert (rows["report"]["tier"], rows["report"]["shadows"]) == ("workspace", ["home"])
    assert rows["report"]["size"] == (workspace_skills(home) / "report" / "SKILL.md").stat().st_size
    assert (rows["deploy"]["available"], rows["deploy"]["reason"]) == (False, "requires.env not set: SKILL_CLI_TOKEN")

    human = run_cli(home, "skills", "list", env={"SKILL_CLI_TOKEN": "t"})
    assert human.returncode == 0, human.stderr
    lines = human.stdout.splitlines()
    assert lines[0].startswith("deploy  home  available  ")
    assert lines[2].startswith("report  workspace  available  ") and lines[2].endswith("The workspace's report.")


def test_show_prints_the_body_and_an_unknown_name_is_one_line(home: Path) -> None:
    _setup(home)
    shown = run_cli(home, "skills", "show", "notes", "--json")
    assert shown.returncode == 0, shown.stderr
    assert shown.json()["body"] == "Write them in notes.md next to this file."
    assert shown.json()["path"] == str(home_skills(home) / "notes" / "SKILL.md")

    missing = run_cli(home, "skills", "show", "nope")
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr.splitlines() == [
        "openclaw: error: no skill named 'nope' (see `openclaw skills list`)"
    ]


def test_check_prints_each_problem_on_one_line_and_exits_1(home: Path) -> None:
    write_skill(home_skills(home), "good")
    nameless = home_skills(home) / "nameless" / "SKILL.md"
    nameless.parent.mkdir(parents=True)
    nameless.write_text("---\ndescription: No name.\n---\n", encoding="utf-8")
    broken = write_skill(home_skills(home), "broken", front="requires: [unclosed\n")
    huge = write_skill(workspace_skills(home), "huge", body="x" * (1024 * 1024))

    checked = run_cli(home, "skills", "check")

    assert checked.returncode == 1, checked.stderr
    lines = checked.stdout.splitlines()
    assert len(lines) == 3, lines
    assert f"{huge}:1: file is {huge.stat().st_size} bytes, over skills.maxFileBytes (262144)" in lines[0]
    assert lines[1].startswith(f"{broken}:4: YAML error in front matter: ")
    assert lines[2] == f"{nameless}:1: front matter has no 'name'"
    as_json = run_cli(home, "skills", "check", "--json")
    assert as_json.returncode == 1 and as_json.json() == {"ok": False, "problems": lines}


def test_check_of_valid_skills_exits_0_and_quiet_prints_nothing(home: Path) -> None:
    _setup(home)
    checked = run_cli(home, "skills", "check")
    assert (checked.returncode, checked.stdout) == (0, "every SKILL.md is valid\n")
    quiet = run_cli(home, "skills", "check", "--quiet")
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")


def test_agent_option_applies_that_agents_list_and_workspace(home: Path) -> None:
    _setup(home)
    write_skill(workspace_skills(home, "work"), "triage", "Sorts the inbox.")
    home.joinpath("openclaw.json").write_text(
        json.dumps({"agents": {"list": [{"id": "work", "skills": ["triage", "notes"]}]}}), encoding="utf-8"
    )
    listed = run_cli(home, "skills", "list", "--json", "--agent", "work")
    assert listed.returncode == 0, listed.stderr
    states = {row["name"]: (row["tier"], row["available"]) for row in listed.json()["skills"]}
    assert states == {
        "deploy": ("home", False),
        "notes": ("home", True),
        "report": ("home", False),  # the main agent's workspace is not work's
        "triage": ("workspace", True),
    }


def _systems(fake: FakeOpenAI) -> list[str]:
    bodies: list[dict[str, Any]] = [r.body for r in fake.requests_to("/chat/completions") if r.body.get("tools")]
    return [str(body["messages"][0]["content"]) for body in bodies]


def test_a_gateway_gates_on_its_environment_and_sees_an_edit_on_the_next_turn(home: Path) -> None:
    write_skill(home_skills(home), "deploy", "Deploys the site.", front="requires:\n  env: [SKILL_GW_TOKEN]\n")
    write_skill(home_skills(home), "locked", "Needs another token.", front="requires:\n  env: [SKILL_GW_OTHER]\n")
    fake = FakeOpenAI().start()
    try:
        write_config(home, fake, memory={"extraction": {"enabled": False}})
        with running_gateway(home, env={"SKILL_GW_TOKEN": "set"}) as gateway:

            def ask(text: str) -> None:
                body = {"model": "main", "messages": [{"role": "user", "content": text}]}
                status, reply = http_json(gateway.http + "/v1/chat/completions", body, token=gateway.token)
                assert status == 200, reply

            ask("first")
            write_skill(home_skills(home), "deploy", "Deploys the site and tells the team.",
                        front="requires:\n  env: [SKILL_GW_TOKEN]\n")
            ask("second")
    finally:
        fake.stop()
    first, second = _systems(fake)
    assert "- deploy: Deploys the site." in first
    assert "locked" not in first  # its variable is not in the gateway's environment
    assert "- deploy: Deploys the site and tells the team." in second


def test_chat_sends_slash_skill_to_the_turn_with_the_chats_environment(home: Path) -> None:
    from tests.agent_helpers import config_env

    write_skill(
        home_skills(home),
        "notes",
        "Takes notes.",
        front="requires:\n  env: [SKILL_CHAT_TOKEN]\n",
        body="NOTES-BODY: write them in notes.md next to this file.\n",
    )
    fake = FakeOpenAI().start()
    try:
        env = {**config_env(fake.url, embed_url=fake.url), "SKILL_CHAT_TOKEN": "set"}
        env["OPENCLAW_MEMORY__EXTRACTION__ENABLED"] = "false"
        chat = run_cli(home, "chat", "--local", input="/skill notes the meeting ran late\n", env=env)
    finally:
        fake.stop()
    assert chat.returncode == 0, chat.stderr
    [system] = _systems(fake)
    assert "## Skill notes (invoked by the user with /skill" in system
    assert "NOTES-BODY: write them in notes.md next to this file." in system


def test_a_plugin_ships_skills_that_come_after_the_home_and_workspace(home: Path, tmp_path: Path) -> None:
    """The third tier: folders a plugin registers with register_skills (plugins/, issue 50)."""
    plugin = tmp_path / "shipper"
    write_skill(plugin / "skills", "report", "The plugin's report.")
    write_skill(plugin / "skills", "translate", "Translates a document, keeping its layout.")
    (plugin / "shipper.py").write_text(
        "from pathlib import Path\n"
        "from openclaw_cli.plugins import hookimpl\n\n\n"
        "@hookimpl\n"
        "def register_skills(register):\n"
        "    register(Path(__file__).parent / 'skills')\n",
        encoding="utf-8",
    )
    _setup(home)
    write_config(home, None, plugins={"load": {"paths": [str(plugin / "shipper.py")]}})
    listed = run_cli(home, "skills", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in listed.json()["skills"]}
    assert rows["translate"]["tier"] == "plugin" and rows["translate"]["available"] is True
    assert (rows["report"]["tier"], rows["report"]["shadows"]) == ("workspace", ["home", "shipper"])
    shown = run_cli(home, "skills", "show", "translate", "--json")
    assert shown.returncode == 0, shown.stderr
    assert shown.json()["description"] == "Translates a document, keeping its layout."
