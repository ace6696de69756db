"""Encryption at rest (issue 52): keys, sealed records, init/rekey/decrypt interrupted and rerun, errors.

One plain template home is built with the real CLI once per module (a memory, two sessions, a backup,
the transcript index) and copied for each test; conversions run in-process where a test stops them at a
chosen point, and as real processes where the CLI's own behaviour (one-line errors, exit codes) is asked.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from openclaw_cli.core.paths import Home
from openclaw_cli.security import convert, keyfile, records, unlocked
from openclaw_cli.security.files import read_lines
from openclaw_cli.sessions.jsonl import read_messages
from tests.conftest import ROOT, base_env, run_cli

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

PASS = "correct horse battery staple"
MARKERS = (b"MARKERMEM", b"MARKERSESS", b"MARKERTWO", b"MARKERMEDIA")
FAST_KDF = 2**14  # in-process conversions: the stored parameters are what unwrap uses, so any n works


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("template") / "home"
    assert run_cli(home, "memory", "add", "I drink MARKERMEM coffee every morning").returncode == 0
    assert run_cli(home, "session", "append", "agent:main:main", "hello MARKERSESS one").returncode == 0
    assert run_cli(home, "session", "append", "agent:main:main", "MARKERSESS two").returncode == 0
    assert run_cli(home, "session", "append", "agent:main:direct:bo", "MARKERTWO from bo").returncode == 0
    assert run_cli(home, "memory", "backup").returncode == 0
    assert run_cli(home, "session", "search", "MARKERSESS").returncode == 0  # builds the transcript index
    media = home / "media"  # what a channel saved (channels/media.py): a file and its owner's index line
    media.mkdir(mode=0o700)
    (media / "0a1b.txt").write_bytes(b"a photo caption MARKERMEDIA")
    (media / "index.jsonl").write_bytes(b'{"file": "0a1b.txt", "person": "MARKERMEDIA-owner", "at": 1}\n')
    return home


@pytest.fixture
def home(template: Path, tmp_path: Path) -> Iterator[Path]:
    copy = tmp_path / "home"
    shutil.copytree(template, copy)
    yield copy
    unlocked.forget()


def files_with_markers(root: Path) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and any(marker in path.read_bytes() for marker in MARKERS):
            found.append(str(path.relative_to(root)))
    return sorted(found)


def contents(root: Path) -> dict[str, object]:
    """What the home holds, read through the same codecs the commands use: compared before and after."""
    from openclaw_cli.memory.store.sqlite.connection import open_db

    held: dict[str, object] = {}
    for session in sorted((root / "agents" / "main" / "sessions").glob("s-*/messages.jsonl")):
        held[session.parent.name] = [m["content"] for m in read_messages(session).messages]
    conn = open_db(Home(root).memory_db("main"), create=False, readonly=True)
    held["memories"] = sorted(str(r[0]) for r in conn.execute("SELECT l0 FROM records"))
    conn.close()
    from openclaw_cli.channels.media import _index
    from openclaw_cli.security.files import read_document

    held["media"] = read_document(root / "media" / "0a1b.txt")
    held["mediaIndex"] = _index(root / "media")
    return held


# --- keys --------------------------------------------------------------------------------------------


def test_wrapped_key_opens_with_its_passphrase_only(tmp_path: Path) -> None:
    key = keyfile.new_data_key()
    convert.write_keyfile(tmp_path, keyfile.wrap(key, PASS, n=FAST_KDF))
    assert os.stat(keyfile.key_path(tmp_path)).st_mode & 0o777 == 0o600
    stored = keyfile.read_keyfile(tmp_path)
    assert keyfile.unwrap(stored, PASS) == key
    assert PASS.encode() not in keyfile.key_path(tmp_path).read_bytes()
    with pytest.raises(keyfile.WrongPassphrase):
        keyfile.unwrap(stored, PASS + "!")


# --- sealed records ----------------------------------------------------------------------------------


def sealed_file(tmp_path: Path, lines: list[bytes]) -> tuple[Path, bytes]:
    key = keyfile.new_data_key()
    path = tmp_path / "messages.jsonl"
    path.write_bytes(records.seal_lines(b"".join(line + b"\n" for line in lines), key))
    return path, key


def test_sealed_lines_round_trip_and_hold_no_plaintext(tmp_path: Path) -> None:
    path, key = sealed_file(tmp_path, [b'{"idx":0,"role":"user","content":"MARKERSESS"}', b'{"idx":1}'])
    data = path.read_bytes()
    assert records.is_sealed(data) and b"MARKERSESS" not in data
    assert (
        records.unseal_lines(data, key, path)
        == b'{"idx":0,"role":"user","content":"MARKERSESS"}\n{"idx":1}\n'
    )


def test_a_torn_last_record_is_dropped_like_a_torn_plain_line(tmp_path: Path) -> None:
    path, key = sealed_file(
        tmp_path, [b'{"idx":0,"role":"user","content":"a"}', b'{"idx":1,"role":"user","content":"b"}']
    )
    path.write_bytes(path.read_bytes()[:-20])  # a crash mid-append: the last record without its newline
    unlocked.remember(tmp_path, key)
    convert.write_keyfile(tmp_path, keyfile.wrap(key, PASS, n=FAST_KDF))
    try:
        result = read_messages(path)
    finally:
        unlocked.forget()
    assert [m["content"] for m in result.messages] == ["a"]
    assert len(result.problems) == 1 and result.problems[0].torn


def test_a_tampered_record_is_an_error_never_skipped(tmp_path: Path) -> None:
    path, key = sealed_file(
        tmp_path, [b'{"idx":0,"role":"user","content":"a"}', b'{"idx":1,"role":"user","content":"b"}']
    )
    data = bytearray(path.read_bytes())
    second = data.index(b"\n", data.index(b"\n") + 1) + 5  # inside the first record's base64
    data[second] = ord("A") if data[second] != ord("A") else ord("B")
    path.write_bytes(bytes(data))
    with pytest.raises(records.TamperedRecord, match="changed or damaged"):
        records.unseal_lines(bytes(data), key, path)


def test_a_record_moved_in_from_another_file_fails_its_tag(tmp_path: Path) -> None:
    path, key = sealed_file(tmp_path, [b'{"idx":0}'])
    other = records.Sealer.new(key).seal(b'{"idx":1,"content":"from elsewhere"}')
    with pytest.raises(records.TamperedRecord):
        records.unseal_lines(path.read_bytes() + other, key, path)


def test_a_record_cut_short_inside_the_file_is_an_error(tmp_path: Path) -> None:
    path, key = sealed_file(tmp_path, [b'{"idx":0,"role":"user","content":"aaaa"}', b'{"idx":1}'])
    lines = path.read_bytes().split(b"\n")
    lines[1] = lines[1][:-8]  # a truncated record that still ends in a newline
    with pytest.raises(records.TamperedRecord):
        records.unseal_lines(b"\n".join(lines), key, path)


# --- init, decrypt, rekey ----------------------------------------------------------------------------


class Stop(Exception):
    """Stands for a kill: raised after the n-th converted file; nothing is cleaned up on the way out."""


def stop_after(count: int):  # type: ignore[no-untyped-def]
    seen: list[Path] = []

    def step(path: Path) -> None:
        seen.append(path)
        if len(seen) == count:
            raise Stop(str(path))

    return step


def test_init_encrypts_everything_and_loses_nothing(home: Path) -> None:
    before = contents(home)
    assert files_with_markers(home)  # the plain home holds them, WAL and backup included
    done = convert.init_home(home, PASS, kdf_n=FAST_KDF)
    assert len(done.databases) >= 3 and done.transcripts and done.documents
    assert files_with_markers(home) == []
    assert contents(home) == before


@pytest.mark.parametrize("stop_at", [1, 2, 4, 6, 8])
def test_init_interrupted_at_a_point_then_rerun_loses_nothing(home: Path, stop_at: int) -> None:
    before = contents(home)
    with pytest.raises(Stop):
        convert.init_home(home, PASS, kdf_n=FAST_KDF, step=stop_after(stop_at))
    assert contents(home) == before  # half-way, every file reads whole, each in its own format
    assert convert.last_event(home)["event"] == "done"  # type: ignore[index]
    unlocked.forget()  # a new process: the key comes from the passphrase again
    convert.init_home(home, PASS)
    assert files_with_markers(home) == []
    assert contents(home) == before
    assert convert.last_event(home)["event"] == "complete"  # type: ignore[index]


def test_decrypt_interrupted_then_rerun_gives_the_plain_home_back(home: Path) -> None:
    before = contents(home)
    convert.init_home(home, PASS, kdf_n=FAST_KDF)
    with pytest.raises(Stop):
        convert.decrypt_home(home, PASS, step=stop_after(3))
    assert keyfile.is_encrypted(home) and contents(home) == before
    convert.decrypt_home(home, PASS)
    assert not keyfile.is_encrypted(home)
    unlocked.forget()
    assert contents(home) == before
    assert files_with_markers(home)


def test_rekey_interrupted_at_the_replace_leaves_the_old_passphrase_working(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    convert.init_home(home, PASS, kdf_n=FAST_KDF)
    real_replace = os.replace

    def killed(src: str, dst: str) -> None:
        raise Stop("killed before the rename")

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(Stop):
        convert.rekey_home(home, PASS, "new one")
    monkeypatch.setattr(os, "replace", real_replace)
    stored = keyfile.read_keyfile(home)
    key = keyfile.unwrap(stored, PASS)  # the old one opens; the new one was never in place
    with pytest.raises(keyfile.WrongPassphrase):
        keyfile.unwrap(stored, "new one")
    convert.rekey_home(home, PASS, "new one")  # rerun
    assert keyfile.unwrap(keyfile.read_keyfile(home), "new one") == key
    with pytest.raises(keyfile.WrongPassphrase):
        keyfile.unwrap(keyfile.read_keyfile(home), PASS)


# --- the CLI, as real processes -----------------------------------------------------------------------


def encrypted(home: Path, *, by_cli: bool = False) -> Path:
    """`home` encrypted with PASS: by the real command, or in-process with a cheap scrypt (each later CLI
    process unwraps with the stored parameters, so it then pays ~20 ms rather than ~0.3-1 s)."""
    if by_cli:
        result = run_cli(home, "security", "init", "--yes", "--json", env={"OPENCLAW_NEW_PASSPHRASE": PASS})
        assert result.returncode == 0, result.stderr
    else:
        convert.init_home(home, PASS, kdf_n=FAST_KDF)
        unlocked.forget()
    return home


def one_line_error(result: object, *words: str) -> None:
    stderr = result.stderr.strip()  # type: ignore[attr-defined]
    assert result.returncode == 1, stderr  # type: ignore[attr-defined]
    assert "\n" not in stderr and "Traceback" not in stderr and stderr.startswith("openclaw: error:")
    for word in words:
        assert word in stderr


def test_cli_init_then_every_read_and_write_works_and_status_says_so(home: Path) -> None:
    encrypted(home, by_cli=True)
    env = {"OPENCLAW_PASSPHRASE": PASS}
    assert run_cli(home, "session", "append", "agent:main:main", "MARKERSESS three", env=env).returncode == 0
    assert "MARKERSESS three" in run_cli(home, "session", "show", "agent:main:main", env=env).stdout
    found = run_cli(home, "memory", "search", "coffee", "--json", env=env)
    assert found.returncode == 0 and "MARKERMEM" in found.stdout
    assert run_cli(home, "memory", "backup", env=env).returncode == 0
    assert files_with_markers(home) == []
    status = run_cli(home, "security", "status", "--json")  # no passphrase needed
    report = status.json()
    assert (
        report["encrypted"] and report["kdf"]["name"] == "scrypt" and "chacha20" in report["databaseCipher"]
    )
    assert all(counts["plain"] == 0 for counts in report["files"].values())


def test_cli_wrong_passphrase_is_one_line_and_changes_nothing(home: Path) -> None:
    encrypted(home)
    before = stored_data(home)
    result = run_cli(home, "session", "append", "agent:main:main", "x", env={"OPENCLAW_PASSPHRASE": "nope"})
    one_line_error(result, "wrong passphrase")
    assert stored_data(home) == before


def stored_data(home: Path) -> dict[Path, bytes]:
    """Every file but the settings cache (a derived copy of the configuration, rewritten at will)."""
    return {p: p.read_bytes() for p in (home / "agents").rglob("*") if p.is_file()}


def test_cli_missing_passphrase_without_a_terminal_is_one_line(home: Path) -> None:
    encrypted(home)
    one_line_error(
        run_cli(home, "memory", "search", "coffee", input=""), "no passphrase", "OPENCLAW_PASSPHRASE"
    )


def test_cli_tampered_transcript_record_is_one_line(home: Path) -> None:
    encrypted(home)
    for path in (home / "agents" / "main" / "sessions").glob("s-*/messages.jsonl"):
        data = bytearray(path.read_bytes())
        at = data.index(b"\n") + 10  # inside the first record
        data[at] = ord("A") if data[at] != ord("A") else ord("B")
        path.write_bytes(bytes(data))
    result = run_cli(home, "session", "show", "agent:main:main", env={"OPENCLAW_PASSPHRASE": PASS})
    one_line_error(result, "changed or damaged")


def test_cli_torn_sealed_record_is_dropped_and_reported(home: Path) -> None:
    encrypted(home)
    env = {"OPENCLAW_PASSPHRASE": PASS}
    for path in (home / "agents" / "main" / "sessions").glob("s-*/messages.jsonl"):
        with path.open("ab") as handle:
            handle.write(b"c2VhbGVkIGJ1dCB0b3Ju")  # a record cut by a crash: no newline
    result = run_cli(home, "session", "show", "agent:main:main", env=env)
    assert result.returncode == 0 and "Traceback" not in result.stderr
    assert "MARKERSESS two" in result.stdout and "torn last line" in result.stderr


def test_cli_tampered_database_page_is_one_line(home: Path) -> None:
    encrypted(home)
    db = Home(home).memory_db("main")
    data = bytearray(db.read_bytes())
    for page in range(1, len(data) // 4096):  # every page but the first (which holds the salt)
        data[page * 4096 + 200] ^= 0xFF
    db.write_bytes(bytes(data))
    result = run_cli(home, "memory", "search", "coffee", env={"OPENCLAW_PASSPHRASE": PASS})
    one_line_error(result, "damaged")


def test_cli_init_killed_midway_then_rerun_finishes(home: Path) -> None:
    """A real SIGKILL: init is held at the backup (the test holds its write lock) after it has converted
    the databases before it, killed there, and run again."""
    before = contents(home)
    backup = next((home / "agents" / "main" / "memory" / "backups").glob("*.sqlite"))
    holder = apsw.Connection(str(backup))
    holder.execute("BEGIN IMMEDIATE")
    env = base_env(home)
    env["OPENCLAW_NEW_PASSPHRASE"] = PASS
    proc = subprocess.Popen(
        [sys.executable, "-m", "openclaw_cli", "security", "init", "--yes"],
        env=env,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    journal = convert.journal_path(home)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and b'"done"' not in (
        journal.read_bytes() if journal.exists() else b""
    ):
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    holder.execute("ROLLBACK")
    holder.close()
    assert keyfile.is_encrypted(home)
    unlocked.remember(home, keyfile.unwrap(keyfile.read_keyfile(home), PASS))
    assert contents(home) == before  # killed half-way: everything still reads
    unlocked.forget()
    status = run_cli(home, "security", "status", "--json").json()
    assert status["interrupted"]
    rerun = run_cli(home, "security", "init", "--yes", env={"OPENCLAW_PASSPHRASE": PASS})
    assert rerun.returncode == 0, rerun.stderr
    assert files_with_markers(home) == []
    unlocked.remember(home, keyfile.unwrap(keyfile.read_keyfile(home), PASS))
    assert contents(home) == before


def test_cli_rekey_then_decrypt(home: Path) -> None:
    encrypted(home)
    rekey = run_cli(
        home, "security", "rekey", env={"OPENCLAW_PASSPHRASE": PASS, "OPENCLAW_NEW_PASSPHRASE": "n2"}
    )
    assert rekey.returncode == 0, rekey.stderr
    one_line_error(
        run_cli(home, "security", "decrypt", "--yes", env={"OPENCLAW_PASSPHRASE": PASS}), "wrong passphrase"
    )
    done = run_cli(home, "security", "decrypt", "--yes", env={"OPENCLAW_PASSPHRASE": "n2"})
    assert done.returncode == 0, done.stderr
    assert not keyfile.is_encrypted(home)
    assert "MARKERSESS" in run_cli(home, "session", "show", "agent:main:main").stdout


def test_sealed_reads_are_plain_jsonl_line_for_line(home: Path) -> None:
    path = next((home / "agents" / "main" / "sessions").glob("s-*/messages.jsonl"))
    plain = path.read_bytes()
    convert.init_home(home, PASS, kdf_n=FAST_KDF)
    assert read_lines(path).lstrip(b"\n") == plain


def test_encrypted_export_imports_with_its_passphrase_only(home: Path, tmp_path: Path) -> None:
    export = tmp_path / "memories.jsonl"
    env = {"OPENCLAW_EXPORT_PASSPHRASE": "export pass"}
    made = run_cli(home, "memory", "export", "--encrypt", "--format", "jsonl", "-o", str(export), env=env)
    assert made.returncode == 0, made.stderr
    assert b"MARKERMEM" not in export.read_bytes() and export.read_bytes().startswith(
        b"OPENCLAW-SEALED-EXPORT "
    )
    other = tmp_path / "other"
    wrong = run_cli(other, "memory", "import", str(export), env={"OPENCLAW_EXPORT_PASSPHRASE": "nope"})
    one_line_error(wrong, "wrong passphrase")
    imported = run_cli(other, "memory", "import", str(export), "--json", env=env)
    assert imported.returncode == 0, imported.stderr
    assert "MARKERMEM" in run_cli(other, "memory", "search", "coffee").stdout


def test_purge_with_sessions_and_upkeep_commands_work_on_an_encrypted_home(tmp_path: Path) -> None:
    """The person's memories, own session and lines in a shared one go (redacted through the sealed
    codec), another person's stay; sweep, backup, recover, restore, doctor and index --check all run."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    links = {"alice": ["telegram:alice_tg"], "bob": ["telegram:bob_tg"]}
    (home / "openclaw.json").write_text(json.dumps({"session": {"identityLinks": links}}), encoding="utf-8")
    (home / "openclaw.json").chmod(0o600)
    shared_key = "agent:main:telegram:default:group:g1"
    for args in (
        ("memory", "add", "alice code zanzibarquokka", "-u", "alice"),
        (
            "session",
            "append",
            "agent:main:telegram:default:direct:alice_tg",
            "--role",
            "user",
            "I am zanzibarquokka",
        ),
        (
            "session",
            "append",
            shared_key,
            "--role",
            "user",
            "--sender",
            "alice_tg",
            "zanzibarquokka in the group",
        ),
        ("session", "append", shared_key, "--role", "user", "--sender", "bob_tg", "bob keeps this line"),
    ):
        assert run_cli(home, *args).returncode == 0, args
    encrypted(home)
    env = {"OPENCLAW_PASSPHRASE": PASS}
    purged = run_cli(home, "memory", "purge", "--user", "alice", "--sessions", "--yes", env=env)
    assert purged.returncode == 0, purged.stderr
    shown = run_cli(home, "session", "show", shared_key, env=env)
    assert "bob keeps this line" in shown.stdout and "zanzibarquokka" not in shown.stdout
    assert (
        "zanzibarquokka" not in run_cli(home, "session", "search", "zanzibarquokka", "--all", env=env).stdout
    )
    backup = run_cli(home, "memory", "backup", env=env)
    assert backup.returncode == 0, backup.stderr
    copy = backup.stdout.strip().rsplit(" ", 1)[-1]
    assert b"zanzibarquokka" not in Path(copy).read_bytes()
    outside = tmp_path / "elsewhere.sqlite"  # a backup written outside the home: the same key
    assert run_cli(home, "memory", "backup", "-o", str(outside), env=env).returncode == 0
    assert not outside.read_bytes().startswith(b"SQLite format 3") and b"bob" not in outside.read_bytes()
    for args in (
        ("memory", "restore", str(outside), "--yes"),
        ("session", "sweep"),
        ("memory", "recover", "--yes"),
        ("memory", "restore", copy, "--yes"),
        ("memory", "index", "--check"),
        ("doctor",),
    ):
        done = run_cli(home, *args, env=env)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    assert run_cli(home, "security", "status", "--json").json()["files"]["databases"]["plain"] == 0


def test_media_saved_in_an_encrypted_home_is_sealed_whole(home: Path) -> None:
    import asyncio

    from openclaw_cli.channels.media import _index, record_owner, save_stream
    from openclaw_cli.security.files import read_document

    convert.init_home(home, PASS, kdf_n=FAST_KDF)

    async def chunks():  # type: ignore[no-untyped-def]
        yield b"MARKERMEDIA first half, "
        yield b"second half"

    saved = asyncio.run(save_stream(home / "media", chunks(), 4096))
    record_owner(home / "media", [saved.name], "MARKERMEDIA-person")
    assert saved.size == len(b"MARKERMEDIA first half, second half") and saved.mime == "text/plain"
    assert files_with_markers(home) == []
    assert read_document(home / "media" / saved.name) == b"MARKERMEDIA first half, second half"
    assert {row["file"]: row["person"] for row in _index(home / "media")}[saved.name] == "MARKERMEDIA-person"


def test_channel_journal_and_gateway_inbox_are_sealed_and_read_back(home: Path) -> None:
    from openclaw_cli.channels.journal import ChannelJournal, account_dir
    from openclaw_cli.gateway.inbox import Inbox

    convert.init_home(home, PASS, kdf_n=FAST_KDF)
    journal = ChannelJournal(account_dir(home, "telegram", "default"))
    journal.accept("u1", {"text": "MARKERMEDIA said on telegram", "chat": 5})
    journal.reply("u1", ["part one"])
    journal.close()
    inbox = Inbox(home / "gateway" / "inbox.jsonl")
    pending = inbox.accept("main", "agent:main:main", "MARKERMEDIA typed", None, "2026-01-01T00:00:00Z")
    inbox.close()
    assert files_with_markers(home) == []
    again = ChannelJournal(account_dir(home, "telegram", "default"))
    assert [e.record["text"] for e in again.pending()] == ["MARKERMEDIA said on telegram"]
    assert again.pending()[0].parts == ["part one"]
    assert [p.text for p in Inbox(home / "gateway" / "inbox.jsonl").pending()] == [pending.text]


def test_passphrase_sources_are_tried_in_the_configured_order(tmp_path: Path) -> None:
    from openclaw_cli.security.passphrase import Sources, obtain

    asked: list[str] = []

    def prompt(text: str) -> str:
        asked.append(text)
        return "typed"

    def stored(service: str, name: str) -> str | None:
        return f"kept for {service}:{Path(name).name}"

    def broken(service: str, name: str) -> str | None:
        raise RuntimeError("the keyring is locked")

    everything = ("env", "prompt", "keyring")
    assert obtain(tmp_path, Sources(everything, "from env", prompt, stored)) == "from env"
    assert obtain(tmp_path, Sources(everything, None, prompt, stored)) == "typed" and asked
    assert obtain(tmp_path, Sources(("keyring", "prompt"), "from env", prompt, stored)).startswith(
        "kept for openclaw"
    )
    assert obtain(tmp_path, Sources(everything, None, None, stored)).startswith("kept for")
    with pytest.raises(keyfile.PassphraseMissing, match="tried: env, prompt, keyring"):
        obtain(tmp_path, Sources(everything, None, None, broken))
    with pytest.raises(keyfile.PassphraseMissing):
        obtain(tmp_path, Sources(("keyring",), "from env", prompt, None))
