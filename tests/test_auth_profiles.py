"""Per-agent auth profiles: agents/<id>/agent/auth-profiles.json (0600), `openclaw auth set|list|remove`
with --agent, a key read from stdin (never argv, never printed), the agent's model calls using its profile
before the environment, and a profile file with the wrong mode refused."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from openclaw_cli.config.loading import Settings, validate_settings
from openclaw_cli.core.errors import InvalidInput, NotFound, StoreError
from openclaw_cli.core.paths import Home
from openclaw_cli.identity.auth_profiles import (
    profiles_path,
    provider_of,
    read_profiles,
    remove_key,
    set_key,
    with_auth_profile,
)
from tests.conftest import run_cli
from tests.fake_openai import FAKE_API_KEY, FakeOpenAI, last_user_text

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
KEY = "sk-profile-work-0123456789"


def _settings(**sections: object) -> Settings:
    return validate_settings(dict(sections), {}, Path("openclaw.json"))


@pytest.fixture
def home(tmp_path: Path) -> Home:
    return Home(tmp_path / "home")


def test_set_list_remove_round_trip(home: Home) -> None:
    path = set_key(home, "work", "OpenAI", KEY, NOW)
    assert path == home.root / "agents" / "work" / "agent" / "auth-profiles.json"
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    stored = json.loads(path.read_text(encoding="utf-8"))
    assert stored["profiles"]["openai"]["key"] == KEY
    assert read_profiles(path)["openai"].listed() == {
        "provider": "openai",
        "type": "api_key",
        "updatedAt": NOW.isoformat(),
    }
    assert read_profiles(profiles_path(home, "main")) == {}  # another agent's file: none
    set_key(home, "work", "anthropic", "sk-ant-1", NOW)
    remove_key(home, "work", "openai")
    assert sorted(read_profiles(path)) == ["anthropic"]
    with pytest.raises(NotFound, match="no key for openai"):
        remove_key(home, "work", "openai")
    with pytest.raises(NotFound):
        remove_key(home, "main", "openai")


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("", "no key given"),
        ("\n", "no key given"),
        ("sk one two", "spaces"),
        ("sk-1\nsk-2", "line breaks"),
        ("sk-\x07bell", "control characters"),
        ("s" * 5000, "longer than 4096"),
    ],
)
def test_bad_keys_are_refused_without_quoting_them(home: Home, key: str, problem: str) -> None:
    with pytest.raises(InvalidInput, match=problem) as caught:
        set_key(home, "main", "openai", key, NOW)
    if key.strip():
        assert key.strip() not in caught.value.message
    assert not profiles_path(home, "main").exists()


@pytest.mark.parametrize("provider", ["", "open ai", "../openai", "x" * 65, "-openai"])
def test_bad_provider_names(home: Home, provider: str) -> None:
    with pytest.raises(InvalidInput, match="invalid provider"):
        set_key(home, "main", provider, KEY, NOW)


def test_wrong_mode_is_refused_not_used(home: Home) -> None:
    path = set_key(home, "main", "openai", KEY, NOW)
    os.chmod(path, 0o644)
    settings = _settings(llm={"model": "openai/gpt-4o-mini"})
    for attempt in (
        lambda: read_profiles(path),
        lambda: with_auth_profile(settings, home, "main"),
        lambda: set_key(home, "main", "anthropic", "sk-ant-2", NOW),
    ):
        with pytest.raises(StoreError) as caught:
            attempt()
        assert "mode 0644" in caught.value.message and "chmod 600" in (caught.value.hint or "")
    assert path.stat().st_mode & 0o777 == 0o644  # refused, not silently changed
    assert sorted(json.loads(path.read_text())["profiles"]) == ["openai"]


def test_damaged_file_is_an_error(home: Home) -> None:
    path = set_key(home, "main", "openai", KEY, NOW)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(StoreError, match="not valid JSON"):
        read_profiles(path)


def test_provider_is_the_models_prefix() -> None:
    assert provider_of("openai/gpt-4o-mini") == "openai"
    assert provider_of("openrouter/anthropic/claude") == "openrouter"
    assert provider_of("gpt-4o") is None and provider_of(None) is None


def test_which_key_an_agents_model_calls_use(home: Home) -> None:
    set_key(home, "work", "openai", KEY, NOW)
    set_key(home, "main", "anthropic", "sk-ant-main", NOW)
    plain = _settings(llm={"model": "openai/gpt-4o-mini", "apiKey": "sk-global"})
    assert with_auth_profile(plain, home, "work").llm.api_key == KEY  # its profile over llm.apiKey
    assert with_auth_profile(plain, home, "main").llm.api_key == "sk-global"  # no openai profile
    assert with_auth_profile(plain, home, "other").llm.api_key == "sk-global"  # never another's
    no_key = _settings(llm={"model": "openai/gpt-4o-mini"})
    assert with_auth_profile(no_key, home, "main").llm.api_key is None  # then the environment
    own = _settings(
        llm={"model": "openai/gpt-4o-mini"}, agents={"list": [{"id": "work", "apiKey": "sk-entry"}]}
    )
    from openclaw_cli.identity.agent_config import for_agent

    assert with_auth_profile(for_agent(own, "work"), home, "work").llm.api_key == "sk-entry"


def test_a_running_process_uses_a_changed_profile_from_its_next_use(home: Home) -> None:
    from openclaw_cli.agent.runtime import AgentRuntime

    runtime = AgentRuntime(home, _settings(llm={"model": "openai/gpt-4o-mini"}))
    try:
        first = runtime.services("main")
        assert first.settings.llm.api_key is None
        assert runtime.services("main") is first  # unchanged file: the same services, nothing re-read
        path = set_key(home, "main", "openai", KEY, NOW)
        assert runtime.services("main").settings.llm.api_key == KEY
        set_key(home, "main", "openai", "sk-rotated", NOW)
        assert runtime.services("main").settings.llm.api_key == "sk-rotated"
        os.chmod(path, 0o644)  # a chmod alone is seen too: refused from the next use
        with pytest.raises(StoreError, match="mode 0644"):
            runtime.services("main")
        os.chmod(path, 0o600)
        remove_key(home, "main", "openai")
        assert runtime.services("main").settings.llm.api_key is None
    finally:
        runtime.close()


# --- the CLI and a real model call --------------------------------------------------------------


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    server.respond_with(lambda body: f"echo: {last_user_text(body)}")
    try:
        yield server
    finally:
        server.stop()


def test_cli_set_list_remove_never_show_the_key(tmp_path: Path) -> None:
    root = tmp_path / "home"
    stored = run_cli(root, "auth", "set", "openai", "--agent", "work", input=KEY + "\n")
    assert stored.returncode == 0, stored.stderr
    assert KEY not in stored.stdout + stored.stderr
    listed = run_cli(root, "auth", "list", "--agent", "work", "--json")
    assert listed.returncode == 0 and KEY not in listed.stdout
    assert [p["provider"] for p in listed.json()["profiles"]] == ["openai"]
    assert run_cli(root, "auth", "list", "--json").json()["profiles"] == []  # agent main has none
    on_argv = run_cli(root, "auth", "set", "anthropic", "sk-typed-on-argv", input="")
    assert on_argv.returncode == 2
    assert "sk-typed-on-argv" not in on_argv.stdout + on_argv.stderr
    assert not (root / "agents" / "main" / "agent" / "auth-profiles.json").exists()
    removed = run_cli(root, "auth", "remove", "openai", "--agent", "work")
    assert removed.returncode == 0, removed.stderr
    again = run_cli(root, "auth", "remove", "openai", "--agent", "work")
    assert again.returncode == 1 and len(again.stderr.strip().splitlines()) == 1


def test_cli_wrong_mode_is_one_line(tmp_path: Path) -> None:
    root = tmp_path / "home"
    assert run_cli(root, "auth", "set", "openai", input=KEY).returncode == 0
    os.chmod(root / "agents" / "main" / "agent" / "auth-profiles.json", 0o640)
    listed = run_cli(root, "auth", "list")
    assert listed.returncode == 1
    assert len(listed.stderr.strip().splitlines()) == 1 and "chmod 600" in listed.stderr


def test_model_calls_use_the_agents_profile_then_the_environment(
    tmp_path: Path, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_API_KEY)  # the environment's key, for agents without one
    root = tmp_path / "home"
    root.mkdir(mode=0o700)
    config = {
        "llm": {"model": "openai/fake", "apiBase": fake.url, "maxRetries": 0},
        "memory": {"extraction": {"enabled": False}},
    }
    (root / "openclaw.json").write_text(json.dumps(config), encoding="utf-8")
    assert run_cli(root, "auth", "set", "openai", "--agent", "work", input=KEY).returncode == 0
    for agent, expected in (("work", KEY), ("main", FAKE_API_KEY)):
        before = len(fake.requests_to("/chat/completions"))
        chatted = run_cli(root, "chat", "--agent", agent, f"hello from {agent}")
        assert chatted.returncode == 0, chatted.stderr
        sent = fake.requests_to("/chat/completions")[before:]
        assert sent and {r.headers.get("authorization") for r in sent} == {f"Bearer {expected}"}
