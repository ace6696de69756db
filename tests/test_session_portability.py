"""`openclaw session export` / `session import`: a whole conversation moves between homes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli

KEY = "agent:main:telegram:default:direct:42"


def _conversation(cli) -> str:  # type: ignore[no-untyped-def]
    session_id = cli("session", "append", KEY, "remember that I like 绿茶", "--json").json()["sessionId"]
    cli("session", "append", KEY, "--role", "assistant", "noted\u2028with a raw separator")
    cli("session", "append", KEY, "--role", "user", "thanks")
    return str(session_id)


def test_a_session_moves_to_another_home_with_its_messages_and_summary(
    cli, home: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    session_id = _conversation(cli)
    context = home / "agents" / "main" / "sessions" / session_id / "context.json"
    context.write_text(json.dumps({"summary": "likes green tea", "summaryCheckpoint": 1}), encoding="utf-8")
    target = tmp_path / "chat.jsonl"
    assert cli("session", "export", KEY, "-o", str(target)).returncode == 0
    other = tmp_path / "other"
    result = run_cli(other, "session", "import", str(target), "--json")
    assert result.returncode == 0, result.stderr
    assert result.json() == {
        "sessionId": session_id,
        "sessionKey": KEY,
        "status": "active",
        "messages": 3,
        "storedArchived": False,
    }
    before = cli("session", "show", KEY, "--json").json()
    after = run_cli(other, "session", "show", KEY, "--json").json()
    assert after["messages"] == before["messages"]
    assert after["meta"]["messageCount"] == 3 and after["meta"]["createdAt"] == before["meta"]["createdAt"]
    moved = other / "agents" / "main" / "sessions" / session_id / "context.json"
    assert json.loads(moved.read_text(encoding="utf-8"))["summary"] == "likes green tea"
    assert run_cli(other, "doctor", "--json").returncode == 0
    appended = run_cli(other, "session", "append", KEY, "and one more", "--json").json()
    assert appended["sessionId"] == session_id and appended["message"]["idx"] == 3


def test_stdin_import_into_another_agent_moves_the_key(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _conversation(cli)
    exported = cli("session", "export", KEY)
    other = tmp_path / "other"
    result = run_cli(other, "--agent", "helper", "session", "import", "-", "--json", input=exported.stdout)
    assert result.returncode == 0, result.stderr
    assert result.json()["sessionKey"] == "agent:helper:telegram:default:direct:42"
    rows = run_cli(other, "--agent", "helper", "session", "list", "--json").json()
    assert [r["sessionKey"] for r in rows] == ["agent:helper:telegram:default:direct:42"]


def test_importing_the_same_session_twice_is_refused(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _conversation(cli)
    exported = cli("session", "export", KEY).stdout
    other = tmp_path / "other"
    assert run_cli(other, "session", "import", "-", input=exported).returncode == 0
    again = run_cli(other, "session", "import", "-", input=exported)
    assert again.returncode == 1 and "already exists here" in again.stderr


def test_a_key_that_already_has_a_session_keeps_it_and_the_import_is_archived(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _conversation(cli)
    exported = cli("session", "export", KEY).stdout
    other = tmp_path / "other"
    current = run_cli(other, "session", "append", KEY, "a conversation already going on", "--json").json()
    result = run_cli(other, "session", "import", "-", "--json", input=exported)
    assert result.returncode == 0 and result.json()["storedArchived"] is True
    assert result.json()["status"] == "archived"
    shown = run_cli(other, "session", "show", KEY, "--json").json()
    assert shown["meta"]["sessionId"] == current["sessionId"]
    archived = run_cli(other, "session", "list", "--status", "archived", "--json").json()
    assert [r["sessionId"] for r in archived] == [result.json()["sessionId"]]


def test_a_truncated_session_export_is_refused_and_nothing_written(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _conversation(cli)
    lines = cli("session", "export", KEY).stdout.split("\n")
    other = tmp_path / "other"
    cut = run_cli(other, "session", "import", "-", input="\n".join(lines[:2]) + "\n")
    assert cut.returncode == 1 and "truncated" in cut.stderr
    torn = run_cli(other, "session", "import", "-", input="\n".join(lines[:2]) + "\n" + lines[2][:20])
    assert torn.returncode == 1 and "line 3: not valid JSON" in torn.stderr
    assert run_cli(other, "session", "list", "--json").json() == []


def test_bad_session_lines_are_refused_by_line_number(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    _conversation(cli)
    lines = cli("session", "export", KEY).stdout.strip().split("\n")
    message = json.loads(lines[1])
    other = tmp_path / "other"
    cases = {
        "line 1: the first line must be the meta line": [lines[1], lines[0]],
        "line 2: unknown role 'wizard'": [lines[0], json.dumps({**message, "role": "wizard"})],
        "idx must be an integer above": [lines[0], lines[2], lines[1], lines[3]],
        "invalid session id": [json.dumps({**json.loads(lines[0]), "sessionId": "../../etc"})],
        "the input is empty": [""],
    }
    for expected, body in cases.items():
        result = run_cli(other, "session", "import", "-", input="\n".join(body) + "\n")
        assert result.returncode == 1 and expected in result.stderr, (expected, result.stderr)
    assert run_cli(other, "session", "list", "--json").json() == []
    assert not (tmp_path / "etc").exists()
