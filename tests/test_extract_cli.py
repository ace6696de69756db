"""`openclaw memory extract` as a real process: with the fake model server, and without any model."""

from __future__ import annotations

from pathlib import Path

from tests import fake_openai as fake_server
from tests.conftest import run_cli
from tests.extract_support import memory, reply

fake_openai = fake_server.fake_openai
KEY = "agent:main:telegram:direct:lin"


def model_env(url: str) -> dict[str, str]:
    return {
        "OPENCLAW_LLM__MODEL": "openai/fake",
        "OPENCLAW_LLM__APIBASE": url,
        "OPENCLAW_LLM__MAXRETRIES": "0",
        "OPENAI_API_KEY": fake_server.FAKE_API_KEY,
    }


def say(home: Path, text: str, role: str = "user") -> None:
    assert run_cli(home, "session", "append", KEY, text, "--role", role).returncode == 0


def test_extract_with_the_model_shows_added_and_skipped_with_reasons(home: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    say(home, "I moved to Lisbon and I collect stamps.")
    fake_openai.script_chat(
        reply(
            memory("profile", "User lives in Lisbon", [0], attribute="city"),
            memory("hobby", "User collects stamps", [0]),
        )
    )
    result = run_cli(home, "memory", "extract", "--session", KEY, "--json", env=model_env(fake_openai.url))
    assert result.returncode == 0, result.stderr
    report = result.json()
    assert report["method"] == "model" and report["messages"] == {"start": 0, "end": 1}
    actions = {(o["action"], o["l0"], o["reason"]) for o in report["outcomes"]}
    assert ("skipped", "User collects stamps", "unknown category 'hobby'") in actions
    [added] = [a for a in actions if a[0] == "added"]
    assert added[1] == "User lives in Lisbon" and added[2].startswith("new")

    listed = run_cli(home, "memory", "list", "--json").json()
    assert [r["l0"] for r in listed] == ["User lives in Lisbon"]
    # Run again: nothing new since the checkpoint, no request to the model.
    again = run_cli(home, "memory", "extract", "--session", KEY, env=model_env(fake_openai.url))
    assert again.returncode == 0 and "no new messages" in again.stdout
    assert len(fake_openai.requests_to("/chat/completions")) == 1


def test_extract_dry_run_in_human_form_writes_nothing(home: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    say(home, "I prefer aisle seats.")
    fake_openai.script_chat(reply(memory("preference", "User prefers aisle seats", [0])))
    result = run_cli(home, "memory", "extract", "--session", KEY, "--dry-run", env=model_env(fake_openai.url))
    assert result.returncode == 0, result.stderr
    assert (
        "dry run" in result.stdout
        and "added" in result.stdout
        and "User prefers aisle seats" in result.stdout
    )
    assert run_cli(home, "memory", "list", "--json").json() == []


def test_extract_without_a_model_uses_patterns(home: Path) -> None:
    say(home, "记住我对花生过敏。")
    say(home, "I hate early meetings.")
    result = run_cli(home, "memory", "extract", "--session", KEY, "--json")
    assert result.returncode == 0, result.stderr
    report = result.json()
    assert report["method"] == "patterns" and report["modelError"] is None
    assert sorted(o["l0"] for o in report["outcomes"]) == ["User hates early meetings", "用户对花生过敏"]


def test_extract_with_an_unreachable_model_says_so_once_and_falls_back(home: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    say(home, "I like tea.")
    say(home, "I like cake.")
    fake_openai.fail_next(5, status=500)
    result = run_cli(home, "memory", "extract", "--session", KEY, "--json", env=model_env(fake_openai.url))
    assert result.returncode == 0
    assert result.stderr.count("extraction model unavailable") == 1 and "HTTP 500" in result.stderr
    assert len(result.json()["outcomes"]) == 2


def test_extract_of_an_unknown_session_is_a_one_line_error(home: Path) -> None:
    result = run_cli(home, "memory", "extract", "--session", "agent:main:telegram:direct:nobody")
    assert result.returncode == 1
    assert "no session for key" in result.stderr and len(result.stderr.strip().splitlines()) <= 2


def test_extract_without_a_session_is_a_usage_error(home: Path) -> None:
    result = run_cli(home, "memory", "extract")
    assert result.returncode == 2 and "--session" in result.stderr


def test_extract_help_has_examples(home: Path) -> None:
    result = run_cli(home, "memory", "extract", "--help")
    assert result.returncode == 0 and "Examples:" in result.stdout and "--dry-run" in result.stdout
