"""Single words' vectors kept on disk for the next search (embedding/word_table.py), and the `neighbours`
stage reading them (search/legs/neighbours.py WordVectors given a home's WordTables): the same vectors as the
model gives, a damaged, stale or wrong table started again and never trusted, files 0600. What a purge
does to them: tests/test_word_table_privacy.py."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import pytest

from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.embedding.word_table import WordTable, WordTables, table_path
from openclaw_cli.memory.search.legs import neighbours
from openclaw_cli.memory.service import MemoryService
from tests.conftest import run_cli
from tests.memory_helpers import service_for

WORDS = ["money", "cash", "boat", "savings"]


def _unit(seed: int, dimensions: int = 4) -> np.ndarray:
    vector = np.random.default_rng(seed).standard_normal(dimensions).astype(np.float32)
    return vector / np.linalg.norm(vector)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def table(tmp_path: Path) -> WordTable:
    return WordTable(table_path(tmp_path / "models", "key-a"), "key-a", 4)


def test_words_written_are_read_back_bit_for_bit_in_private_files(table: WordTable) -> None:
    kept = {"money": _unit(1), "cash": _unit(2)}
    table.write(kept)
    table.close()
    again = WordTable(table.path, "key-a", 4)
    found = again.read(["cash", "money", "boat"])
    assert set(found) == {"cash", "money"}  # "boat" was never written
    assert all(found[w].tobytes() == kept[w].tobytes() for w in kept)
    assert _mode(table.path) == 0o600 and _mode(table.path.parent) == 0o700
    assert again.resets == 0


def test_a_table_is_per_key(tmp_path: Path) -> None:
    assert table_path(tmp_path, "key-a") != table_path(tmp_path, "key-b")
    assert table_path(tmp_path, "key-a").parent == tmp_path


def test_nothing_asked_reads_nothing(table: WordTable) -> None:
    assert table.read([]) == {}
    table.write({})
    assert not table.path.exists()


def _tamper(path: Path, sql: str) -> None:
    conn = apsw.Connection(str(path))
    conn.execute(sql)
    conn.close()


def test_a_row_whose_bytes_changed_empties_the_table(table: WordTable) -> None:
    table.write({"money": _unit(1), "cash": _unit(2)})
    table.close()
    _tamper(table.path, "UPDATE words SET vector = zeroblob(16) WHERE word = 'cash'")
    assert table.read(["money", "cash"]) == {}
    assert table.resets == 1
    assert table.read(["money"]) == {}  # the sound row went too: the table is started again, not patched
    table.write({"money": _unit(1)})
    assert table.read(["money"])["money"].tobytes() == _unit(1).tobytes()


def test_a_row_of_the_wrong_width_empties_the_table(table: WordTable) -> None:
    table.write({"money": _unit(1)})
    table.close()
    wide = WordTable(table.path, "key-a", 4)
    _tamper(table.path, "UPDATE words SET vector = zeroblob(20)")
    assert wide.read(["money"]) == {}
    assert wide.resets == 1


def test_a_file_that_is_not_a_database_is_started_again(table: WordTable) -> None:
    table.path.parent.mkdir(mode=0o700)
    table.path.write_bytes(b"not a database at all" * 100)
    assert table.read(["money"]) == {}
    table.write({"money": _unit(1)})
    assert table.read(["money"])["money"].tobytes() == _unit(1).tobytes()
    assert table.resets == 1


def test_a_table_of_another_model_or_width_is_not_read(table: WordTable) -> None:
    table.write({"money": _unit(1)})
    table.close()
    other = WordTable(table.path, "key-b", 4)  # the same file under another key: stale
    assert other.read(["money"]) == {}
    assert other.resets == 1
    other.write({"money": _unit(3)})
    other.close()
    narrower = WordTable(table.path, "key-b", 3)
    assert narrower.read(["money"]) == {}
    assert narrower.resets == 1


def test_a_table_another_process_holds_is_skipped_not_waited_for(table: WordTable) -> None:
    table.write({"money": _unit(1)})
    holder = apsw.Connection(str(table.path))
    holder.execute("BEGIN EXCLUSIVE")
    try:
        fresh = WordTable(table.path, "key-a", 4)
        assert fresh.read(["money"]) == {}
        fresh.write({"cash": _unit(2)})  # given up after BUSY_MS, nothing raised
        assert fresh.resets == 0
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert set(WordTable(table.path, "key-a", 4).read(["money", "cash"])) == {"money"}


def test_an_unreachable_directory_leaves_the_search_without_the_table(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("a file where the directory should be")
    table = WordTable(table_path(blocked / "models", "key-a"), "key-a", 4)
    table.write({"money": _unit(1)})
    assert table.read(["money"]) == {}


# ---------------------------------------------------------------------------------------------------------
# The neighbours stage's word vectors through the table, with the packaged models


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryService]:
    svc = service_for(Path(tmp_path_factory.mktemp("word-table")) / "home")
    svc.add(NewMemory(l0="User is saving money for a sailing boat"))
    yield svc
    svc.close()


def _models(service: MemoryService) -> dict[str, Any]:
    embedder: Any = service.embedder()
    return {"en": embedder.english, "zh": embedder.multilingual}


def test_a_later_process_reads_the_words_and_checks_one(service: MemoryService, tmp_path: Path) -> None:
    words = [*WORDS, "小孩", "儿子"]
    first = neighbours.WordVectors(_models(service))  # type: ignore[arg-type]
    made = first.of(words, WordTables.now(tmp_path))
    assert first.embedded == len(words) and first.from_table == 0
    later = neighbours.WordVectors(_models(service))  # type: ignore[arg-type]
    read = later.of(words, WordTables.now(tmp_path))
    assert later.from_table == len(words)
    assert later.embedded == 2  # one word per model embedded again, to check the table
    assert all(read[w].tobytes() == made[w].tobytes() for w in words)
    plain = neighbours.WordVectors(_models(service))  # type: ignore[arg-type]
    assert all(plain.of(words)[w].tobytes() == made[w].tobytes() for w in words)


def test_a_table_that_disagrees_with_the_model_is_started_again(
    service: MemoryService, tmp_path: Path
) -> None:
    models = _models(service)
    writer = neighbours.WordVectors(models)  # type: ignore[arg-type]
    writer.of(["money"], WordTables.now(tmp_path))  # makes the English table
    key = models["en"].vectors_key()
    table = WordTable(table_path(tmp_path, key), key, 384)
    wrong = {w: _unit(i, 384) for i, w in enumerate(WORDS)}  # sound rows, but not the model's vectors
    table.write(wrong)
    table.close()
    reader = neighbours.WordVectors(models)  # type: ignore[arg-type]
    found = reader.of(WORDS, WordTables.now(tmp_path))
    truth = neighbours.WordVectors(models).of(WORDS)  # type: ignore[arg-type]
    assert all(found[w].tobytes() == truth[w].tobytes() for w in WORDS)
    assert reader.embedded == 1 + len(WORDS)  # the check, then every word from the model
    assert reader.from_table == 0
    # and the table now holds the model's vectors
    assert all(v.tobytes() == truth[w].tobytes() for w, v in table.read(WORDS).items())


def test_the_key_changes_with_the_model_files(service: MemoryService) -> None:
    models = _models(service)
    assert models["en"].vectors_key() != models["zh"].vectors_key()
    assert models["en"].vectors_key() == models["en"].vectors_key()


def test_every_process_keeps_words_in_the_homes_tables(service: MemoryService) -> None:
    warm_service = service_for(service.home.root, warm=True)
    once = service_for(service.home.root, one_shot=True)
    try:
        store = next(iter(warm_service.existing_stores()))
        warm = warm_service.searcher(store).word_tables  # a warm process's first search of a question
        assert warm is not None and warm.directory == service.home.word_cache_dir
        one_store = next(iter(once.existing_stores()))
        assert once.searcher(one_store).word_tables == warm
    finally:
        once.close()
        warm_service.close()


def test_two_search_processes_give_the_same_results_and_keep_the_words_they_met(tmp_path: Path) -> None:
    home = tmp_path / "home"
    texts = ["User is saving money for a sailing boat", "User plays badminton on Tuesday nights"]
    lines = "".join(json.dumps({"l0": text}) + "\n" for text in texts)
    assert run_cli(home, "memory", "add", "--batch", "-", input=lines).returncode == 0
    # The table the CLI's one-search process uses: in the home's word cache, under the key of the
    # English model as that process loads it.
    once = service_for(home, one_shot=True)
    try:
        key = once.embedder().english.vectors_key()  # type: ignore[attr-defined]
        path = table_path(once.home.word_cache_dir, key)
    finally:
        once.close()
    search = ("memory", "search", "where is my spare cash going?", "--json", "--local")
    first = run_cli(home, *search)
    assert first.returncode == 0, first.stderr
    assert {"money", "boat", "badminton"} <= _rows(path)
    assert _mode(path) == 0o600
    second = run_cli(home, *search)
    assert second.returncode == 0, second.stderr
    found = [[(r["id"], r["score"]) for r in run.json()["results"]] for run in (first, second)]
    assert found[0] and found[0] == found[1]


def _rows(path: Path) -> set[str]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {str(row[0]) for row in conn.execute("SELECT word FROM words")}
    finally:
        conn.close()


def test_a_table_another_process_is_making_is_left_to_it(table: WordTable) -> None:
    table.path.parent.mkdir(mode=0o700)
    maker = apsw.Connection(str(table.path))
    maker.execute("BEGIN IMMEDIATE")
    maker.execute("CREATE TABLE meta (key TEXT NOT NULL, dimensions INTEGER NOT NULL)")
    try:
        assert table.read(["money"]) == {}  # busy: skipped, and not mistaken for damage
        assert table.resets == 0 and table.path.exists()
    finally:
        maker.execute("ROLLBACK")
        maker.close()
    table.write({"money": _unit(1)})
    assert table.read(["money"])["money"].tobytes() == _unit(1).tobytes()


_WRITER = """
import sys
from pathlib import Path
import numpy as np
from openclaw_cli.memory.embedding.word_table import WordTable
table = WordTable(Path(sys.argv[1]), "key-a", 4)
n = int(sys.argv[2])
for i in range(20):
    word = f"w{n}x{i}"
    table.write({word: np.full(4, 0.5, dtype=np.float32)})
    table.read([word, "w0x0"])
print(table.resets)
"""


def test_processes_making_and_filling_one_table_at_once_never_reset_it(table: WordTable) -> None:
    import subprocess
    import sys

    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(table.path), str(n)], stdout=subprocess.PIPE, text=True
        )
        for n in range(4)
    ]
    outputs = [proc.communicate(timeout=120)[0].strip() for proc in procs]
    assert all(proc.returncode == 0 for proc in procs)
    assert outputs == ["0"] * 4
    found = table.read([f"w{n}x{i}" for n in range(4) for i in range(20)])
    assert found and table.resets == 0  # a write that met a busy table is skipped; the rest are sound
    assert all(v.tobytes() == np.full(4, 0.5, dtype=np.float32).tobytes() for v in found.values())


def test_a_table_past_its_size_limit_is_started_again(
    table: WordTable, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openclaw_cli.memory.embedding import word_table

    table.write({f"w{i}": _unit(i) for i in range(200)})
    monkeypatch.setattr(word_table, "MAX_BYTES", table.path.stat().st_size - 1)
    table.write({"money": _unit(1)})
    assert table.resets == 1
    assert table.read(["w0", "money"]).keys() == {"money"}


class _Unkeyed:
    """A model that cannot say what its vectors depend on (not a packaged one)."""

    def __init__(self, model: Any) -> None:
        self.identity = model.identity
        self._model = model

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self._model.embed_passages(texts))


def test_a_model_that_cannot_name_its_vectors_keeps_none_on_disk(
    service: MemoryService, tmp_path: Path
) -> None:
    vectors = neighbours.WordVectors({"en": _Unkeyed(_models(service)["en"])})  # type: ignore[dict-item]
    assert set(vectors.of(["money", "cash"], WordTables.now(tmp_path))) == {"money", "cash"}
    assert vectors.embedded == 2 and not list(tmp_path.glob("words-*"))
