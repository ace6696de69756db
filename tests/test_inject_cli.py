"""`openclaw memory inject` as a real process."""

from __future__ import annotations

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

KEY = "agent:main:main"


def test_inject_query_prints_the_block_and_leaves_fsrs_alone(cli) -> None:  # type: ignore[no-untyped-def]
    added = cli("memory", "add", "User prefers TypeScript over Java", "-c", "preference", "--json").json()
    result = cli("memory", "inject", "--query", "TypeScript or Java?")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("## Memories about this user\n")
    assert (
        f"- [preference, recorded {added['createdAt'][:10]}] User prefers TypeScript over Java"
        in result.stdout
    )
    after = cli("memory", "get", added["id"], "--json").json()
    assert after["fsrs"]["reps"] == added["fsrs"]["reps"]


def test_inject_session_uses_its_recent_messages_as_json(cli) -> None:  # type: ignore[no-untyped-def]
    wanted = cli("memory", "add", "用户喜欢喝燕麦拿铁", "-c", "preference", "--json").json()["id"]
    cli("memory", "add", "The server room is on floor 3", "-c", "note")
    assert cli("session", "append", KEY, "今天喝什么咖啡好？燕麦拿铁怎么样").returncode == 0
    result = cli("memory", "inject", "--session", KEY, "--json")
    assert result.returncode == 0, result.stderr
    block = result.json()
    assert block["language"] == "zh"
    assert block["recordIds"] == [wanted]
    assert block["text"].startswith("## 关于此用户的记忆")
    assert block["tokens"] > 0


def test_inject_needs_exactly_one_of_query_or_session(cli) -> None:  # type: ignore[no-untyped-def]
    neither = cli("memory", "inject")
    both = cli("memory", "inject", "--query", "x", "--session", KEY)
    assert neither.returncode == 2 and "--query" in neither.stderr
    assert both.returncode == 2


def test_inject_unknown_session_is_a_one_line_error(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("memory", "inject", "--session", KEY)
    assert result.returncode == 1
    assert "no session" in result.stderr and "Traceback" not in result.stderr


def test_inject_with_no_memories_says_so(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("memory", "inject", "--query", "anything")
    assert result.returncode == 0
    assert "(no memories to inject)" in result.stdout
