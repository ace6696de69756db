"""The tables of searched words (embedding/word_table.py) are the home's and are forgotten with its memories
(DESIGN.md "Privacy"): a search fills the home's own table, every purge of a person and every delete of a
memory empties it (through the CLI and through a running gateway, whose warm-up then fills it again with
the words of what is left and never with those forgotten), a table another process holds is waited for, a
search that began before a purge cannot put its words back, two homes never share a table, and the tables
an earlier version kept in the shared model cache are removed."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import pytest

from openclaw_cli.config.loading import Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.embedding import word_table
from openclaw_cli.memory.embedding.word_table import WordTable, WordTables, forget_words, table_path
from openclaw_cli.memory.search.legs import neighbours
from openclaw_cli.memory.service import MemoryService
from tests.conftest import SHARED_MODEL_CACHE, run_cli
from tests.gateway_helpers import echo_server, request, running_gateway, until, write_config
from tests.home_copies import copy_home
from tests.memory_helpers import service_for, table_words

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

ALICE = ["User is saving money for a sailing boat", "User plays badminton on Tuesday nights"]
BOB = ["User grows tomatoes in the greenhouse"]
QUERY = "where is my spare cash going?"
ALICE_WORDS = {"money", "boat", "badminton"}


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _words(home: Path) -> set[str]:
    """Every word in the home's word tables."""
    return table_words(Home(home).word_cache_dir)


def _tables_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in Home(home).word_cache_dir.glob("words-*"))


def _cli(home: Path, *args: str, input: str | None = None) -> Any:
    done = run_cli(home, *args, input=input)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def _add(home: Path, user: str, texts: list[str]) -> None:
    lines = "".join(json.dumps({"l0": text, "userId": user}) + "\n" for text in texts)
    _cli(home, "memory", "add", "--batch", "-", "--json", input=lines)


def _ids(home: Path, user: str, holding: str = "") -> list[str]:
    listed = _cli(home, "memory", "list", "--user", user, "--json").json()
    return [str(item["id"]) for item in listed if holding in item["l0"]]


def _search(home: Path, *extra: str) -> list[Any]:
    found = _cli(home, "memory", "search", QUERY, "--json", "--local", *extra).json()
    return list(found["results"])


@pytest.fixture(scope="module")
def filled_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home of Alice's and Bob's memories whose table a search of Alice's filled, built once."""
    home = tmp_path_factory.mktemp("filled") / "home"
    _add(home, "alice", ALICE)
    _add(home, "bob", BOB)
    assert _search(home, "--user", "alice")
    assert _words(home) >= ALICE_WORDS
    return home


@pytest.fixture
def filled(filled_once: Path, tmp_path: Path) -> Path:
    """This test's own copy of that home (the tests purge, delete and search in it)."""
    return copy_home(filled_once, tmp_path / "home")


def test_a_search_fills_the_homes_own_table_in_private_files(filled: Path) -> None:
    words = Home(filled).word_cache_dir
    tables = sorted(words.glob("words-*.sqlite"))
    assert tables and _mode(words) == 0o700 and all(_mode(t) == 0o600 for t in tables)
    assert _mode(Home(filled).cache_dir) == 0o700
    assert words.parent.parent == filled and words != Path(SHARED_MODEL_CACHE)


def test_a_purge_of_the_person_empties_the_table_to_the_last_byte(filled: Path) -> None:
    report = _cli(filled, "memory", "purge", "--user", "alice", "--yes", "--json").json()
    assert report["purged"] == 2 and report["left"] == []
    assert _words(filled) == set()
    held = _tables_bytes(filled)
    assert held and not any(word.encode() in held for word in ALICE_WORDS)  # freed pages overwritten
    assert _mode(Home(filled).word_cache_dir / word_table.FORGOTTEN) == 0o600
    _search(filled)  # what is searched now is Bob's alone
    assert _words(filled) and ALICE_WORDS.isdisjoint(_words(filled))


def test_deleting_a_memory_empties_the_table(filled: Path) -> None:
    badminton = _ids(filled, "alice", "badminton")[0]
    done = _cli(filled, "memory", "delete", badminton, "--json").json()
    assert done == {"deleted": badminton}
    assert _words(filled) == set()
    assert _search(filled, "--user", "alice")  # the table is filled again, without the deleted memory's
    assert {"money", "boat"} <= _words(filled) and "badminton" not in _words(filled)


def test_a_note_removed_from_the_workspace_empties_the_table(tmp_path: Path) -> None:
    home = tmp_path / "home"
    notes = home / "agents" / "main" / "workspace"
    (notes / "memory").mkdir(parents=True)
    (notes / "MEMORY.md").write_text("# Memory\n\n- User is saving money for a sailing boat\n")
    (notes / "memory" / "hobbies.md").write_text("# Hobbies\n\n- User plays badminton on Tuesday nights\n")
    assert _search(home)  # indexes the notes, then searches them
    assert _words(home) >= ALICE_WORDS
    (notes / "memory" / "hobbies.md").unlink()
    assert _search(home)  # the next search's sync removes the note, and its words with the tables'
    assert "badminton" not in _words(home) and {"money", "boat"} <= _words(home)


def test_two_homes_never_share_a_table(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    _add(one, "alice", ALICE)
    _add(two, "bob", ["User is saving money for a new piano", "User walks the dog on Sunday mornings"])
    assert _search(one) and _search(two)
    assert "badminton" in _words(one) and "badminton" not in _words(two)
    assert "piano" in _words(two) and "piano" not in _words(one)
    _cli(one, "memory", "purge", "--user", "alice", "--yes")
    assert _words(one) == set() and "piano" in _words(two)  # a purge of one home leaves the other's


def test_a_purge_and_a_delete_through_the_running_gateway_forget_their_words(filled: Path) -> None:
    """The gateway's warm-up walks the stores again after each (search/legs/word_warmup.py), so the table is
    not left empty: it ends holding the words of what is left, and never again those forgotten."""
    left = set(neighbours.dictionary_words(BOB[0]))
    boat = "User is saving money for a sailing boat"
    with echo_server() as fake:
        write_config(filled, fake, memory={"extraction": {"enabled": False}})
        with running_gateway(filled) as gw:
            report = _cli(filled, "memory", "purge", "--user", "alice", "--yes", "--json").json()
            assert report["via"] == "gateway" and report["left"] == []
            assert ALICE_WORDS.isdisjoint(_words(filled))
            until(lambda: _words(filled) == left)
            _add(filled, "bob", [boat])
            with gw.ws() as conn:  # the gateway's own search keeps its words in the home's table
                found = request(conn, "memory.search", {"query": QUERY, "filterUserId": "bob"})
                assert found["ok"] and found["payload"]["results"], found
                assert "boat" in _words(filled)
                done = request(conn, "memory.delete", {"id": _ids(filled, "bob", "boat")[0]})
            assert done["ok"], done
            forgotten = set(neighbours.dictionary_words(boat)) - left
            assert forgotten == {"saving", "money", "sailing", "boat"}
            assert forgotten.isdisjoint(_words(filled))
            until(lambda: _words(filled) == left)  # the delete woke the warm-up: what is left, warmed again


def test_a_batch_search_keeps_its_words_and_gives_the_same_results_again(filled: Path) -> None:
    lines = json.dumps({"query": QUERY, "userId": "alice"}) + "\n"
    runs = []
    for _ in range(2):  # the second process reads every word from the table
        out = _cli(filled, "memory", "search", "--batch", "-", input=lines).stdout.splitlines()
        runs.append([(r["id"], r["score"]) for r in json.loads(out[0])["results"]])
    assert runs[0] and runs[0] == runs[1]
    assert runs[0] == [(r["id"], r["score"]) for r in _search(filled, "--user", "alice")]
    _cli(filled, "memory", "purge", "--user", "alice", "--yes")
    assert _words(filled) == set()


def test_a_table_that_cannot_be_emptied_is_named_and_the_delete_fails(filled: Path) -> None:
    stuck = Home(filled).word_cache_dir / "words-0000000000000000.sqlite"
    stuck.mkdir()  # neither a database nor a file that can be removed
    first = _ids(filled, "alice")[0]
    done = run_cli(filled, "memory", "delete", first)
    assert done.returncode != 0 and str(stuck) in done.stderr
    assert "badminton" not in _words_but(filled, stuck)  # the other tables were emptied all the same
    purged = run_cli(filled, "memory", "purge", "--user", "alice", "--yes", "--json")
    assert purged.returncode == 1 and str(stuck) in json.loads(purged.stdout)["left"]


def _words_but(home: Path, skip: Path) -> set[str]:
    found: set[str] = set()
    for path in Home(home).word_cache_dir.glob("words-*.sqlite"):
        if path != skip:
            conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
            conn.setbusytimeout(10_000)  # a running gateway may be writing the table at this moment
            found |= {str(row[0]) for row in conn.execute("SELECT word FROM words")}
            conn.close()
    return found


# ---------------------------------------------------------------------------------------------------------
# Tables another process holds, and a search that overlaps a purge


def _unit(seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).standard_normal(4).astype(np.float32)
    return vector / np.linalg.norm(vector)


_HOLDER = """
import sys, time
import apsw
conn = apsw.Connection(sys.argv[1])
conn.execute("BEGIN IMMEDIATE")
conn.execute("INSERT OR REPLACE INTO words SELECT 'held', vector, digest FROM words LIMIT 1")
print("holding", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
"""


def _hold(path: Path, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(path), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "holding"
    return proc


def _table(directory: Path) -> WordTable:
    table = WordTable(table_path(directory, "key-a"), "key-a", 4)
    table.write({"money": _unit(1), "cash": _unit(2)})
    table.close()
    return table


def test_a_purge_waits_for_a_table_another_process_is_writing(tmp_path: Path) -> None:
    table = _table(tmp_path)
    holder = _hold(table.path, 1.5)
    try:
        started = time.monotonic()
        assert forget_words(tmp_path) == []
        assert time.monotonic() - started >= 1.0  # it waited for the writer, then emptied the table
    finally:
        holder.wait(30)
    assert table.read(["money", "cash", "held"]) == {}  # the writer's row went too


def test_a_table_held_past_the_wait_is_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(word_table, "PURGE_WAIT_S", 0.3)
    monkeypatch.setattr(word_table, "PURGE_BUSY_MS", 100)
    table = _table(tmp_path)
    reader = WordTable(table.path, "key-a", 4)  # a process that keeps the table open, a gateway say
    assert set(reader.read(["money"])) == {"money"}
    holder = _hold(table.path, 30)
    try:
        assert forget_words(tmp_path) == []
        assert not table.path.exists()
        assert reader.read(["money"]) == {}  # it opens the new file, not the removed one it had open
    finally:
        holder.kill()
        holder.wait(10)
    assert table.read(["money"]) == {}  # a new, empty table
    table.write({"money": _unit(1)})
    assert set(table.read(["money"])) == {"money"}


def test_forgetting_an_empty_or_missing_directory_leaves_a_token(tmp_path: Path) -> None:
    words = tmp_path / "cache" / "words"
    before = WordTables.now(words)
    assert before.token == "" and forget_words(words) == []
    assert not before.current() and WordTables.now(words).current()
    assert _mode(words) == 0o700 and _mode(words / word_table.FORGOTTEN) == 0o600


def test_a_file_in_place_of_a_table_is_removed(tmp_path: Path) -> None:
    junk = table_path(tmp_path, "key-a")
    junk.write_bytes(b"not a database" * 100)
    assert forget_words(tmp_path) == [] and not junk.exists()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryService]:
    svc = service_for(Path(tmp_path_factory.mktemp("words-privacy")) / "home")
    yield svc
    svc.close()


def _models(service: MemoryService) -> dict[str, Any]:
    embedder: Any = service.embedder()
    return {"en": embedder.english, "zh": embedder.multilingual}


def test_a_search_that_began_before_a_purge_keeps_no_words_after_it(
    service: MemoryService, tmp_path: Path
) -> None:
    vectors = neighbours.WordVectors(_models(service))  # type: ignore[arg-type]
    began = WordTables.now(tmp_path)  # the search reads its candidates...
    forget_words(tmp_path)  # ...a purge removes them...
    found = vectors.of(["money", "boat"], began)  # ...and the search compares their words
    assert set(found) == {"money", "boat"}  # the search still gets its answer
    assert not list(tmp_path.glob("words-*.sqlite")) or _table_rows(tmp_path) == 0
    embedded = vectors.embedded
    vectors.of(["money"], WordTables.now(tmp_path))
    assert vectors.embedded == embedded + 1  # not kept in memory either


def _table_rows(directory: Path) -> int:
    total = 0
    for path in directory.glob("words-*.sqlite"):
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
        conn.setbusytimeout(10_000)
        total += int(conn.execute("SELECT count(*) FROM words").fetchall()[0][0])
        conn.close()
    return total


def test_a_purge_in_another_process_empties_this_process_cache(
    service: MemoryService, tmp_path: Path
) -> None:
    vectors = neighbours.WordVectors(_models(service))  # type: ignore[arg-type]
    vectors.of(["money", "boat"], WordTables.now(tmp_path))
    assert _table_rows(tmp_path) == 2
    embedded = vectors.embedded
    vectors.of(["money"], WordTables.now(tmp_path))
    assert vectors.embedded == embedded  # in memory
    forget_words(tmp_path)  # as another process's purge does
    vectors.of(["money"], WordTables.now(tmp_path))
    assert vectors.embedded == embedded + 1  # the cache was emptied: embedded again, kept again
    assert _table_rows(tmp_path) == 1


def test_a_purge_in_this_process_empties_every_word_cache(service: MemoryService) -> None:
    vectors = neighbours.word_vectors(service.embedder())
    assert vectors is not None
    vectors.of(["money"])
    assert vectors.megabytes() > 0
    service.forget_words()
    assert vectors.megabytes() == 0


def test_the_old_shared_tables_in_the_model_cache_are_removed(tmp_path: Path) -> None:
    models = tmp_path / "models"
    memory = Settings().memory
    memory = memory.model_copy(
        update={"embedding": memory.embedding.model_copy(update={"model_cache_dir": str(models)})}
    )
    service = MemoryService(Home(tmp_path / "home"), "main", memory, one_shot=True)
    old = table_path(models, "an old key")
    WordTable(old, "an old key", 4).write({"money": _unit(1)})
    try:
        tables = WordTables.now(service.home.word_cache_dir, service.model_cache_dir())
        assert not old.exists() and tables.directory == service.home.word_cache_dir
        WordTable(old, "an old key", 4).write({"money": _unit(1)})
        assert service.forget_words() == [] and not old.exists()  # a purge removes them too
    finally:
        service.close()
