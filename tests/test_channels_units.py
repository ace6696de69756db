"""The channel layer's pure parts: splitting, the journal, access control, media typing (no process)."""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openclaw_cli.channels.access import AccessStore, Policy, dm_decision, group_allowed
from openclaw_cli.channels.chunking import split_text
from openclaw_cli.channels.journal import ChannelJournal, account_dir
from openclaw_cli.channels.media import TooLarge, save_stream, sniff
from openclaw_cli.core.errors import InvalidInput, NotFound


def _fences_balanced(part: str) -> bool:
    return sum(1 for line in part.split("\n") if line.strip().startswith("```")) % 2 == 0


def test_paragraphs_are_kept_whole_when_they_fit() -> None:
    text = "\n\n".join(f"Paragraph {i}. " + "word " * 150 for i in range(12))
    parts = split_text(text, 1000)
    assert all(len(p) <= 1000 for p in parts)
    assert all(p.startswith("Paragraph") for p in parts)


def test_a_code_block_is_never_cut_and_a_huge_one_is_refenced() -> None:
    small = "```\n" + "print(1)\n" * 50 + "```"
    huge = "```python\n" + "\n".join(f"line_{i} = {i}" for i in range(600)) + "\n```"
    text = "intro " * 100 + "\n\n" + small + "\n\n" + huge + "\n\nbye"
    parts = split_text(text, 1200)
    assert all(len(p) <= 1200 for p in parts)
    assert all(_fences_balanced(p) for p in parts)
    assert any(small in p for p in parts)
    joined = "\n".join(parts)
    assert all(f"line_{i} = {i}" in joined for i in range(600))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(alphabet="abc .!?\n", min_size=1, max_size=300),
            st.builds(lambda body: f"```\n{body}\n```", st.text(alphabet="xyz =\n", max_size=400)),
        ),
        max_size=20,
    )
)
def test_every_part_fits_and_no_word_is_lost(blocks: list[str]) -> None:
    text = "\n\n".join(blocks)
    parts = split_text(text, 200)
    assert all(len(p) <= 200 for p in parts)
    words = [w for w in text.split() if not w.startswith("```")]
    got = [w for w in " ".join(parts).split() if not w.startswith("```")]
    assert "".join(words) == "".join(got)


def test_journal_resumes_unfinished_entries_and_forgets_finished_text(tmp_path: Path) -> None:
    directory = account_dir(tmp_path, "telegram", "default")
    journal = ChannelJournal(directory)
    journal.accept("u1", {"text": "secret words", "target": {"chat_id": "1"}})
    journal.reply("u1", ["part a", "part b"])
    journal.sent("u1", 0)
    journal.accept("u2", {"text": "done soon", "target": {"chat_id": "2"}})
    journal.reply("u2", ["only"])
    journal.sent("u2", 0)
    journal.close()
    with (directory / "journal.jsonl").open("ab") as handle:
        handle.write(b'{"op":"sent","id":"u1","pa')  # a torn last line
    again = ChannelJournal(directory)
    [entry] = again.pending()
    assert entry.id == "u1" and entry.parts == ["part a", "part b"] and entry.sent == {0}
    assert again.has("u2") and again.pending_sends() == 1
    again.sent("u1", 1)
    assert again.pending() == []
    assert "secret words" not in (directory / "journal.jsonl").read_text()
    assert stat.S_IMODE((directory / "journal.jsonl").stat().st_mode) == 0o600


def test_offsets_and_names_that_become_paths_are_checked(tmp_path: Path) -> None:
    journal = ChannelJournal(account_dir(tmp_path, "telegram", "default"))
    assert journal.offset() is None
    journal.save_offset(42)
    assert journal.offset() == 42
    for bad in ("../x", "a/b", "", ".hidden"):
        with pytest.raises(InvalidInput):
            account_dir(tmp_path, "telegram", bad)


def test_policies_and_pairing_records(tmp_path: Path) -> None:
    store = AccessStore(tmp_path / "acc")
    pairing = Policy("pairing", ("1",), "allowlist", ("-5",), 3600)
    assert dm_decision(pairing, store, "1") == "allow"
    assert dm_decision(pairing, store, "2") == "pair"
    assert dm_decision(Policy("allowlist", (), "open", (), 1), store, "2") == "ignore"
    assert dm_decision(Policy("open", (), "open", (), 1), store, "2") == "allow"
    assert dm_decision(Policy("disabled", ("1",), "open", (), 1), store, "1") == "ignore"
    assert group_allowed(pairing, "-5") and not group_allowed(pairing, "-6")
    code = store.request("2", "Bob", 3600)
    assert code is not None and store.request("2", "Bob", 3600) is None  # told once
    assert store.request("3", None, -1) is not None and [r["sender"] for r in store.requests()] == ["2"]
    assert store.approve(code.lower())["sender"] == "2"
    assert dm_decision(pairing, store, "2") == "allow"
    with pytest.raises(NotFound):
        store.deny(code)


def test_media_type_comes_from_the_bytes_and_the_cap_stops_the_stream(tmp_path: Path) -> None:
    assert sniff(b"%PDF-1.4 ...") == ("application/pdf", "pdf")
    assert sniff(b"\x89PNG\r\n\x1a\n....") == ("image/png", "png")
    assert sniff(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == ("image/webp", "webp")
    assert sniff(b"hello") == ("text/plain", "txt")
    assert sniff(b"\xff\xfe\x00\x81") == ("application/octet-stream", "bin")

    async def chunks(count: int) -> AsyncIterator[bytes]:
        for _ in range(count):
            yield b"\xff\xd8\xff" + b"a" * 1000

    saved = asyncio.run(save_stream(tmp_path / "media", chunks(2), 4096))
    assert saved.mime == "image/jpeg" and saved.size == 2006 and saved.name.endswith(".jpg")
    with pytest.raises(TooLarge):
        asyncio.run(save_stream(tmp_path / "media", chunks(10), 4096))
    assert sorted(os.listdir(tmp_path / "media")) == [saved.name]  # the refused one left nothing


def test_the_channel_layer_never_imports_the_gateway() -> None:
    import ast

    root = Path(__file__).resolve().parents[1] / "openclaw_cli" / "channels"
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names.append(node.module)
            assert not any(n.startswith("openclaw_cli.gateway") for n in names), path
