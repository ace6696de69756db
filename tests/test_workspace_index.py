"""Workspace Markdown in search: chunks with path and lines, sync by hash, bad files (seed 003 §4.2)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.memory.search.pipeline import SearchRequest
from openclaw_cli.memory.service import MemoryService
from openclaw_cli.memory.workspace.markdown_index import (
    CHUNK_TOKENS,
    OVERLAP_TOKENS,
    chunk_markdown,
    estimate_tokens,
)
from tests.memory_helpers import service_for


class CountingEmbedder:
    """The real embedder, counting the passages it is asked to embed."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.passages = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed_passages(self, texts: Any) -> Any:
        self.passages += len(texts)
        return self.inner.embed_passages(texts)


def _counting_service(home: Path) -> tuple[MemoryService, CountingEmbedder]:
    service = service_for(home)
    counter = CountingEmbedder(service.embedder())
    service.embedder = lambda: counter  # type: ignore[method-assign]
    return service, counter


def _workspace(home: Path) -> Path:
    root = home / "agents" / "main" / "workspace"
    (root / "memory").mkdir(parents=True)
    return root


def _notes(service: MemoryService) -> list[Any]:
    return [r for r in service.list_records(category="note")]


def _long_markdown(lines: int) -> str:
    return "".join(
        f"- item {n}: the release checklist step {n} covers backups and rollbacks\n"
        for n in range(1, lines + 1)
    )


# --- chunking ---------------------------------------------------------------------------------------


def test_chunks_are_about_400_tokens_overlap_and_cover_every_line() -> None:
    text = _long_markdown(300)
    chunks = chunk_markdown(text)
    lines = text.splitlines()
    assert len(chunks) > 5
    assert all(estimate_tokens(c.text) > CHUNK_TOKENS * 0.8 for c in chunks[:-1])
    for chunk in chunks:
        assert estimate_tokens(chunk.text) <= CHUNK_TOKENS
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 300
    for before, after in zip(chunks, chunks[1:], strict=False):
        assert after.start_line <= before.end_line  # overlap
        overlap = "\n".join(lines[after.start_line - 1 : before.end_line])
        assert 0 < estimate_tokens(overlap) <= OVERLAP_TOKENS


def test_a_line_longer_than_a_chunk_is_cut_and_keeps_its_line_number() -> None:
    chunks = chunk_markdown("intro\n" + "word " * 2000 + "\nend\n")
    assert all(1 <= c.start_line <= c.end_line <= 3 for c in chunks)
    assert sum(c.start_line == c.end_line == 2 for c in chunks) >= 4  # the long line, in pieces
    assert all(len(c.text) <= 4 * CHUNK_TOKENS + 200 for c in chunks)
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 3


def test_chinese_text_is_chunked_by_characters() -> None:
    chunks = chunk_markdown("".join(f"第{n}条：我们把数据库迁移到新的集群。\n" for n in range(200)))
    assert len(chunks) > 3
    assert all(estimate_tokens(c.text) <= CHUNK_TOKENS for c in chunks)


# --- sync ---------------------------------------------------------------------------------------------


def test_memory_md_and_logs_become_note_records_with_path_and_lines(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    (root / "MEMORY.md").write_text("# Memory\n\n- Lin prefers green tea\n", encoding="utf-8")
    (root / "memory" / "2026-03-24.md").write_text("- deployed zanzibar gateway\n", encoding="utf-8")
    (root / "AGENTS.md").write_text("rules: never index me\n", encoding="utf-8")
    service = service_for(tmp_path)
    report = service.sync_workspace()
    assert report is not None and (report.files, report.indexed, report.chunks) == (2, 2, 2)
    notes = sorted(_notes(service), key=lambda r: r.source["path"])
    # The workspace is the owner's: its chunks are the owner's memories, not every person's (issue 47).
    assert [(r.scope, r.user_id, r.category) for r in notes] == [("user", "default", "note")] * 2
    assert notes[0].source["path"] == "MEMORY.md"
    assert (notes[0].source["startLine"], notes[0].source["endLine"]) == (1, 3)
    assert notes[1].source["path"] == "memory/2026-03-24.md"
    assert len(notes[0].source["fileHash"]) == 64
    assert all(r.vector_status == "ready" for r in notes)
    hits = service.search(SearchRequest(query="zanzibar gateway", k=3)).hits
    assert hits[0].to_dict(False)["location"] == "memory/2026-03-24.md:1-1"
    assert not service.search(SearchRequest(query="never index me", k=3, mode="bm25")).hits
    service.close()


def test_an_unchanged_file_is_not_re_embedded(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    (root / "MEMORY.md").write_text(_long_markdown(120), encoding="utf-8")
    service, counter = _counting_service(tmp_path)
    first = service.sync_workspace()
    assert first is not None and first.chunks > 2 and counter.passages == first.chunks
    ids = {r.id for r in _notes(service)}
    again = service.sync_workspace()
    assert again is not None and (again.unchanged, again.indexed, again.embedded) == (1, 0, 0)
    os.utime(root / "MEMORY.md", ns=(time.time_ns(), time.time_ns() + 10**9))  # touched, same bytes
    touched = service.sync_workspace()
    assert touched is not None and (touched.unchanged, touched.indexed) == (1, 0)
    assert counter.passages == first.chunks
    assert {r.id for r in _notes(service)} == ids
    service.close()


def test_a_changed_file_is_replaced_and_only_new_text_embedded(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    path = root / "MEMORY.md"
    path.write_text(_long_markdown(120), encoding="utf-8")
    service, counter = _counting_service(tmp_path)
    first = service.sync_workspace()
    assert first is not None
    before = counter.passages
    with path.open("a", encoding="utf-8") as handle:
        handle.write("- a brand new line about the quokka migration\n")
    second = service.sync_workspace()
    assert second is not None and second.indexed == 1
    assert 1 <= counter.passages - before < second.chunks  # the untouched chunks kept their vectors
    notes = _notes(service)
    assert len(notes) == second.chunks
    assert {r.source["fileHash"] for r in notes} == {notes[0].source["fileHash"]}
    assert (
        service.search(SearchRequest(query="quokka migration", k=1)).hits[0].record.source["endLine"] == 121
    )
    service.close()


def test_a_deleted_file_drops_its_records(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    (root / "memory" / "2026-03-23.md").write_text("- old log entry about ferrets\n", encoding="utf-8")
    (root / "MEMORY.md").write_text("- stays\n", encoding="utf-8")
    service = service_for(tmp_path)
    service.sync_workspace()
    (root / "memory" / "2026-03-23.md").unlink()
    report = service.sync_workspace()
    assert report is not None and report.removed == 1
    assert [r.source["path"] for r in _notes(service)] == ["MEMORY.md"]
    assert (
        service.store(service.db_path("agent")).conn.execute("SELECT count(*) FROM records_fts").fetchone()[0]
        == 1
    )
    service.close()


def test_search_syncs_a_dirty_workspace_first(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    service = service_for(tmp_path)
    assert not service.search(SearchRequest(query="marmalade", k=3)).hits
    (root / "memory" / "2026-03-24.md").write_text("- bought marmalade for the office\n", encoding="utf-8")
    hits = service.search(SearchRequest(query="marmalade", k=3)).hits
    assert [h.to_dict(False)["location"] for h in hits] == ["memory/2026-03-24.md:1-1"]
    service.close()


def test_workspace_file_not_utf8_is_reported_and_not_indexed(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    (root / "memory" / "2026-03-24.md").write_bytes(b"- caf\xe9 latin-1 text\n")
    (root / "MEMORY.md").write_text("- fine file\n", encoding="utf-8")
    service = service_for(tmp_path)
    report = service.sync_workspace()
    assert report is not None
    assert [p for p in report.problems if "2026-03-24.md" in p and "not UTF-8" in p]
    assert [r.source["path"] for r in _notes(service)] == ["MEMORY.md"]
    again = service.sync_workspace()
    assert again is not None and again.problems == report.problems  # still said, not re-read
    service.close()


def test_workspace_file_of_50_mb_is_reported_and_not_indexed(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    big = root / "memory" / "2026-03-24.md"
    with big.open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)  # a sparse 50 MB file
    (root / "MEMORY.md").write_text("- small\n", encoding="utf-8")
    service = service_for(tmp_path)
    started = time.perf_counter()
    report = service.sync_workspace()
    assert time.perf_counter() - started < 30
    assert report is not None and any("50.0 MiB" in p and "not indexed" in p for p in report.problems)
    assert [r.source["path"] for r in _notes(service)] == ["MEMORY.md"]
    service.close()


def test_symlink_in_memory_dir_pointing_outside_is_not_followed(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    secret = tmp_path / "outside.md"
    secret.write_text("- the vault code is okapi-7731\n", encoding="utf-8")
    (root / "memory" / "leak.md").symlink_to(secret)
    (root / "MEMORY.md").write_text("- harmless\n", encoding="utf-8")
    service = service_for(tmp_path)
    report = service.sync_workspace()
    assert report is not None and any(
        "leak.md" in p and "outside the workspace" in p for p in report.problems
    )
    assert [r.source["path"] for r in _notes(service)] == ["MEMORY.md"]
    assert not service.search(SearchRequest(query="okapi-7731 vault code", k=3, mode="bm25")).hits
    db = service.db_path("agent")
    service.close()
    assert b"okapi" not in db.read_bytes()


@pytest.mark.parametrize("durable", [False, True])
def test_cli_note_then_search_shows_path_and_lines(cli: Any, durable: bool) -> None:
    args = ["memory", "note", *(["--durable"] if durable else []), "the quokka server moved to rack 12"]
    noted = cli(*args, "--json")
    assert noted.returncode == 0, noted.stderr
    name = noted.json()["file"]
    assert name == "MEMORY.md" if durable else name.startswith("memory/")
    found = cli("memory", "search", "quokka rack", "--json")
    assert found.returncode == 0, found.stderr
    [hit] = found.json()["results"]
    assert hit["location"] == f"{name}:1-1"
    human = cli("memory", "search", "quokka rack")
    assert f"{name}:1-1" in human.stdout


def test_cli_index_syncs_the_workspace(cli: Any, home: Path) -> None:
    root = home / "agents" / "main" / "workspace"
    root.mkdir(parents=True)
    (root / "MEMORY.md").write_text("- likes hiking\n", encoding="utf-8")
    result = cli("memory", "index", "--json")
    assert result.returncode == 0, result.stderr
    synced, [repaired] = result.json()["workspace"], result.json()["repaired"]
    assert (synced["files"], synced["indexed"], synced["chunks"]) == (1, 1, 1)
    assert repaired["stillPending"] == 0
    assert cli("memory", "index", "--json").json()["workspace"]["unchanged"] == 1
    human = cli("memory", "index")
    assert "files 1, unchanged 1" in human.stdout


def test_cli_empty_note_is_an_error(cli: Any) -> None:
    result = cli("memory", "note", "   ")
    assert result.returncode == 1
    assert "empty" in result.stderr


def test_search_with_no_notes_creates_no_database(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    (root / "AGENTS.md").write_text("rules only\n", encoding="utf-8")
    service = service_for(tmp_path)
    result = service.search(SearchRequest(query="rules", k=3))
    assert result.hits == [] and not service.db_path("agent").exists()
    service.close()
