"""Inputs the tester found mishandled: raw line separators, exact stdin, agent id case and reserved names,
the daily reset across DST, and reading commands that must not modify the home."""

from __future__ import annotations

import json
import os
import stat
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from openclaw_cli.sessions.lifecycle import ResetPolicy, daily_boundary, stale_reason

KEY = "agent:main:main"
NEW_YORK = ZoneInfo("America/New_York")
SEPARATORS = ("\u2028", "\u0085")


@pytest.mark.parametrize("separator", SEPARATORS)
def test_transcript_keeps_a_raw_line_separator_inside_a_message(cli, home: Path, separator: str) -> None:  # type: ignore[no-untyped-def]
    text = f"before{separator}after"
    assert cli("session", "append", KEY, text).returncode == 0
    assert cli("session", "append", KEY, "-", input=f"second{separator}line\n").returncode == 0
    raw = next((home / "agents" / "main" / "sessions").glob("s-*/messages.jsonl")).read_bytes()
    assert separator.encode("utf-8") in raw  # stored raw (ensure_ascii=False), not escaped
    shown = cli("session", "show", KEY, "--json")
    assert shown.returncode == 0 and shown.stderr == ""
    assert [m["content"] for m in shown.json()["messages"]] == [text, f"second{separator}line\n"]
    exported = cli("session", "export", KEY)
    lines = exported.stdout.split("\n")
    assert len([line for line in lines if line]) == 3  # meta + 2 messages: one record per "\n"
    assert json.loads(lines[1])["content"] == text


@pytest.mark.parametrize("separator", SEPARATORS)
def test_memory_batch_lines_end_at_newline_only(cli, tmp_path: Path, separator: str) -> None:  # type: ignore[no-untyped-def]
    # Lines 1-2 hold the separator inside a JSON string; line 3 is bad. Had the reader split at the
    # separator, it would report a bad line 1 (half a JSON object) instead of line 3.
    lines = [
        json.dumps({"text": f"one{separator}two"}, ensure_ascii=False),
        json.dumps({"text": f"three{separator}"}, ensure_ascii=False),
        '{"text": oops}',
    ]
    result = cli("memory", "add", "--batch", "-", input="\n".join(lines) + "\n")
    assert result.returncode == 1 and "stdin line 3: not valid JSON" in result.stderr, result.stderr
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = cli("memory", "add", "--batch", str(source))
    assert result.returncode == 1 and "line 3: not valid JSON" in result.stderr, result.stderr


def test_stdin_text_is_stored_exactly(cli) -> None:  # type: ignore[no-untyped-def]
    for given in ("hello\n", "hello", "two\n\n", "\r\nwindows\r\n"):
        assert cli("session", "append", KEY, "-", input=given).returncode == 0
    contents = [m["content"] for m in cli("session", "show", KEY, "--json").json()["messages"]]
    assert contents == ["hello\n", "hello", "two\n\n", "\r\nwindows\r\n"]
    assert "is stored exactly" in " ".join(cli("session", "append", "--help").stdout.split())


def test_agent_ids_are_lower_cased(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("--agent", "Main", "session", "append", KEY, "one").returncode == 0
    assert cli("--agent", "main", "session", "append", KEY, "two").returncode == 0
    assert sorted(p.name for p in (home / "agents").iterdir()) == ["main"]
    shown = cli("--agent", "MAIN", "session", "show", KEY, "--json").json()
    assert [m["content"] for m in shown["messages"]] == ["one", "two"]


@pytest.mark.parametrize("agent", ["_shared", "_x", "_SHARED"])
def test_reserved_agent_ids_are_a_usage_error(cli, home: Path, agent: str) -> None:  # type: ignore[no-untyped-def]
    result = cli("--agent", agent, "session", "list")
    assert result.returncode == 2, result
    lines = result.stderr.strip().split("\n")
    assert len(lines) == 1 and "reserved" in lines[0] and "Traceback" not in result.stderr
    assert not home.exists()


def _utc(year: int, month: int, day: int, hour: int) -> datetime:
    return datetime(year, month, day, hour, tzinfo=UTC)


@pytest.mark.parametrize(
    ("now", "at_hour", "expected_utc"),
    [
        # Spring forward (2026-03-08 02:00 EST -> 03:00 EDT). The day after, yesterday's 01:00 was EST.
        (datetime(2026, 3, 9, 0, 30, tzinfo=NEW_YORK), 1, _utc(2026, 3, 8, 6)),
        (datetime(2026, 3, 9, 3, 30, tzinfo=NEW_YORK), 4, _utc(2026, 3, 8, 8)),
        (datetime(2026, 3, 9, 4, 30, tzinfo=NEW_YORK), 4, _utc(2026, 3, 9, 8)),
        (datetime(2026, 3, 8, 5, 0, tzinfo=NEW_YORK), 4, _utc(2026, 3, 8, 8)),  # 23-hour day
        # Fall back (2026-11-01 02:00 EDT -> 01:00 EST). The day after, yesterday's 00:00 was EDT.
        (datetime(2026, 11, 2, 0, 30, tzinfo=NEW_YORK), 1, _utc(2026, 11, 1, 5)),
        (datetime(2026, 11, 2, 3, 30, tzinfo=NEW_YORK), 4, _utc(2026, 11, 1, 9)),
        (datetime(2026, 11, 2, 4, 30, tzinfo=NEW_YORK), 4, _utc(2026, 11, 2, 9)),
        (datetime(2026, 11, 2, 0, 30, tzinfo=NEW_YORK), 0, _utc(2026, 11, 2, 5)),
        (datetime(2026, 11, 1, 23, 30, tzinfo=NEW_YORK), 0, _utc(2026, 11, 1, 4)),
    ],
)
def test_daily_boundary_across_dst(now: datetime, at_hour: int, expected_utc: datetime) -> None:
    assert daily_boundary(now, at_hour).astimezone(UTC) == expected_utc


@pytest.mark.parametrize(
    ("last_active_utc", "now", "stale"),
    [
        # Day after spring forward, reset at 01:00 local = 06:00 UTC on 03-08.
        (_utc(2026, 3, 8, 5).replace(minute=30), datetime(2026, 3, 9, 0, 30, tzinfo=NEW_YORK), True),
        (_utc(2026, 3, 8, 6).replace(minute=30), datetime(2026, 3, 9, 0, 30, tzinfo=NEW_YORK), False),
        # Day after fall back, reset at 00:00 local = 04:00 UTC on 11-01 (still EDT then).
        (_utc(2026, 11, 1, 3).replace(minute=30), datetime(2026, 11, 1, 23, 30, tzinfo=NEW_YORK), True),
        (_utc(2026, 11, 1, 4).replace(minute=30), datetime(2026, 11, 1, 23, 30, tzinfo=NEW_YORK), False),
    ],
)
def test_daily_reset_across_dst(last_active_utc: datetime, now: datetime, stale: bool) -> None:
    at_hour = 1 if now.month == 3 else 0
    reason = stale_reason(last_active_utc, now, ResetPolicy(at_hour=at_hour))
    assert (reason == "daily-reset") is stale


def _modes(home: Path) -> dict[str, int]:
    return {str(p): stat.S_IMODE(p.lstat().st_mode) for p in [home, *home.rglob("*")]}


def test_reading_commands_change_no_permissions(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("session", "append", KEY, "hello").returncode == 0
    for path in [home, *home.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    before = _modes(home)
    reads = (("doctor",), ("doctor", "--json"), ("memory", "status"), ("session", "list"))
    for args in (*reads, ("session", "show", KEY), ("config", "show")):
        cli(*args)
        assert _modes(home) == before, args


def test_a_writing_command_creates_the_home_private(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("session", "append", KEY, "hello").returncode == 0
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
