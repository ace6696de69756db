"""Stored vectors that are not their texts' (issue 48 §2): a vec0 chunk page of random bytes passes
integrity_check and every row count, so it is found by the vectors themselves (upkeep/vector_check.py):
their norms and types, and a sample re-embedded. Real processes with the packaged models; the in-process
cases use the fast fake embedder.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from openclaw_cli.memory.store.sqlite.connection import open_db
from openclaw_cli.memory.upkeep import vector_check
from tests.conftest import run_cli
from tests.salvage_helpers import cli_store, copy_home, fake_factory, fake_store

# The memory commands tests/inprocess.py knows to be safe run in this process: these tests are about
# what they print and store, not about the process; tests marked real_process keep real ones.
CLI_IN_PROCESS = True

TEXTS = [
    ("kettle", "the kettle is in the blue cupboard"),
    ("tea", "tea with lemon in the morning"),
    ("coffee", "我喜欢喝咖啡"),
    ("bike", "the bike needs a new chain before the trip"),
]


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("vectors") / "home"
    return cli_store(home, TEXTS)


def _db(home: Path) -> Path:
    return home / "agents" / "main" / "memory" / "memory.sqlite"


def _garbage_chunks(path: Path) -> None:
    """Random bytes over every vector of the vec0 table, as a user's sqlite3 would write them."""
    conn = sqlite3.connect(path)
    conn.execute("UPDATE vec_1_vector_chunks00 SET vectors = randomblob(length(vectors))")
    conn.commit()
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def _swapped_rows(path: Path) -> None:
    """The first two vectors exchanged: each still a perfect unit vector, of the other text."""
    conn = sqlite3.connect(path)
    width = conn.execute("SELECT value FROM meta WHERE key = 'embedder.dimensions'").fetchone()[0]
    width = int(width)  # int8: one byte a dimension
    chunk_id, blob = conn.execute("SELECT rowid, vectors FROM vec_1_vector_chunks00").fetchone()
    data = bytearray(blob)
    data[:width], data[width : 2 * width] = data[width : 2 * width], data[:width]
    conn.execute("UPDATE vec_1_vector_chunks00 SET vectors = ? WHERE rowid = ?", (bytes(data), chunk_id))
    conn.commit()
    conn.close()


def _check(home: Path) -> tuple[int, dict[str, object]]:
    done = run_cli(home, "memory", "index", "--check", "--json")
    return done.returncode, json.loads(done.stdout)["databases"][0]


def _top(home: Path, query: str) -> str:
    found = run_cli(home, "memory", "search", query, "--json", "--mode", "vector")
    assert found.returncode == 0, found.stderr
    return str(json.loads(found.stdout)["results"][0]["id"])


def test_index_check_finds_a_chunk_of_random_bytes(stored: Path, tmp_path: Path) -> None:
    home = copy_home(stored, tmp_path)
    _garbage_chunks(_db(home))
    code, report = _check(home)
    assert code == 1 and report["ok"] is False
    assert report["vectorsMalformed"] == 4 and report["vectorsDisagreeing"] == 4
    assert any("wrong norm" in p for p in report["problems"])  # type: ignore[union-attr]


def test_index_check_finds_vectors_of_the_wrong_text(stored: Path, tmp_path: Path) -> None:
    home = copy_home(stored, tmp_path)
    _swapped_rows(_db(home))
    code, report = _check(home)
    assert code == 1
    assert report["vectorsMalformed"] == 0 and report["vectorsDisagreeing"] == 2
    assert any("disagree with a fresh embedding" in p for p in report["problems"])  # type: ignore[union-attr]


def test_memory_index_reembeds_what_disagrees(stored: Path, tmp_path: Path) -> None:
    home = copy_home(stored, tmp_path)
    _garbage_chunks(_db(home))
    done = run_cli(home, "memory", "index", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["repaired"][0]["vectorsReembedded"] == 4
    assert _check(home)[0] == 0
    assert _top(home, "where is the kettle") == "kettle"


def test_doctor_reports_wrong_vectors_and_fix_reembeds_them(stored: Path, tmp_path: Path) -> None:
    home = copy_home(stored, tmp_path)
    _swapped_rows(_db(home))
    found = run_cli(home, "doctor", "--json")
    (finding,) = [f for f in json.loads(found.stdout)["findings"] if f["check"] == "memory.index"]
    assert finding["severity"] == "error" and "disagree" in finding["message"]
    fixed = run_cli(home, "doctor", "--fix", "--json")
    (finding,) = [f for f in json.loads(fixed.stdout)["findings"] if f["check"] == "memory.index"]
    assert finding["fixed"] is True
    assert _check(home)[0] == 0


def test_restore_reembeds_a_copy_whose_chunk_holds_random_bytes(stored: Path, tmp_path: Path) -> None:
    home = copy_home(stored, tmp_path)
    copy = tmp_path / "copy.sqlite"
    assert run_cli(home, "memory", "backup", "-o", str(copy)).returncode == 0
    _garbage_chunks(copy)
    assert run_cli(home, "memory", "add", "a memory the restore undoes").returncode == 0
    done = run_cli(home, "memory", "restore", str(copy), "--yes", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["records"] == 4 and report["vectorsReembedded"] == 4 and report["vectorsPending"] == 0
    assert _check(home)[0] == 0
    assert _top(home, "where is the kettle") == "kettle"
    assert [p.name for p in _db(home).parent.iterdir() if ".restoring-" in p.name] == []


def test_sound_vectors_pass_in_process(tmp_path: Path) -> None:
    conn = open_db(fake_store(tmp_path / "memory.sqlite", 40))
    try:
        found = vector_check.check(conn, fake_factory())
    finally:
        conn.close()
    assert found.checked == 40 and found.sampled == 32 and found.wrong == []


def test_an_embedder_that_fails_leaves_the_norm_check(tmp_path: Path) -> None:
    from openclaw_cli.memory.embedding.onnx_embedder import EmbeddingUnavailable

    def down() -> object:
        raise EmbeddingUnavailable("the embedding API is down")

    conn = open_db(fake_store(tmp_path / "memory.sqlite", 5))
    try:
        found = vector_check.check(conn, down)  # type: ignore[arg-type]
    finally:
        conn.close()
    assert found.not_compared is not None and "down" in found.not_compared
    assert found.checked == 5 and found.sampled == 0
