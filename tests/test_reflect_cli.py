"""`openclaw reflect` as a real process, against the fake model server on loopback."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from openclaw_cli.memory.reflect.run import run_lock
from tests import fake_openai as fake_server
from tests.conftest import Result, run_cli
from tests.fake_openai import FAKE_API_KEY, FakeOpenAI
from tests.reflect_helpers import summarising_model

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

fake_openai = fake_server.fake_openai
Cli = Callable[..., Result]


def model_env(fake: FakeOpenAI) -> dict[str, str]:
    return {
        "OPENCLAW_LLM__MODEL": "openai/fake-chat",
        "OPENCLAW_LLM__APIBASE": fake.url,
        "OPENCLAW_LLM__MAXRETRIES": "0",
        "OPENAI_API_KEY": FAKE_API_KEY,
    }


@pytest.fixture(scope="module")
def remembered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home holding three preferences to reflect on, written once by a real `memory add --batch`; the
    tests that reflect on them each get a copy (add_memories)."""
    home = tmp_path_factory.mktemp("remembered") / "home"
    lines = "\n".join(
        f'{{"text": "{text}", "category": "preference", "createdAt": "2026-01-0{n + 1}T10:00:00Z"}}'
        for n, text in enumerate(["prefers dark mode", "picked a dark Slack theme", "likes minimal UIs"])
    )
    assert run_cli(home, "memory", "add", "--batch", "-", input=lines + "\n").returncode == 0
    return home


def add_memories(home: Path, remembered: Path) -> None:
    shutil.copytree(remembered, home, symlinks=True)


def test_reflect_writes_insights_and_reports_them(
    cli: Cli, fake_openai: FakeOpenAI, home: Path, remembered: Path
) -> None:
    add_memories(home, remembered)
    fake_openai.respond_with(summarising_model)
    result = cli("reflect", env=model_env(fake_openai))
    assert result.returncode == 0, result.stderr
    assert "preference, user default: 3 memories, 1 insight\n" in result.stdout
    assert "wrote 1 insight from 1 model call, 3 memories marked reflected" in result.stdout
    listed = cli("memory", "list", "--category", "insight", "--json").json()
    assert [r["attribute"] for r in listed] == ["preference pattern"]


def test_reflect_dry_run_json_changes_nothing(
    cli: Cli, fake_openai: FakeOpenAI, home: Path, remembered: Path
) -> None:
    add_memories(home, remembered)
    fake_openai.respond_with(summarising_model)
    result = cli("reflect", "--dry-run", "--json", env=model_env(fake_openai))
    assert result.returncode == 0, result.stderr
    report = result.json()
    assert report["dryRun"] and report["modelCalls"] == 1 and report["reflected"] == 0
    assert report["groups"][0]["insights"][0]["evidence"]
    assert cli("memory", "list", "--category", "insight", "--json").json() == []
    assert all(r["reflectedAt"] is None for r in cli("memory", "list", "--json").json())


def test_reflect_if_due_exits_0_quietly_when_not_due(cli: Cli, fake_openai: FakeOpenAI) -> None:
    assert cli("memory", "add", "just one memory", "-c", "event").returncode == 0
    result = cli("reflect", "--if-due", env=model_env(fake_openai))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert fake_openai.requests == []


def test_reflect_without_a_model_exits_1_with_one_line(cli: Cli, home: Path, remembered: Path) -> None:
    add_memories(home, remembered)
    result = cli("reflect")
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "reflection needs a chat model" in result.stderr
    assert all(r["reflectedAt"] is None for r in cli("memory", "list", "--json").json())


def test_reflect_model_failure_exits_1_with_nothing_changed(
    cli: Cli, fake_openai: FakeOpenAI, home: Path, remembered: Path
) -> None:
    add_memories(home, remembered)
    fake_openai.fail_next(5, status=500)
    result = cli("reflect", env=model_env(fake_openai))
    assert result.returncode == 1
    assert "HTTP 500" in result.stderr and "nothing was changed" in result.stderr
    assert all(r["reflectedAt"] is None for r in cli("memory", "list", "--json").json())


def test_reflect_unknown_category_is_a_usage_error(cli: Cli) -> None:
    result = cli("reflect", "--category", "hobby")
    assert result.returncode == 2 and "cannot reflect on 'hobby'" in result.stderr


def test_reflect_while_another_run_holds_the_lock(
    cli: Cli, fake_openai: FakeOpenAI, home: Path, remembered: Path
) -> None:
    add_memories(home, remembered)
    with run_lock(home / "agents" / "main" / "memory") as held:
        assert held
        busy = cli("reflect", env=model_env(fake_openai))
        quiet = cli("reflect", "--if-due", env=model_env(fake_openai))
    assert busy.returncode == 1 and "another reflection is running" in busy.stderr
    assert (quiet.returncode, quiet.stdout) == (0, "")
    assert fake_openai.requests == []
