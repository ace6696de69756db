"""The background warm-up of the home's word tables (memory/search/legs/word_warmup.py): every dictionary word
of the stores' memories embedded once and kept, resumed where it stopped, started again after a purge,
waiting while a turn or search runs; and a real gateway running it once ready."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.core.paths import Home
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.embedding.word_table import forget_words, forgotten_token
from openclaw_cli.memory.search.legs import neighbours, word_warmup
from openclaw_cli.memory.search.legs.word_warmup import Source, WordWarmUp, read_marks
from openclaw_cli.memory.service import MemoryService
from tests.conftest import run_cli
from tests.gateway_helpers import echo_server, request, running_gateway, until, write_config
from tests.memory_helpers import service_for, table_words

TEXTS = [
    "User is saving money for a sailing boat",
    "User plays badminton on Tuesday nights",
    "用户喜欢喝绿茶",
]


def _expected(texts: list[str]) -> set[str]:
    return {w for text in texts for w in neighbours.dictionary_words(text)}


@pytest.fixture
def service(tmp_path: Path) -> Iterator[MemoryService]:
    svc = service_for(tmp_path / "home")
    for text in TEXTS:
        svc.add(NewMemory(l0=text))
    yield svc
    svc.close()


def _warmup(service: MemoryService, busy: Any = lambda: False) -> WordWarmUp:
    embedder: Any = service.embedder()
    vectors = neighbours.WordVectors({"en": embedder.english, "zh": embedder.multilingual})
    return WordWarmUp(vectors, service.home.word_cache_dir, busy)


def _sources(service: MemoryService) -> list[Source]:
    return [Source(store, nullcontext()) for store in service.existing_stores()]


def test_a_pass_keeps_every_dictionary_word_of_the_memories(service: MemoryService) -> None:
    warmup = _warmup(service)
    assert warmup.run_pass(_sources(service))
    expected = _expected(TEXTS)
    assert {"money", "sailing", "badminton", "绿茶"} <= expected
    assert table_words(service.home.word_cache_dir) == expected
    assert warmup.embedded == len(expected)


def test_a_later_pass_resumes_and_takes_only_new_memories(service: MemoryService) -> None:
    assert _warmup(service).run_pass(_sources(service))
    again = _warmup(service)  # another process: nothing in memory, the marks on disk
    assert again.run_pass(_sources(service)) and again.embedded == 0
    service.add(NewMemory(l0="User rents a canoe every summer"))
    assert again.run_pass(_sources(service))
    new = _expected(["User rents a canoe every summer"]) - _expected(TEXTS)
    assert again.embedded == len(new) + 1  # and one word read back, embedded again to check the table
    assert "canoe" in table_words(service.home.word_cache_dir)


def test_a_deleted_memory_gives_no_words(service: MemoryService) -> None:
    record, _ = service.add(NewMemory(l0="User collects porcelain teapots"))
    service.delete(record.id)
    assert _warmup(service).run_pass(_sources(service))
    assert "porcelain" not in table_words(service.home.word_cache_dir)


def test_after_a_purge_every_store_is_walked_again(service: MemoryService) -> None:
    words = service.home.word_cache_dir
    assert _warmup(service).run_pass(_sources(service))
    forget_words(words)
    assert read_marks(words, "") != {}  # done before the purge...
    assert table_words(words) == set() and read_marks(words, forgotten_token(words)) == {}  # ...not after
    warmup = _warmup(service)
    assert warmup.run_pass(_sources(service))
    assert table_words(words) == _expected(TEXTS) and warmup.embedded == len(_expected(TEXTS))


def test_it_waits_while_busy_and_ends_when_stopped(service: MemoryService) -> None:
    busy = threading.Event()
    busy.set()
    asked = threading.Semaphore(0)  # one release per time the warm-up asked whether it may work

    def is_busy() -> bool:
        asked.release()
        return busy.is_set()

    warmup = _warmup(service, is_busy)
    done: list[bool] = []
    worker = threading.Thread(target=lambda: done.append(warmup.run_pass(_sources(service))))
    worker.start()
    # Asked three times, told "busy" each time: it has waited and asked again rather than gone on.
    assert all(asked.acquire(timeout=30) for _ in range(3))
    assert warmup.embedded == 0 and not done  # nothing while a turn or search runs
    assert table_words(service.home.word_cache_dir) == set()
    busy.clear()
    worker.join(60)
    assert done == [True] and warmup.embedded == len(_expected(TEXTS))
    held = _warmup(service, lambda: True)
    held.stop.set()
    assert held.run_pass(_sources(service)) is False and held.embedded == 0


def test_a_search_counts_as_running_while_it_runs() -> None:
    assert word_warmup.searches_running() == 0
    with word_warmup.searching():
        assert word_warmup.searches_running() == 1
    assert word_warmup.searches_running() == 0


def test_marks_of_another_purge_or_unreadable_ones_are_not_trusted(tmp_path: Path) -> None:
    (tmp_path / word_warmup.MARKS).write_text(json.dumps({"token": "a", "rows": {"x": 5}}))
    assert read_marks(tmp_path, "a") == {"x": 5}
    assert read_marks(tmp_path, "b") == {}
    (tmp_path / word_warmup.MARKS).write_text("[not marks")
    assert read_marks(tmp_path, "a") == {}


# ---------------------------------------------------------------------------------------------------------
# A real gateway


def _status(gw: Any) -> dict[str, Any]:
    with gw.ws() as conn:
        reply = request(conn, "status")
    assert reply["ok"], reply
    return dict(reply["payload"])


def test_a_running_gateway_warms_the_words_of_its_memories_and_again_after_a_purge(tmp_path: Path) -> None:
    home = tmp_path / "home"
    words = Home(home).word_cache_dir
    lines = "".join(json.dumps({"l0": text, "userId": "alice"}) + "\n" for text in TEXTS[:2])
    lines += json.dumps({"l0": "User grows tomatoes in the greenhouse", "userId": "bob"}) + "\n"
    assert run_cli(home, "memory", "add", "--batch", "-", input=lines).returncode == 0
    everything = _expected([*TEXTS[:2], "User grows tomatoes in the greenhouse"])
    with echo_server() as fake:
        write_config(home, fake, memory={"extraction": {"enabled": False}})
        with running_gateway(home) as gw:
            until(lambda: (_status(gw)["wordWarmUp"] or {}).get("passes", 0) >= 1)
            assert table_words(words) == everything
            with gw.ws() as conn:  # a memory added through the gateway is warmed by the next pass
                added = request(conn, "memory.add", {"text": "User rents a canoe every summer"})
            assert added["ok"], added
            until(lambda: "canoe" in table_words(words))
            purged = run_cli(home, "memory", "purge", "--user", "alice", "--yes", "--json")
            assert purged.returncode == 0 and json.loads(purged.stdout)["via"] == "gateway"
            left = _expected(["User grows tomatoes in the greenhouse", "User rents a canoe every summer"])
            until(lambda: table_words(words) == left)  # walked again, without Alice's words
            assert _status(gw)["wordWarmUp"]["failed"] is None
