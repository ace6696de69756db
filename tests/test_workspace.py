"""Workspace files a session starts with (seed 003 §4.3), and `memory note` appends."""

from __future__ import annotations

import os
import stat
from datetime import date, datetime
from pathlib import Path

import pytest

from openclaw_cli.config.loading import Settings
from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.workspace.files import (
    MAX_SESSION_FILE_BYTES,
    append_note,
    session_files,
    workspace_dir,
)

TODAY = date(2026, 3, 24)


def _workspace(tmp_path: Path) -> tuple[Home, Path]:
    home = Home(tmp_path / "home")
    root = home.workspace_dir("main")
    (root / "memory").mkdir(parents=True)
    return home, root


def _write_all(root: Path) -> None:
    for name in ("AGENTS.md", "SOUL.md", "USER.md", "MEMORY.md"):
        (root / name).write_text(f"# {name}\n", encoding="utf-8")
    for day in ("2026-03-22", "2026-03-23", "2026-03-24", "2026-03-25"):
        (root / "memory" / f"{day}.md").write_text(f"log {day}\n", encoding="utf-8")


def test_private_session_gets_standing_files_memory_and_two_days_of_logs(tmp_path: Path) -> None:
    home, root = _workspace(tmp_path)
    _write_all(root)
    files = session_files(home, "main", Settings().memory, private=True, today=TODAY)
    assert [f.name for f in files] == [
        "AGENTS.md",
        "SOUL.md",
        "USER.md",
        "MEMORY.md",
        "memory/2026-03-23.md",
        "memory/2026-03-24.md",
    ]
    assert files[3].text == "# MEMORY.md\n"
    assert files[5].path == root / "memory" / "2026-03-24.md"


def test_memory_md_is_left_out_of_a_session_that_is_not_private(tmp_path: Path) -> None:
    home, root = _workspace(tmp_path)
    _write_all(root)
    files = session_files(home, "main", Settings().memory, private=False, today=TODAY)
    assert "MEMORY.md" not in [f.name for f in files]
    assert [f.name for f in files][:3] == ["AGENTS.md", "SOUL.md", "USER.md"]


def test_missing_files_are_left_out(tmp_path: Path) -> None:
    home, root = _workspace(tmp_path)
    (root / "SOUL.md").write_text("calm\n", encoding="utf-8")
    files = session_files(home, "main", Settings().memory, private=True, today=TODAY)
    assert [(f.name, f.text) for f in files] == [("SOUL.md", "calm\n")]


def test_configured_workspace_is_used(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    elsewhere = tmp_path / "notes"
    elsewhere.mkdir()
    (elsewhere / "USER.md").write_text("Lin\n", encoding="utf-8")
    settings = Settings(memory={"workspace": str(elsewhere)}).memory
    assert workspace_dir(home, "main", settings) == elsewhere
    assert [f.name for f in session_files(home, "main", settings, private=False, today=TODAY)] == ["USER.md"]


def test_workspace_file_not_utf8_is_loaded_with_replacement_characters(tmp_path: Path) -> None:
    home, root = _workspace(tmp_path)
    (root / "USER.md").write_bytes(b"name: Lin\n\xff\xfe broken\n")
    [user] = session_files(home, "main", Settings().memory, private=False, today=TODAY)
    assert user.text.startswith("name: Lin\n")
    assert "\ufffd" in user.text


def test_workspace_file_of_50_mb_is_cut_for_the_session(tmp_path: Path) -> None:
    home, root = _workspace(tmp_path)
    line = b"x" * 99 + b"\n"
    with (root / "AGENTS.md").open("wb") as handle:
        for _ in range(50 * 1024 * 1024 // len(line)):
            handle.write(line)
    [agents] = session_files(home, "main", Settings().memory, private=False, today=TODAY)
    assert len(agents.text.encode()) < MAX_SESSION_FILE_BYTES + 200
    assert "truncated" in agents.text.splitlines()[-1]
    assert all(len(x) == 99 for x in agents.text.splitlines()[:-1] if x)


def test_symlink_pointing_outside_the_workspace_is_not_followed(tmp_path: Path) -> None:
    home, root = _workspace(tmp_path)
    secret = tmp_path / "secret.md"
    secret.write_text("outside secret\n", encoding="utf-8")
    (root / "memory" / "2026-03-24.md").symlink_to(secret)
    (root / "AGENTS.md").symlink_to(secret)
    assert session_files(home, "main", Settings().memory, private=True, today=TODAY) == []


def test_symlink_inside_the_workspace_is_followed(tmp_path: Path) -> None:
    home, root = _workspace(tmp_path)
    (root / "rules.md").write_text("be kind\n", encoding="utf-8")
    (root / "AGENTS.md").symlink_to(root / "rules.md")
    [agents] = session_files(home, "main", Settings().memory, private=False, today=TODAY)
    assert agents.text == "be kind\n"


def test_note_appends_to_todays_log_privately(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    old = os.umask(0)
    try:
        first = append_note(
            home, "main", Settings().memory, "met Lin", durable=False, now=datetime(2026, 3, 24, 9, 5)
        )
        second = append_note(
            home, "main", Settings().memory, "two\nlines", durable=False, now=datetime(2026, 3, 24, 9, 7)
        )
    finally:
        os.umask(old)
    assert first.name == "memory/2026-03-24.md" and first.line == 1
    assert second.line == 2
    assert first.path.read_text(encoding="utf-8") == "- 09:05 met Lin\n- 09:07 two\n  lines\n"
    assert stat.S_IMODE(first.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(first.path.parent.stat().st_mode) == 0o700


def test_durable_note_goes_to_memory_md_after_text_without_final_newline(tmp_path: Path) -> None:
    home, root = _workspace(tmp_path)
    (root / "MEMORY.md").write_text("# Memory", encoding="utf-8")
    written = append_note(
        home, "main", Settings().memory, "likes tea", durable=True, now=datetime(2026, 3, 24, 10, 0)
    )
    assert written.name == "MEMORY.md" and written.line == 2
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == "# Memory\n- 10:00 likes tea\n"


def test_note_through_symlink_out_of_workspace_is_refused(tmp_path: Path) -> None:
    home, root = _workspace(tmp_path)
    target = tmp_path / "elsewhere.md"
    target.write_text("", encoding="utf-8")
    (root / "MEMORY.md").symlink_to(target)
    with pytest.raises(Exception, match="outside the workspace"):
        append_note(home, "main", Settings().memory, "x", durable=True, now=datetime(2026, 3, 24))
    assert target.read_text(encoding="utf-8") == ""


def test_empty_note_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="empty"):
        append_note(
            Home(tmp_path), "main", Settings().memory, "  \n", durable=False, now=datetime(2026, 3, 24)
        )
