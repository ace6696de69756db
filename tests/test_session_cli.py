"""`openclaw session ...` as real processes."""

from __future__ import annotations

import json
from pathlib import Path

KEY = "agent:main:main"


def test_append_show_list_export_round_trip(cli) -> None:  # type: ignore[no-untyped-def]
    first = cli("session", "append", KEY, "--role", "user", "hello there", "--json")
    assert first.returncode == 0, first.stderr
    assert first.json()["newSession"] is True
    piped = cli("session", "append", KEY, "--role", "assistant", "-", input="你好 from stdin\n")
    assert piped.returncode == 0 and "appended message 1" in piped.stdout
    shown = cli("session", "show", KEY, "--json")
    assert shown.returncode == 0 and shown.stderr == ""
    body = shown.json()
    assert [m["content"] for m in body["messages"]] == ["hello there", "你好 from stdin\n"]
    assert body["meta"]["messageCount"] == 2
    tail = cli("session", "show", body["meta"]["sessionId"], "--tail", "1", "--json").json()
    assert [m["idx"] for m in tail["messages"]] == [1]
    rows = cli("session", "list", "--json").json()
    assert [(r["sessionKey"], r["status"]) for r in rows] == [(KEY, "active")]
    exported = cli("session", "export", KEY)
    lines = exported.json_lines()
    assert lines[0]["type"] == "meta" and lines[0]["sessionId"] == body["meta"]["sessionId"]
    assert [(line["type"], line["idx"]) for line in lines[1:]] == [("message", 0), ("message", 1)]


def test_unknown_key_exits_1_with_a_message(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("session", "show", "agent:main:telegram:direct:404")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("openclaw: error: no session for key agent:main:telegram:direct:404")
    assert "Traceback" not in result.stderr


def test_bad_agent_and_session_ids_are_clear_errors(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    for args in (("--agent", "../evil", "session", "list"), ("session", "show", "s-../../etc")):
        result = cli(*args)
        assert result.returncode == 1 and "invalid" in result.stderr and "Traceback" not in result.stderr
    assert not (home.parent / "evil").exists() and not home.exists()


def test_delete_requires_yes(cli) -> None:  # type: ignore[no-untyped-def]
    cli("session", "append", KEY, "hi")
    refused = cli("session", "delete", KEY)
    assert refused.returncode == 1 and "--yes" in refused.stderr
    assert len(cli("session", "list", "--json").json()) == 1
    done = cli("session", "delete", KEY, "--yes")
    assert done.returncode == 0 and cli("session", "list", "--json").json() == []


def test_show_warns_about_damaged_lines_on_stderr(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    session_id = cli("session", "append", KEY, "one", "--json").json()["sessionId"]
    cli("session", "append", KEY, "two")
    path = home / "agents" / "main" / "sessions" / session_id / "messages.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + b"garbage\n" + lines[1] + b'{"idx":2,"ro')
    shown = cli("session", "show", KEY, "--json")
    assert shown.returncode == 0
    assert [m["content"] for m in shown.json()["messages"]] == ["one", "two"]
    assert "malformed line 2" in shown.stderr and "torn last line 4" in shown.stderr
    assert [p["line"] for p in shown.json()["problems"]] == [2, 4]


def test_key_follows_dm_scope_and_identity_links(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    default = cli("session", "key", "--channel", "telegram", "--account", "bot", "--peer", "123", "--json")
    # dmScope main keeps the main session for the owner: telegram:123 gets its own session
    assert default.json()["sessionKey"] == "agent:main:telegram:direct:123" and default.json()["rerouted"]
    home.mkdir(parents=True)
    (home / "openclaw.json").write_text(json.dumps({"session": {"dmScope": "main-shared-by-everyone"}}))
    shared = cli("session", "key", "--channel", "telegram", "--account", "bot", "--peer", "123")
    assert shared.stdout.strip() == KEY
    config = {"session": {"dmScope": "per-peer", "identityLinks": {"alice": ["telegram:123", "discord:987"]}}}
    (home / "openclaw.json").write_text(json.dumps(config))
    linked = cli("session", "key", "--channel", "discord", "--account", "x", "--peer", "987", "--json")
    assert linked.json()["sessionKey"] == "agent:main:direct:alice"
    group = cli("session", "key", "--channel", "Discord", "--account", "x", "--group", "55")
    assert group.stdout.strip() == "agent:main:discord:x:group:55"


def test_new_reset_archive_sweep_and_context(cli) -> None:  # type: ignore[no-untyped-def]
    first = cli("session", "new", KEY, "--json").json()["session"]["sessionId"]
    reset = cli("session", "reset", KEY, "--json").json()
    assert reset["previousSessionId"] == first
    cli("session", "append", KEY, "--role", "user", "a question")
    context = cli("session", "context", KEY, "--budget", "100", "--json").json()
    assert [m["content"] for m in context["messages"]] == ["a question"] and context["tokens"] <= 100
    archived = cli("session", "archive", KEY)
    assert archived.returncode == 0
    statuses = sorted(r["status"] for r in cli("session", "list", "--json").json())
    assert statuses == ["archived", "archived"]
    assert cli("session", "sweep", "--json").json() == []
    missing = cli("session", "reset", KEY)
    assert missing.returncode == 1 and "session new" in missing.stderr


def test_bad_role_and_help_examples(cli) -> None:  # type: ignore[no-untyped-def]
    bad = cli("session", "append", KEY, "--role", "robot", "x")
    assert bad.returncode == 1 and "unknown role" in bad.stderr
    for command in (
        "list",
        "show",
        "append",
        "new",
        "reset",
        "archive",
        "delete",
        "export",
        "key",
        "sweep",
        "context",
    ):
        shown = cli("session", command, "--help")
        assert shown.returncode == 0 and "Examples" in shown.stdout, command


def test_list_does_not_load_heavy_modules(home: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys\nfrom openclaw_cli.cli.main import app\n"
        "try:\n    app(['session', 'list', '--json'], standalone_mode=False)\nexcept SystemExit:\n    pass\n"
        "heavy = ('pydantic_settings', 'filelock', 'tiktoken', 'litellm')\n"
        "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"OPENCLAW_HOME": str(home), "PATH": ""},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "[]"


def test_show_counts_tokens_that_appends_leave_uncounted(cli) -> None:  # type: ignore[no-untyped-def]
    """Appends skip token counting (the tokenizer is slow to load); show counts the history. The model
    totals stay 0: no model was called (they are what the model reports, see test_usage.py)."""
    cli("session", "append", "agent:main:main", "--role", "user", "remember that I like green tea")
    cli("session", "append", "agent:main:main", "--role", "assistant", "Noted: green tea.")
    meta = cli("session", "show", "agent:main:main", "--json").json()["meta"]
    assert meta["historyTokens"] > 10
    assert meta["totalInputTokens"] == 0 and meta["totalOutputTokens"] == 0
    shown = cli("session", "show", "agent:main:main").stdout
    assert f"history {meta['historyTokens']} tokens" in shown and "model tokens in/out 0/0" in shown
