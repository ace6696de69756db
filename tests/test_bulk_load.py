"""Bulk loading as a pipeline (store/bulk/load.py): embedding runs ahead of the writes, chunk by chunk, and
what is stored, what counts as a duplicate and what a failure leaves behind are as before.

In-process tests write real SQLite files with small chunks and the synthetic composite embedder of the
benchmarks (vectors seeded by the text, so equal texts get equal vectors); the CLI tests run real
processes with the English model alone on a batch larger than one chunk.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import pytest

from benchmarks.synth import CompositeEmbedder
from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.service import MemoryService
from openclaw_cli.memory.store.bulk.embedding_worker import SWITCH_INTERVAL
from openclaw_cli.memory.store.bulk.load import CHUNK, WriteReport
from openclaw_cli.memory.store.embedder import EmbeddingUnavailable
from openclaw_cli.memory.store.layout import MINILM
from openclaw_cli.memory.store.records import MemoryRecord
from openclaw_cli.memory.store.sqlite.storage import BULK_CACHE_KIB
from tests.conftest import run_cli
from tests.memory_helpers import service_for

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

TEXTS = [f"the user keeps note {n} about the garden shed" for n in range(10)]


class _FailingAt(CompositeEmbedder):
    """The synthetic embedder, failing from its `call`-th call on (1 = the first) with `error`."""

    def __init__(self, call: int, error: Exception) -> None:
        super().__init__()
        self.calls = 0
        self.fail_from = call
        self.error = error

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        if self.calls >= self.fail_from:
            raise self.error
        return super().embed_passages(texts)


def _service(home: Path, embedder: Any = None) -> MemoryService:
    service = service_for(home)
    chosen = embedder or CompositeEmbedder()
    service.embedder = lambda: chosen  # type: ignore[method-assign]
    return service


def _records(service: MemoryService, texts: Sequence[str]) -> list[MemoryRecord]:
    return [service.build_record(NewMemory(l0=t, category="note", user_id="u1")) for t in texts]


def _stored(path: Path) -> list[tuple[str, str, str]]:
    """(l0, vector status, action of its first history row) of every live record, read through a
    connection of its own, as another process would."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    rows = conn.execute(
        "SELECT l0, vector_status, (SELECT action FROM history h WHERE h.record_id = r.id ORDER BY seq "
        "LIMIT 1) FROM records r WHERE deleted = 0 ORDER BY rowid"
    ).fetchall()
    conn.close()
    return [(str(a), str(b), str(c)) for a, b, c in rows]


def _write(
    home: Path, texts: Sequence[str], chunk: int, embedder: Any = None
) -> tuple[Any, Path, dict[str, int]]:
    service = _service(home, embedder)
    records = _records(service, texts)
    store = service.store(service.db_path("user"))
    report = store.add(records, chunk=chunk)
    path = store.path
    service.close()
    position = {r.id: n for n, r in enumerate(records)}
    return report, path, position


def test_a_batch_of_many_chunks_stores_what_one_chunk_at_a_time_stores(tmp_path: Path) -> None:
    texts = [*TEXTS, TEXTS[1], "a new one", TEXTS[7]]  # two copies, each in a later chunk than the first
    report, path, position = _write(tmp_path / "piped", texts, chunk=3)
    separate = _service(tmp_path / "separate")
    records = _records(separate, texts)
    store = separate.store(separate.db_path("user"))
    one_by_one = [store.add(records[i : i + 3], chunk=len(records)) for i in range(0, len(records), 3)]
    separate.close()
    assert _stored(path) == _stored(store.path)
    assert len(_stored(path)) == 11 and {status for _, status, _ in _stored(path)} == {"ready"}
    piped = [(position[new], position[old]) for new, old in report.duplicates]
    ids = {r.id: n for n, r in enumerate(records)}
    separately = [(ids[new], ids[old]) for part in one_by_one for new, old in part.duplicates]
    assert piped == separately == [(10, 1), (12, 7)]


class _Sizes(CompositeEmbedder):
    """The synthetic embedder, noting how many texts each call embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.sizes.append(len(texts))
        return super().embed_passages(texts)


@pytest.mark.parametrize(("count", "sizes"), [(46, [8] * 5 + [2] * 3), (48, [8] * 5 + [2] * 4)])
def test_the_last_records_go_in_quarter_chunks_and_store_what_one_transaction_stores(
    tmp_path: Path, count: int, sizes: list[int]
) -> None:
    """The records after the last full chunk, and the last full chunk when the worker does not have it
    yet (the first AHEAD + 1 are handed over while the input is read), are embedded and written in pieces."""
    texts = [f"the user keeps note {n} about the garden shed" for n in range(count)]
    seen = _Sizes()
    report, path, _ = _write(tmp_path / "piped", texts, chunk=8, embedder=seen)
    assert seen.sizes == sizes and len(report.ids) == count
    whole = _service(tmp_path / "whole")
    store = whole.store(whole.db_path("user"))
    store.add(_records(whole, texts), chunk=count)
    whole.close()
    assert _stored(path) == _stored(store.path)


def test_a_duplicate_in_a_later_chunk_is_a_duplicate_of_the_first_copy(tmp_path: Path) -> None:
    texts = ["prefers tea in the morning", "b", "c", "d", "Prefers TEA in the morning!"]
    report, path, position = _write(tmp_path, texts, chunk=2)
    assert [(position[new], position[old]) for new, old in report.duplicates] == [(4, 0)]
    assert [l0 for l0, _, _ in _stored(path)] == texts[:4]


def test_an_embedding_failure_midway_leaves_the_chunks_before_it_written_and_readable(
    tmp_path: Path,
) -> None:
    failing = _FailingAt(3, RuntimeError("the model run failed"))
    service = _service(tmp_path, failing)
    store = service.store(service.db_path("user"))
    with pytest.raises(RuntimeError, match="model run failed"):
        store.add(_records(service, TEXTS), chunk=3)
    path = store.path
    service.close()
    assert _stored(path) == [(t, "ready", "add") for t in TEXTS[:6]]  # chunks 1 and 2, whole
    again = _service(tmp_path)  # a rerun of the same lines stores the rest
    report = again.store(again.db_path("user")).add(_records(again, TEXTS), chunk=3)
    again.close()
    assert len(report.ids) == 4 and len(report.duplicates) == 6
    assert [l0 for l0, _, _ in _stored(path)] == TEXTS


def test_an_unavailable_embedder_midway_keeps_every_record_with_its_vector_pending(tmp_path: Path) -> None:
    failing = _FailingAt(2, EmbeddingUnavailable("the embedding service is down"))
    report, path, _ = _write(tmp_path, TEXTS, chunk=4, embedder=failing)
    assert len(report.ids) == 10 and report.pending_vectors == 6
    assert report.warning is not None and "the embedding service is down" in report.warning
    assert [status for _, status, _ in _stored(path)] == ["ready"] * 4 + ["pending"] * 6


def test_a_record_that_fails_validation_midway_stores_nothing_and_creates_no_database(tmp_path: Path) -> None:
    service = _service(tmp_path)

    def validated() -> Iterator[MemoryRecord]:
        for n in range(CHUNK * 2):  # past the first chunk: its embedding has started
            if n == CHUNK + 5:
                raise InvalidInput("line 262: unknown category 'bogus'")
            yield service.build_record(NewMemory(l0=f"memory {n}", category="note"))

    with pytest.raises(InvalidInput, match="line 262"):
        service.add_many(validated())
    service.close()
    assert not service.db_path("user").exists()


def test_a_chunk_looks_up_the_vector_index_once_and_moves_the_generation_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a chunk runs per record: its rows, the duplicate checks and a rowid lookup in vec0's rowid
    table; the vector index's name and format are read once per chunk, not per record (the centroid's
    refreshes, a few per chunk here, read theirs: left out of the count)."""
    from openclaw_cli.memory.store.vectors import centroid

    service = _service(tmp_path)
    store = service.store(service.db_path("user"))
    store.add(_records(service, ["a first memory, which creates the vector index"]))
    ran: list[str] = []
    refreshing: list[bool] = []

    def aside(function: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            refreshing.append(True)
            try:
                return function(*args, **kwargs)
            finally:
                refreshing.pop()

        return run

    for name in ("refresh", "read_total"):
        monkeypatch.setattr(centroid, name, aside(getattr(centroid, name)))

    def tracer(_cursor: Any, sql: str, _bindings: Any) -> bool:
        if not refreshing:
            ran.append(sql)
        return True

    store.conn.exec_trace = tracer
    texts = [f"the user keeps fact {n} about the allotment" for n in range(40)]
    report = store.add(_records(service, texts), chunk=40)
    store.conn.exec_trace = None
    service.close()
    assert len(report.ids) == 40
    meta_reads = [sql for sql in ran if sql.startswith("SELECT value FROM meta")]
    generation_moves = [sql for sql in ran if sql.startswith("INSERT INTO meta") and "+ 1" in sql]
    assert len(meta_reads) < 12 and len(generation_moves) == 1  # per record: 4 and 1 before
    assert not [sql for sql in ran if sql.startswith("DELETE FROM vec_")]  # new rows hold no vector
    assert sum(sql.startswith("INSERT INTO vec_") for sql in ran) == 40


class _SeesSwitchInterval(CompositeEmbedder):
    """The synthetic embedder, noting the GIL switch interval each embedding call runs under."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[float] = []

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.seen.append(sys.getswitchinterval())
        return super().embed_passages(texts)


def test_the_models_run_under_a_short_switch_interval_and_the_default_comes_back_after_the_write(
    tmp_path: Path,
) -> None:
    before = sys.getswitchinterval()
    seeing = _SeesSwitchInterval()
    report, _, _ = _write(tmp_path, TEXTS, chunk=3, embedder=seeing)
    assert len(report.ids) == len(TEXTS)
    assert seeing.seen == pytest.approx([SWITCH_INTERVAL] * 4)  # four chunks of three
    assert sys.getswitchinterval() == before


def test_a_cancelled_load_gives_the_switch_interval_back(tmp_path: Path) -> None:
    before = sys.getswitchinterval()
    service = _service(tmp_path)
    writer = service.store(service.db_path("user")).bulk_writer(chunk=2)
    for record in _records(service, TEXTS[:4]):
        writer.feed(record)  # the first chunks are handed to the worker
    assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)
    writer.cancel()
    service.close()
    assert sys.getswitchinterval() == before


def test_a_failed_load_gives_the_switch_interval_back(tmp_path: Path) -> None:
    before = sys.getswitchinterval()
    with pytest.raises(RuntimeError, match="model run failed"):
        _write(tmp_path, TEXTS, chunk=3, embedder=_FailingAt(2, RuntimeError("the model run failed")))
    assert sys.getswitchinterval() == before


class _FailsFrom(CompositeEmbedder):
    """The synthetic embedder, failing from its `fail_from`-th chunk (0: never)."""

    def __init__(self, fail_from: int) -> None:
        super().__init__()
        self.fail_from = fail_from
        self.calls = 0

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        if self.fail_from and self.calls >= self.fail_from:
            raise RuntimeError("the model run failed")
        return super().embed_passages(texts)


def _cache_size(conn: apsw.Connection) -> int:
    return int(conn.execute("PRAGMA cache_size").get)


@pytest.mark.parametrize("fails", [False, True])
def test_chunks_are_written_with_a_large_page_cache_and_the_connections_own_comes_back(
    tmp_path: Path, fails: bool
) -> None:
    # In a 100k store the default 2 MB cache cannot hold a vec0 chunk's blob beside the other pages a
    # record's writes touch: each vector insert then read ~220 overflow pages again.
    # The page cache is read on the thread that writes each chunk, as it writes it: the connection is
    # that thread's while the embedding thread runs the next chunk (reading it from the embedding thread
    # raced the writer: apsw's ThreadingViolationError, in a loaded whole run).
    embedder = _FailsFrom(fail_from=3 if fails else 0)  # the third chunk fails
    service = _service(tmp_path, embedder)
    store = service.store(service.db_path("user"))
    store.add(_records(service, ["a first memory, which creates the store"]))
    embedder.calls = 0  # the chunks are counted from here
    own = _cache_size(store.conn)
    seen: list[int] = []
    write_chunk = store.write_chunk

    def noting_cache_size(*args: Any, **kwargs: Any) -> None:
        seen.append(_cache_size(store.conn))
        write_chunk(*args, **kwargs)

    store.write_chunk = noting_cache_size  # type: ignore[method-assign]
    writer = store.bulk_writer(chunk=3)
    for record in _records(service, TEXTS):
        writer.feed(record)
    report = WriteReport()
    if fails:
        with pytest.raises(RuntimeError, match="model run failed"):
            writer.write(report)
    else:
        writer.write(report)
    assert seen and set(seen) == {-BULK_CACHE_KIB}  # while chunks were written
    assert _cache_size(store.conn) == own != -BULK_CACHE_KIB
    assert len(report.ids) == (6 if fails else len(TEXTS))  # a failure keeps the chunks written before it
    service.close()


# ------------------------------------------------------------------ real processes


@pytest.fixture()
def english_cli(home: Path):  # type: ignore[no-untyped-def]
    """The CLI with the English model alone (the same pipeline, a fraction of the embedding time), in
    this test's home or in `env_home`."""

    def run(*args: str, env_home: Path | None = None, **kwargs: Any) -> Any:
        return run_cli(env_home or home, *args, env={"OPENCLAW_MEMORY__EMBEDDING__MODEL": MINILM}, **kwargs)

    return run


def _lines(count: int) -> list[str]:
    lines = [json.dumps({"text": f"the user noted fact number {n} about the project"}) for n in range(count)]
    lines[CHUNK + 20] = lines[5]  # a copy in the second chunk of a line of the first
    return lines


def test_cli_batch_larger_than_a_chunk_matches_loading_it_a_chunk_at_a_time(
    english_cli, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    lines = _lines(CHUNK + 40)
    whole = english_cli("memory", "add", "--batch", "-", "--json", input="\n".join(lines) + "\n")
    assert whole.returncode == 0, whole.stderr
    out = whole.json()
    assert (out["added"], out["duplicate"], out["pendingVectors"]) == (CHUNK + 39, 1, 0)
    first = {r["l0"]: r["id"] for r in english_cli("memory", "list", "--json").json()}
    assert out["duplicates"] == [{"line": CHUNK + 21, "duplicateOf": first[json.loads(lines[5])["text"]]}]
    stored = sorted((r["l0"], r["vectorStatus"]) for r in english_cli("memory", "list", "--json").json())
    english_cli("memory", "delete", first[json.loads(lines[0])["text"]])  # a change the rerun must not undo
    # The same lines again, a chunk at a time, into a home of their own.
    for part in (lines[:CHUNK], lines[CHUNK:]):
        source = tmp_path / "part.jsonl"
        source.write_text("\n".join(part) + "\n", encoding="utf-8")
        other = english_cli("memory", "add", "--batch", str(source), "--json", env_home=tmp_path / "other")
        assert other.returncode == 0, other.stderr
    assert other.json()["duplicate"] == 1 and other.json()["duplicates"][0]["line"] == 21
    listed = english_cli("memory", "list", "--json", env_home=tmp_path / "other").json()
    assert sorted((r["l0"], r["vectorStatus"]) for r in listed) == stored


def test_cli_batch_with_a_bad_line_past_the_first_chunk_stores_nothing(english_cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    lines = _lines(CHUNK + 40)
    lines[CHUNK + 30] = json.dumps({"text": "x", "category": "bogus"})
    result = english_cli("memory", "add", "--batch", "-", input="\n".join(lines) + "\n")
    assert result.returncode == 1
    assert f"stdin line {CHUNK + 31}: unknown category 'bogus'" in result.stderr
    assert "nothing was stored" in result.stderr and "Traceback" not in result.stderr
    assert not list(home.rglob("*.sqlite"))


def test_cli_batch_times_with_an_offset_are_stored_as_the_same_moment_in_utc(english_cli) -> None:  # type: ignore[no-untyped-def]
    """FSRS refuses any timezone but UTC: a createdAt of +08:00 was an internal error."""
    lines = [
        json.dumps({"text": "tea at the lake house in spring", "createdAt": "2025-03-01T16:00:00+08:00"}),
        json.dumps({"text": "the ferry leaves at dawn", "createdAt": "2025-03-01T02:30:00-05:30"}),
    ]
    result = english_cli("memory", "add", "--batch", "-", "--json", input="\n".join(lines) + "\n")
    assert result.returncode == 0, result.stderr
    listed = {r["l0"]: r for r in english_cli("memory", "list", "--json").json()}
    tea, ferry = listed["tea at the lake house in spring"], listed["the ferry leaves at dawn"]
    assert tea["createdAt"].startswith("2025-03-01T08:00:00") and tea["createdAt"].endswith("Z")
    assert ferry["createdAt"].startswith("2025-03-01T08:00:00") and ferry["createdAt"].endswith("Z")
    assert tea["fsrs"]["lastReview"] == tea["createdAt"] == ferry["createdAt"] == "2025-03-01T08:00:00Z"
