"""security.encryptWorkspace (issue 52): MEMORY.md and the daily logs sealed through one reader/writer.

In-process: the sealed format's appends, a torn record, a plain file sealed on its first write, the
readers (a session's files, the index, purge's search). Real processes: `security init` converts the
workspace, `memory note` / `memory search` / `memory notes show|edit` work on it, a byte-grep of the
home finds nothing, `security decrypt` gives the Markdown back.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path

import pytest

from openclaw_cli.config.loading import MemorySettings
from openclaw_cli.core.paths import Home
from openclaw_cli.forget.files import scrub_files
from openclaw_cli.memory.workspace.files import append_note, read_bounded, session_files
from openclaw_cli.security import convert, records, unlocked, workspace_file
from openclaw_cli.security.workspace_notes import resolve
from tests.conftest import run_cli

PASS = "workspace passphrase"
NOW = datetime(2026, 3, 24, 9, 30)


@pytest.fixture
def sealing() -> Iterator[None]:
    workspace_file.set_policy(lambda: True)
    yield
    workspace_file.set_policy(None)
    unlocked.forget()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    root = tmp_path / "home"
    convert.init_home(root, PASS, kdf_n=2**10)  # the key stays remembered in this process
    return root


def note(root: Path, text: str, *, durable: bool = False) -> Path:
    return append_note(Home(root), "main", MemorySettings(), text, durable=durable, now=NOW).path


def holds_anywhere(root: Path, marker: bytes) -> list[str]:
    return sorted(
        str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and marker in p.read_bytes()
    )


def test_notes_are_sealed_appended_and_read_back_line_for_line(home: Path, sealing: None) -> None:
    first = append_note(Home(home), "main", MemorySettings(), "WSSECRET one", durable=False, now=NOW)
    second = append_note(Home(home), "main", MemorySettings(), "WSSECRET two\nmore", durable=False, now=NOW)
    assert (first.line, second.line) == (1, 2)
    assert records.is_sealed_file(first.path) and holds_anywhere(home, b"WSSECRET") == []
    assert workspace_file.read(first.path) == b"- 09:30 WSSECRET one\n- 09:30 WSSECRET two\n  more\n"
    data, size = read_bounded(first.path.parent.parent, first.path, 1 << 20)
    assert data == workspace_file.read(first.path) and size == len(data)


def test_a_torn_sealed_record_is_dropped_and_the_next_append_is_whole(home: Path, sealing: None) -> None:
    path = note(home, "kept entry")
    with path.open("ab") as handle:
        handle.write(b"dGhpcyBpcyB0b3Ju")  # a record cut short by a crash: no newline
    assert workspace_file.read(path) == b"- 09:30 kept entry\n"
    note(home, "after the crash")
    assert workspace_file.read(path) == b"- 09:30 kept entry\n- 09:30 after the crash\n"


def test_a_tampered_sealed_note_is_an_error_never_skipped(home: Path, sealing: None) -> None:
    path = note(home, "one")
    note(home, "two")
    data = bytearray(path.read_bytes())
    data[-10] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(records.TamperedRecord):
        workspace_file.read(path)


def test_a_plain_note_is_sealed_on_its_first_write_with_the_setting_on(home: Path) -> None:
    path = note(home, "WSPLAIN written before the setting")  # no policy: plain, as today
    assert b"WSPLAIN" in path.read_bytes()
    workspace_file.set_policy(lambda: True)
    try:
        note(home, "second")
    finally:
        workspace_file.set_policy(None)
    assert holds_anywhere(home, b"WSPLAIN") == []
    assert workspace_file.read(path) == b"- 09:30 WSPLAIN written before the setting\n- 09:30 second\n"
    note(home, "third, with the setting off")  # a sealed file stays sealed
    assert records.is_sealed_file(path) and workspace_file.read(path).endswith(
        b"third, with the setting off\n"
    )
    unlocked.forget()


def test_a_plain_home_keeps_plain_notes_whatever_the_setting(tmp_path: Path, sealing: None) -> None:
    path = note(tmp_path / "plain", "WSPLAINHOME")
    assert path.read_bytes() == b"- 09:30 WSPLAINHOME\n"


def test_a_private_session_and_purge_read_sealed_notes(home: Path, sealing: None) -> None:
    note(home, "WSDURABLE the owner's secret", durable=True)
    note(home, "WSDAILY what happened")
    files = session_files(Home(home), "main", MemorySettings(), private=True, today=date(2026, 3, 24))
    texts = {f.name: f.text for f in files}
    assert "WSDURABLE" in texts["MEMORY.md"] and "WSDAILY" in texts["memory/2026-03-24.md"]
    cleaned, left = scrub_files(Home(home), ["WSDAILY what happened"])
    assert cleaned == [] and left == [str(home / "agents/main/workspace/memory/2026-03-24.md")]


def test_init_and_decrypt_convert_the_workspace_only_when_asked(tmp_path: Path) -> None:
    root = tmp_path / "home"
    path = note(root, "WSCONVERT note")
    done = convert.init_home(root, PASS, kdf_n=2**10)  # the setting off: the Markdown stays plain
    assert done.workspace == [] and b"WSCONVERT" in path.read_bytes()
    done = convert.init_home(root, PASS, workspaces=[])  # on: a rerun seals it
    assert done.workspace == ["agents/main/workspace/memory/2026-03-24.md"]
    assert holds_anywhere(root, b"WSCONVERT") == []
    done = convert.decrypt_home(root, PASS)
    assert done.workspace == ["agents/main/workspace/memory/2026-03-24.md"]
    assert path.read_bytes() == b"- 09:30 WSCONVERT note\n"
    unlocked.forget()


@pytest.mark.parametrize("bad", ["../../etc/passwd", "notes.txt", "2026-13-40", "memory/../x.md", ""])
def test_notes_names_are_only_the_workspace_files(tmp_path: Path, bad: str) -> None:
    from openclaw_cli.core.errors import InvalidInput

    with pytest.raises(InvalidInput):
        resolve(tmp_path, bad, date(2026, 3, 24))


# --- real processes ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sealed_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ws") / "home"
    assert run_cli(root, "memory", "note", "WSCLI morning tea notes").returncode == 0
    assert run_cli(root, "memory", "note", "--durable", "WSCLI durable preference").returncode == 0
    (root / "openclaw.json").write_text('{"security": {"encryptWorkspace": true}}\n')
    result = run_cli(root, "security", "init", "--yes", "--json", env={"OPENCLAW_NEW_PASSPHRASE": PASS})
    assert result.returncode == 0, result.stderr
    assert len(result.json()["workspace"]) == 2
    return root


@pytest.fixture
def cli_home(sealed_home: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "home"
    shutil.copytree(sealed_home, copy)
    return copy


def test_cli_workspace_is_sealed_and_every_reader_and_writer_works(cli_home: Path) -> None:
    env = {"OPENCLAW_PASSPHRASE": PASS}
    assert holds_anywhere(cli_home, b"WSCLI") == []
    assert run_cli(cli_home, "memory", "note", "WSCLI evening walk", env=env).returncode == 0
    found = run_cli(cli_home, "memory", "search", "evening walk", "--json", env=env)
    assert found.returncode == 0 and "WSCLI evening walk" in found.stdout  # the index read the sealed log
    shown = run_cli(cli_home, "memory", "notes", "show", "today", "--json", env=env).json()
    assert shown["sealed"] and "WSCLI morning tea" in shown["text"] and "WSCLI evening walk" in shown["text"]
    assert holds_anywhere(cli_home, b"WSCLI") == []  # the index database is encrypted too
    notes = run_cli(cli_home, "security", "status", "--json").json()["files"]["workspace notes"]
    assert notes["encrypted"] >= 2 and notes["plain"] == 0


def test_cli_notes_edit_seals_the_edit_back_and_a_failing_editor_writes_nothing(cli_home: Path) -> None:
    env = {"OPENCLAW_PASSPHRASE": PASS, "EDITOR": "sed -i s/preference/WSEDITED/", "VISUAL": ""}
    edited = run_cli(cli_home, "memory", "notes", "edit", env=env)
    assert edited.returncode == 0 and "saved" in edited.stdout, edited.stderr
    shown = run_cli(cli_home, "memory", "notes", "show", env={"OPENCLAW_PASSPHRASE": PASS})
    assert "WSCLI durable WSEDITED" in shown.stdout
    memory_md = cli_home / "agents/main/workspace/MEMORY.md"
    assert records.is_sealed_file(memory_md) and holds_anywhere(cli_home, b"WSEDITED") == []
    before = memory_md.read_bytes()
    failed = run_cli(cli_home, "memory", "notes", "edit", env={**env, "EDITOR": "false"})
    assert failed.returncode == 1 and "editor exited" in failed.stderr and memory_md.read_bytes() == before
    assert list((cli_home / "run").glob("note-*")) == []  # the temporary copy is gone


def test_cli_notes_without_a_passphrase_or_with_a_bad_name_are_one_line(cli_home: Path) -> None:
    locked = run_cli(cli_home, "memory", "notes", "show", input="")
    assert locked.returncode == 1 and "no passphrase" in locked.stderr and locked.stderr.count("\n") == 1
    bad = run_cli(cli_home, "memory", "notes", "show", "../secrets", env={"OPENCLAW_PASSPHRASE": PASS})
    assert bad.returncode != 0 and "no workspace note file" in bad.stderr and bad.stderr.count("\n") == 1


def test_cli_decrypt_gives_the_markdown_back(cli_home: Path) -> None:
    result = run_cli(cli_home, "security", "decrypt", "--yes", "--json", env={"OPENCLAW_PASSPHRASE": PASS})
    assert result.returncode == 0 and len(result.json()["workspace"]) == 2
    assert b"WSCLI durable preference" in (cli_home / "agents/main/workspace/MEMORY.md").read_bytes()
