"""Archived transcripts compressed (issue 53, sessions/archive.py): archiving compresses, every reader
(show, search and its index check, export and import, purge, doctor) reads the archive as it read the plain
file, a message for an archived session makes it plain again, a crash at any step leaves the messages
readable exactly once, a damaged archive is a one-line error, and encrypted homes keep archives sealed."""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.config.loading import Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.security import convert, records, unlocked
from openclaw_cli.sessions import archive, compress
from openclaw_cli.sessions.lifecycle import ResetPolicy, SessionManager
from openclaw_cli.sessions.store import SessionStore
from openclaw_cli.sessions.upkeep.check import check_sessions
from openclaw_cli.sessions.upkeep.portability import export_lines, import_session, parse_export
from tests.conftest import run_cli

PASS = "correct horse battery staple"
FAST_KDF = 2**14
MAIN = "agent:main:main"
BOB = "agent:main:telegram:default:direct:bob"
MARKER = "quokkamarmalade"  # alice's words: purged
T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)


def manager(home: Path, **policy: Any) -> SessionManager:
    return SessionManager(SessionStore(Home(home), "main"), ResetPolicy(**policy))


def fill(mgr: SessionManager, key: str = MAIN, lines: int = 12) -> str:
    """A bilingual session with a tool call and alice's and bob's words; its id."""
    sid = mgr.get_or_create(key, T0)[0]["sessionId"]
    store = mgr.store
    for n in range(lines // 4):
        store.append(sid, "user", f"{MARKER} alice asks {n}: 明天上海天气怎么样？", T0, user_id="alice")
        call = [{"id": f"c{n}", "type": "function", "function": {"name": "web_fetch", "arguments": "{}"}}]
        store.append(sid, "assistant", "", T0, tool_calls=call)
        store.append(sid, "tool", json.dumps({"result": f"晴 {n}"}), T0, tool_call_id=f"c{n}")
        store.append(sid, "user", f"bob says hello {n}", T0, user_id="bob")
    return str(sid)


def contents(store: SessionStore, sid: str) -> list[tuple[int, str]]:
    return [(m["idx"], m["content"]) for m in store.read_messages(sid).messages]


def gz_of(store: SessionStore, sid: str) -> Path:
    return store.session_dir(sid) / "messages.jsonl.gz"


def plain_of(store: SessionStore, sid: str) -> Path:
    return store.session_dir(sid) / "messages.jsonl"


def check_problems(store: SessionStore) -> list[str]:
    """`session check`'s findings (lock files this process left are not the point here)."""
    findings = check_sessions(store.home, "main", False)
    return [f.check for f in findings if f.severity != "ok" and f.check != "sessions.stale-lock"]


def holding(home: Path, needle: bytes) -> list[str]:
    """Files under `home` whose bytes hold `needle`, or whose decompressed bytes do (a .gz)."""
    found = []
    for path in home.rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        if needle in data or (path.name.endswith(".gz") and needle in archive.read_archive(path)):
            found.append(str(path.relative_to(home)))
    return sorted(found)


@pytest.fixture
def archived(home: Path) -> Iterator[tuple[SessionManager, str, list[tuple[int, str]]]]:
    mgr = manager(home)
    sid = fill(mgr)
    before = contents(mgr.store, sid)
    mgr.archive(sid, T0)
    yield mgr, sid, before
    mgr.store.close()


def test_archiving_compresses_and_every_in_process_reader_sees_the_same(archived: Any) -> None:
    mgr, sid, before = archived
    store = mgr.store
    assert gz_of(store, sid).is_file() and not plain_of(store, sid).exists()
    assert gzip.decompress(gz_of(store, sid).read_bytes()).count(b"\n") == len(before)  # zcat reads it
    assert MARKER.encode() not in gz_of(store, sid).read_bytes()
    assert contents(store, sid) == before
    meta = store.read_meta(sid)
    assert (meta["messageCount"], meta["nextIdx"], meta["status"]) == (len(before), len(before), "archived")
    lines, problems = export_lines(store, sid)
    exported = list(lines)
    assert not problems and [m["content"] for m in exported[1:]] == [c for _, c in before]
    other = SessionStore(Home(store.home.root.parent / "other"), "main")
    raw = [json.dumps(line, ensure_ascii=False).encode() for line in exported]
    imported = import_session(other, parse_export(raw), T0)
    assert contents(other, imported.session_id) == before
    other.close()
    assert check_problems(store) == []


def test_a_message_for_a_compressed_session_makes_it_plain_once_and_idx_goes_on(archived: Any) -> None:
    mgr, sid, before = archived
    store = mgr.store
    added = store.append(sid, "user", "one more", T0, user_id="bob")
    assert added["idx"] == len(before)
    assert plain_of(store, sid).is_file() and not gz_of(store, sid).exists()
    assert contents(store, sid) == [*before, (len(before), "one more")]
    assert store.read_meta(sid)["messageCount"] == len(before) + 1
    mgr.archive(sid, T0)  # archived again: compressed again
    assert gz_of(store, sid).is_file() and not plain_of(store, sid).exists()
    assert store.read_meta(sid)["messageCount"] == len(before) + 1


def test_a_writer_open_in_another_process_notices_the_compression(home: Path) -> None:
    """A writer that held the plain file (the gateway) must not append to the unlinked inode."""
    first = manager(home)
    sid = fill(first)
    first.store.append(sid, "user", "from the gateway", T0, user_id="bob")  # its writer stays open
    second = manager(home)
    second.archive(sid, T0)  # the sweep's process
    assert gz_of(second.store, sid).is_file()
    late = first.store.append(sid, "user", "late reply", T0, user_id="bob")
    assert contents(second.store, sid)[-1] == (late["idx"], "late reply")
    assert len(contents(second.store, sid)) == late["idx"] + 1
    first.store.close()
    second.store.close()


def test_crash_after_the_archive_is_in_place_leaves_both_read_once(
    archived: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    mgr, sid, before = archived
    store = mgr.store
    store.append(sid, "user", "back again", T0, user_id="bob")  # plain again
    expected = contents(store, sid)
    store.set_status(sid, "archived", T0)
    real_unlink = Path.unlink

    def crash(path: Path, missing_ok: bool = False) -> None:
        if path.name == "messages.jsonl":
            raise KeyboardInterrupt("killed between the archive's rename and the plain file's removal")
        real_unlink(path, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", crash)
    with pytest.raises(KeyboardInterrupt):
        compress.compress_session(store, sid)
    monkeypatch.undo()
    assert plain_of(store, sid).is_file() and gz_of(store, sid).is_file()
    assert contents(store, sid) == expected  # the plain one is read: never twice
    assert store.read_meta(sid)["messageCount"] == len(expected)
    assert check_problems(store) == ["sessions.leftover-archive"]
    assert compress.compress_archived(store).sessions == 1  # the next sweep finishes it
    assert not plain_of(store, sid).exists() and contents(store, sid) == expected


def test_crash_while_restoring_leaves_both_read_once_and_the_next_append_goes_on(
    archived: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    mgr, sid, before = archived
    store = mgr.store
    real_unlink = Path.unlink

    def crash(path: Path, missing_ok: bool = False) -> None:
        if path.name == "messages.jsonl.gz":
            raise KeyboardInterrupt("killed between the plain file's rename and the archive's removal")
        real_unlink(path, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", crash)
    with pytest.raises(KeyboardInterrupt):
        store.append(sid, "user", "never written", T0)
    monkeypatch.undo()
    store.release(sid)  # the killed process's writer is gone with it
    assert plain_of(store, sid).is_file() and gz_of(store, sid).is_file()
    assert contents(store, sid) == before and store.read_meta(sid)["messageCount"] == len(before)
    added = store.append(sid, "user", "written", T0)
    assert added["idx"] == len(before) and not gz_of(store, sid).exists()
    assert contents(store, sid) == [*before, (len(before), "written")]


def test_reader_prefers_the_plain_file_when_both_hold_different_lines(archived: Any) -> None:
    """Both files after a restore cut short, then an append to the plain one: the archive is stale."""
    mgr, sid, before = archived
    store = mgr.store
    plain = archive.read_archive(gz_of(store, sid))
    extra = json.dumps({"idx": len(before), "role": "user", "content": "newer", "ts": "2026-03-02T10:00:00Z"})
    plain_of(store, sid).write_bytes(plain + extra.encode() + b"\n")
    assert contents(store, sid) == [*before, (len(before), "newer")]
    store.append(sid, "user", "newest", T0)  # the writer removes the leftover under the lock
    assert not gz_of(store, sid).exists()
    assert [c for _, c in contents(store, sid)][-2:] == ["newer", "newest"]


def test_crash_while_writing_the_archive_leaves_the_plain_transcript(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mgr = manager(home, compress=False)
    sid = fill(mgr)
    before = contents(mgr.store, sid)
    mgr.archive(sid, T0)
    assert plain_of(mgr.store, sid).is_file()  # session.archive.compress off: left plain

    def torn(path: Path, data: bytes, *, durable: bool = True) -> None:
        (path.parent / f".{path.name}.x.tmp").write_bytes(data[:10])
        raise KeyboardInterrupt("killed while writing the archive")

    monkeypatch.setattr(archive, "atomic_write_bytes", torn)
    with pytest.raises(KeyboardInterrupt):
        compress.compress_session(mgr.store, sid)
    monkeypatch.undo()
    assert not gz_of(mgr.store, sid).exists() and contents(mgr.store, sid) == before
    mgr.store.close()


def test_config_turns_compression_off_and_defaults_on() -> None:
    assert ResetPolicy.from_settings(Settings().session).compress is True
    off = Settings.model_validate({"session": {"archive": {"compress": False}}})
    assert ResetPolicy.from_settings(off.session).compress is False


def test_sweep_compresses_older_plain_archives_resumably(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = manager(home, compress=False)  # a home from before compression
    ids = []
    for n in range(3):
        key = f"agent:main:telegram:default:direct:p{n}"
        ids.append(fill(old, key, lines=8))
        old.archive(ids[-1], T0)
    before = {sid: contents(old.store, sid) for sid in ids}
    old.store.close()
    mgr = manager(home)
    real = compress.compress_session
    calls: list[str] = []

    def killed_after_one(store: SessionStore, sid: str) -> Any:
        if calls:
            raise KeyboardInterrupt("sweep killed")
        calls.append(sid)
        return real(store, sid)

    monkeypatch.setattr(compress, "compress_session", killed_after_one)
    with pytest.raises(KeyboardInterrupt):
        mgr.sweep(T0)
    monkeypatch.undo()
    assert sum(gz_of(mgr.store, sid).exists() for sid in ids) == 1
    assert {sid: contents(mgr.store, sid) for sid in ids} == before
    mgr.sweep(T0)
    assert all(gz_of(mgr.store, s).is_file() and not plain_of(mgr.store, s).exists() for s in ids)
    assert {sid: contents(mgr.store, sid) for sid in ids} == before
    mgr.store.close()


def test_damaged_archive_is_one_line_naming_the_file_and_doctor_reports_it(archived: Any) -> None:
    mgr, sid, _ = archived
    path = gz_of(mgr.store, sid)
    path.write_bytes(path.read_bytes()[:-20])  # cut short
    home = mgr.store.home.root
    shown = run_cli(home, "session", "show", sid)
    assert shown.returncode != 0 and "Traceback" not in shown.stderr
    lines = [line for line in shown.stderr.splitlines() if line.strip()]
    assert str(path) in lines[0] and "compressed transcript is damaged" in lines[0], shown.stderr
    assert "restore messages.jsonl.gz from a backup" in shown.stderr
    checked = run_cli(home, "doctor", "--json")
    assert "Traceback" not in checked.stderr
    found = [f for f in json.loads(checked.stdout)["findings"] if f["check"] == "sessions.messages"]
    assert found and found[0]["path"] == str(path) and "cut short" in found[0]["message"]
    with pytest.raises(archive.DamagedArchive, match="cut short"):  # an append starts no second transcript
        mgr.store.append(sid, "user", "more", T0)
    assert not plain_of(mgr.store, sid).exists()
    for garbage, why in ((b"not gzip at all\n", "not a valid gzip file"), (b"", "cut short")):
        path.write_bytes(garbage)
        with pytest.raises(archive.DamagedArchive, match=why):
            mgr.store.read_messages(sid)
        assert compress.compress_archived(mgr.store).sessions == 0  # a sweep leaves it for the operator


def test_cli_show_search_and_index_check_read_a_compressed_archive(home: Path) -> None:
    """Indexed while plain (to its end: final), compressed by a later sweep, then read by every command."""
    mgr = manager(home, compress=False)
    sid = fill(mgr)
    before = contents(mgr.store, sid)
    mgr.archive(sid, T0)
    mgr.store.close()
    first = run_cli(home, "session", "search", MARKER, "--json")  # builds the transcript index
    assert first.returncode == 0, first.stderr
    store = SessionStore(Home(home), "main")
    assert compress.compress_archived(store).sessions == 1
    store.close()
    shown = run_cli(home, "session", "show", sid, "--json")
    assert shown.returncode == 0, shown.stderr
    assert [m["content"] for m in json.loads(shown.stdout)["messages"]] == [c for _, c in before]
    found = run_cli(home, "session", "search", MARKER, "--json")
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"] == json.loads(first.stdout)["results"]
    checked = run_cli(home, "memory", "index", "--check", "--json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    report = json.loads(checked.stdout)["transcripts"]
    assert (report["ok"], report["behind"], report["sessions"], report["problems"]) == (True, 0, 1, [])
    assert report["messages"] == sum(1 for m in before if m[1] and "result" not in m[1])
    for path in (home / "agents" / "main" / "memory").glob("transcripts.sqlite*"):
        path.unlink()  # the index built again from nothing: from the archive
    rebuilt = run_cli(home, "session", "search", MARKER, "--json")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert json.loads(rebuilt.stdout)["results"] == json.loads(first.stdout)["results"]


def test_purge_rewrites_the_compressed_archive_without_the_persons_words(archived: Any) -> None:
    mgr, sid, before = archived
    home = mgr.store.home.root
    mgr.store.close()
    assert holding(home, MARKER.encode())
    done = run_cli(home, "memory", "purge", "--user", "alice", "--sessions", "--yes", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    store = SessionStore(Home(home), "main")
    assert gz_of(store, sid).is_file() and not plain_of(store, sid).exists()  # still compressed
    assert holding(home, MARKER.encode()) == []  # neither in any file's bytes nor in the archive's text
    assert holding(home, "明天上海天气".encode()) == []
    left = [c for _, c in contents(store, sid)]
    assert len(left) == len(before) and "bob says hello 0" in left
    store.close()


def test_encrypted_home_keeps_archives_sealed_and_decrypt_unseals_them(home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    convert.init_home(home, PASS, kdf_n=FAST_KDF)
    try:
        mgr = manager(home)
        sid = fill(mgr)
        before = contents(mgr.store, sid)
        mgr.archive(sid, T0)
        path = gz_of(mgr.store, sid)
        data = path.read_bytes()
        assert records.is_sealed(data) and not data.startswith(b"\x1f\x8b")  # compressed, then sealed
        assert MARKER.encode() not in data and b"bob" not in data
        assert contents(mgr.store, sid) == before
        tampered = bytearray(data)
        tampered[-10] ^= 1
        path.write_bytes(bytes(tampered))
        with pytest.raises(records.TamperedRecord, match="changed or damaged on disk"):
            mgr.store.read_messages(sid)
        path.write_bytes(data)
        mgr.store.append(sid, "user", "after", T0)  # plain again, and sealed per line
        assert records.is_sealed(plain_of(mgr.store, sid).read_bytes()) and not path.exists()
        mgr.archive(sid, T0)
        mgr.store.close()
        done = convert.decrypt_home(home, PASS)
        assert any(p.endswith("messages.jsonl.gz") for p in done.documents)
        assert len([x for x in gzip.decompress(path.read_bytes()).split(b"\n") if x]) == len(before) + 1
        redone = convert.init_home(home, PASS, kdf_n=FAST_KDF)
        assert any(p.endswith("messages.jsonl.gz") for p in redone.documents)
        store = SessionStore(Home(home), "main")
        assert contents(store, sid) == [*before, (len(before), "after")]
        store.close()
    finally:
        unlocked.forget()


def test_plain_home_archive_copies_and_other_files_are_not_touched(archived: Any, tmp_path: Path) -> None:
    """A home copied as files (a backup) reads its compressed archives the same."""
    mgr, sid, before = archived
    copy = tmp_path / "copy"
    shutil.copytree(mgr.store.home.root, copy)
    store = SessionStore(Home(copy), "main")
    assert contents(store, sid) == before
    store.close()


def test_session_sweep_compresses_an_older_homes_archives_and_says_so(home: Path) -> None:
    old = manager(home, compress=False)
    sid = fill(old)
    before = contents(old.store, sid)
    old.archive(sid, T0)
    old.store.close()
    swept = run_cli(home, "session", "sweep")
    assert swept.returncode == 0, swept.stderr
    assert "1 archived transcript(s) compressed" in swept.stdout
    store = SessionStore(Home(home), "main")
    assert gz_of(store, sid).is_file() and contents(store, sid) == before
    store.close()
    again = run_cli(home, "session", "sweep", "--quiet")
    assert again.returncode == 0 and again.stdout == "", again.stdout + again.stderr
