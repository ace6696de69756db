"""An agent's own `agents.list[]` settings: its workspace and its model win over the global ones, in a real
gateway's turns, in `openclaw chat --local` (turns, memory flush, summaries), `memory extract`, `memory note`
and `doctor`. What the model was sent is read off the fake OpenAI server's recorded requests."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.config.loading import Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.identity.agent_config import agent_entry, for_agent
from openclaw_cli.memory.workspace.files import workspace_dir
from tests.conftest import run_cli
from tests.fake_openai import FAKE_API_KEY, FakeOpenAI
from tests.gateway_helpers import echo_last_user, http_json, running_gateway, write_config

MODEL_ENV = {"OPENAI_API_KEY": FAKE_API_KEY}


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    server.respond_with(echo_last_user)
    yield server
    server.stop()


def two_agents(home: Path, fake: FakeOpenAI | None, main_workspace: Path, **sections: Any) -> None:
    """`main` (the global model) with a workspace outside the home; `work` with its own model and a
    workspace given relative to the home."""
    agents = [
        {"id": "main", "workspace": str(main_workspace)},
        {"id": "work", "workspace": "work-notes", "model": "openai/fake-work"},
    ]
    if fake is not None:  # embeddings from the fake server too: no local model to load in every process
        embedding = {"provider": "litellm", "model": "openai/text-embedding-3-small", "apiBase": fake.url}
        sections.setdefault("memory", {"embedding": {**embedding, "dimensions": 64, "maxRetries": 0}})
    write_config(home, fake, agents={"list": agents}, **sections)
    os.chmod(home / "openclaw.json", 0o600)


def chat_bodies(fake: FakeOpenAI) -> list[dict[str, Any]]:
    return [r.body for r in list(fake.requests) if r.path.endswith("/chat/completions")]


def last_user(body: dict[str, Any]) -> str:
    return str([m for m in body["messages"] if m["role"] == "user"][-1]["content"])


def system_prompt(body: dict[str, Any]) -> str:
    first = body["messages"][0]
    return str(first["content"]) if first["role"] == "system" else ""


# --- the core rule -----------------------------------------------------------------------------------


def test_an_agent_without_an_entry_gets_the_global_settings_themselves() -> None:
    settings = Settings(
        llm={"model": "openai/global"}, agents={"list": [{"id": "work", "model": "openai/w"}]}
    )
    assert for_agent(settings, "main") is settings
    assert for_agent(settings, "work").llm.model == "openai/w"


def test_entry_ids_match_the_lower_cased_agent_id() -> None:
    settings = Settings(agents={"list": [{"id": "Work", "workspace": "/w"}]})
    assert agent_entry(settings, "work") is settings.agents.entries[0]
    assert for_agent(settings, "work").memory.workspace == "/w"


def test_the_agent_model_replaces_the_global_model_and_its_extraction_model() -> None:
    settings = Settings(
        llm={"model": "openai/big", "extractModel": "openai/cheap", "apiBase": "http://global/v1"},
        agents={"list": [{"id": "work", "model": "openai/work"}]},
    )
    llm = for_agent(settings, "work").llm
    assert (llm.model, llm.extract_model, llm.api_base) == ("openai/work", None, "http://global/v1")
    assert settings.llm.model == "openai/big"  # the global settings are not changed


def test_the_agent_api_base_and_extraction_model_win_too() -> None:
    entry = {"id": "work", "model": "openai/w", "apiBase": "http://work/v1", "extractModel": "openai/w-mini"}
    llm = for_agent(Settings(llm={"model": "openai/big"}, agents={"list": [entry]}), "work").llm
    assert (llm.model, llm.extract_model, llm.api_base) == ("openai/w", "openai/w-mini", "http://work/v1")
    only = Settings(
        llm={"model": "openai/big"}, agents={"list": [{"id": "work", "extractModel": "openai/x"}]}
    )
    assert (for_agent(only, "work").llm.model, for_agent(only, "work").llm.extract_model) == (
        "openai/big",
        "openai/x",
    )


def test_the_agent_workspace_wins_over_memory_workspace(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    settings = Settings(
        memory={"workspace": str(tmp_path / "everyone")}, agents={"list": [{"id": "work", "workspace": "w"}]}
    )
    assert workspace_dir(home, "work", for_agent(settings, "work").memory) == home.root / "w"
    assert workspace_dir(home, "main", for_agent(settings, "main").memory) == tmp_path / "everyone"


def test_a_workspace_path_expands_the_user_directory() -> None:
    settings = Settings(agents={"list": [{"id": "work", "workspace": "~/work-notes"}]})
    resolved = workspace_dir(Home(Path("/nowhere")), "work", for_agent(settings, "work").memory)
    assert resolved == Path.home() / "work-notes"


def test_an_unknown_key_in_an_agent_entry_is_a_config_error(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    home.mkdir(mode=0o700)
    (home / "openclaw.json").write_text(json.dumps({"agents": {"list": [{"id": "work", "modle": "x"}]}}))
    result = cli("config", "get", "agents")
    assert result.returncode == 1
    assert "key 'agents.list.0.modle'" in result.stderr


# --- through real processes --------------------------------------------------------------------------


def test_gateway_turns_get_the_agent_workspace_and_model(tmp_path: Path, fake: FakeOpenAI) -> None:
    home = tmp_path / "home"
    main_workspace = tmp_path / "main-workspace"
    two_agents(home, fake, main_workspace)
    main_workspace.mkdir()
    (main_workspace / "AGENTS.md").write_text("MAIN-RULES: answer briefly.\n", encoding="utf-8")
    (home / "work-notes").mkdir()
    (home / "work-notes" / "AGENTS.md").write_text("WORK-RULES: answer in haiku.\n", encoding="utf-8")
    with running_gateway(home) as gateway:
        for agent in ("work", "main"):
            body = {
                "model": agent,
                "user": "alice",
                "messages": [{"role": "user", "content": f"hello {agent}"}],
            }
            status, reply = http_json(gateway.http + "/v1/chat/completions", body, token=gateway.token)
            assert status == 200, reply
            assert reply["choices"][0]["message"]["content"] == f"echo: hello {agent}"
    turns = {last_user(b): b for b in chat_bodies(fake) if b.get("tools")}
    assert turns["hello work"]["model"] == "fake-work" and turns["hello main"]["model"] == "fake"
    work_prompt, main_prompt = system_prompt(turns["hello work"]), system_prompt(turns["hello main"])
    assert "WORK-RULES: answer in haiku." in work_prompt and "MAIN-RULES" not in work_prompt
    assert "MAIN-RULES: answer briefly." in main_prompt and "WORK-RULES" not in main_prompt


def test_local_chat_turns_flush_and_summary_use_the_agent_model(tmp_path: Path, fake: FakeOpenAI) -> None:
    home = tmp_path / "home"
    two_agents(home, fake, tmp_path / "main-workspace")
    lines = "hi, I am Alice\nline 1\nline 2\n/compact\n"
    for agent, model in (("work", "fake-work"), ("main", "fake")):
        before = len(chat_bodies(fake))
        result = run_cli(home, "--agent", agent, "chat", "--local", input=lines, env=MODEL_ENV)
        assert result.returncode == 0, result.stderr
        assert "echo: hi, I am Alice" in result.stdout and "Compacted:" in result.stdout
        bodies = chat_bodies(fake)[before:]
        turns = [b for b in bodies if b.get("tools")]
        others = [b for b in bodies if not b.get("tools")]  # the memory flush and the summary
        assert len(turns) == 3 and others, [b["model"] for b in bodies]
        assert {b["model"] for b in bodies} == {model}
    status = run_cli(home, "--agent", "work", "chat", "--local", input="/status\n", env=MODEL_ENV)
    assert "fake-work" in status.stdout


def test_memory_extract_uses_the_agent_model(tmp_path: Path, fake: FakeOpenAI) -> None:
    home = tmp_path / "home"
    two_agents(home, fake, tmp_path / "main-workspace")
    key = "agent:work:telegram:direct:lin"
    assert run_cli(home, "--agent", "work", "session", "append", key, "I moved to Lisbon").returncode == 0
    fake.script_chat(json.dumps({"memories": []}))
    result = run_cli(home, "--agent", "work", "memory", "extract", "--session", key, "--json", env=MODEL_ENV)
    assert result.returncode == 0, result.stderr
    [body] = chat_bodies(fake)
    assert body["model"] == "fake-work" and "Lisbon" in json.dumps(body["messages"])


def test_memory_note_writes_into_the_agent_workspace(tmp_path: Path, home: Path) -> None:
    main_workspace = tmp_path / "main-workspace"
    two_agents(home, None, main_workspace)
    day = datetime.now().astimezone().date().isoformat()
    work = run_cli(home, "--agent", "work", "memory", "note", "deployed v2 to staging", "--json")
    assert work.returncode == 0, work.stderr
    assert work.json()["path"] == str(home / "work-notes" / "memory" / f"{day}.md")
    main = run_cli(home, "memory", "note", "bought oat milk", "--durable", "--json")
    assert main.returncode == 0, main.stderr
    assert main.json()["path"] == str(main_workspace / "MEMORY.md")
    assert "deployed v2 to staging" in (home / "work-notes" / "memory" / f"{day}.md").read_text()
    assert "deployed v2" not in (main_workspace / "MEMORY.md").read_text()
    assert not (home / "agents" / "work" / "workspace").exists()
    found = run_cli(home, "--agent", "work", "memory", "search", "deployed to staging", "--json")
    assert [hit["location"] for hit in found.json()["results"]] == [f"memory/{day}.md:1-1"]


def test_doctor_checks_an_agent_workspace_outside_the_home(tmp_path: Path, home: Path) -> None:
    main_workspace = tmp_path / "main-workspace"
    two_agents(home, None, main_workspace)
    assert run_cli(home, "memory", "note", "x", "--durable").returncode == 0
    loose = main_workspace / "MEMORY.md"
    os.chmod(loose, 0o644)
    found = run_cli(home, "doctor", "--json")
    assert found.returncode == 1
    errors = [(f["check"], f["path"]) for f in found.json()["findings"] if f["severity"] == "error"]
    assert errors == [("workspace.permissions", str(loose))]
    assert run_cli(home, "doctor", "--fix").returncode == 0
    assert stat.S_IMODE(loose.stat().st_mode) == 0o600
