"""Word neighbours (search/legs/neighbours.py, the `neighbours` stage): a question's words found as their close
neighbours in the best candidates, with the packaged models on a real store. The questions are new
wordings (none is the README's, none in fixtures/paraphrase)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from openclaw_cli.config.loading import SearchSettings
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.search.legs import neighbours
from openclaw_cli.memory.search.pipeline import HybridSearcher, SearchRequest
from openclaw_cli.memory.service import MemoryService
from tests.evalset import NOW
from tests.memory_helpers import service_for

MEMORIES = [
    ("m-save", "User is saving money for a sailing boat"),
    ("m-kid", "用户的儿子在读初中"),
    ("m-job", "User works as a dentist in Leeds"),
    ("m-sport", "User plays badminton on Tuesday nights"),
    ("m-pet", "用户养了一只橘猫"),
    ("m-music", "用户的女儿在学小提琴"),
]
CASH = "where is my spare cash going?"
GRADE = "我家小孩上几年级"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryService]:
    svc = service_for(Path(tmp_path_factory.mktemp("neighbours")) / "home")
    for memory_id, text in MEMORIES:
        svc.add(NewMemory(l0=text, record_id=memory_id))
    yield svc
    svc.close()


def _found(service: MemoryService, query: str, disabled: frozenset[str] = frozenset()) -> list[str]:
    store = next(iter(service.existing_stores()))
    searcher = HybridSearcher(store, SearchSettings(), service.embedder(), warm=True, disabled=disabled)
    return [hit.record.id for hit in searcher.search(SearchRequest(query=query), NOW).hits]


@pytest.mark.parametrize(("query", "answer"), [(CASH, "m-save"), (GRADE, "m-kid")])
def test_a_paraphrase_is_found_through_its_words_neighbours(
    service: MemoryService, query: str, answer: str
) -> None:
    # "cash" is 0.70 from "money"; 小孩 is close to 儿子. Without the stage neither question gets an answer.
    assert _found(service, query)[:1] == [answer]
    assert _found(service, query, frozenset({"neighbours"})) == []


def test_explain_says_where_the_keyword_evidence_came_from(service: MemoryService) -> None:
    store = next(iter(service.existing_stores()))
    searcher = HybridSearcher(store, SearchSettings(), service.embedder(), warm=True)
    hit = searcher.search(SearchRequest(query=CASH, explain=True), NOW).hits[0]
    assert hit.candidate.context["neighbours"] == pytest.approx(hit.candidate.lexical, abs=1e-4)
    assert 0 < hit.candidate.lexical < 1


@pytest.mark.parametrize(
    "query", ["purple monkey dishwasher", "flux capacitor zebra", "snorkel banana", "随便"]
)
def test_nonsense_is_not_compared(service: MemoryService, query: str) -> None:
    assert not neighbours.applies(query, query.split(), 0.0, 4)
    # What it finds is the pipeline's business without the stage ("purple monkey dishwasher" reaches the
    # orange cat in a store of six); the stage changes none of it.
    assert _found(service, query) == _found(service, query, frozenset({"neighbours"}))


@pytest.mark.parametrize("query", ["flux capacitor zebra", "snorkel banana", "随便", "asdfgh qwerty"])
def test_nonsense_finds_nothing(service: MemoryService, query: str) -> None:
    assert _found(service, query) == []


def test_a_question_the_keywords_answer_is_not_compared() -> None:
    assert neighbours.applies(CASH, ["spare", "cash", "go"], 0.0, 4)
    assert not neighbours.applies(CASH, ["spare", "cash", "go"], neighbours.WEAK_KEYWORDS, 4)
    # a sentence needs no reference to the user
    assert neighbours.applies("colour scheme for the office screens", ["a", "b", "c", "d"], 0.2, 4)


def test_close_words_share_the_query_and_far_ones_do_not(service: MemoryService) -> None:
    vectors = neighbours.word_vectors(service.embedder())
    assert vectors is not None
    shares = neighbours.neighbour_shares(CASH, dict(enumerate(text for _, text in MEMORIES)), vectors)
    assert set(shares) == {0}  # only the savings hold a neighbour of spare, cash or going
    assert 0.1 < shares[0] < 0.5  # one word of the query's content words, weighed by its cosine


def test_words_without_a_meaning_alone_take_no_part() -> None:
    assert neighbours.word_kind("cash") == "en"
    assert neighbours.word_kind("小孩") == "zh"
    for word in ("孩", "ok", "x1", "9999", "カメラ", ""):
        assert neighbours.word_kind(word) is None, word
    assert neighbours.meaningful_words("User's friend Xyzzqw plays padel in 2024") == [
        "users",
        "friend",
        "plays",
    ]


def test_no_words_no_shares(service: MemoryService) -> None:
    vectors = neighbours.word_vectors(service.embedder())
    assert vectors is not None
    assert neighbours.neighbour_shares("", {1: "User is saving money"}, vectors) == {}
    assert neighbours.neighbour_shares("asdfgh qwerty", {1: "User is saving money"}, vectors) == {}
    assert neighbours.neighbour_shares(CASH, {}, vectors) == {}


def test_each_word_is_embedded_once_and_the_cache_is_bounded(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    vectors = neighbours.WordVectors({"en": service.embedder().english})  # type: ignore[attr-defined]
    first = vectors.of(["money", "cash", "小孩"])
    assert set(first) == {"money", "cash"}  # no model for Chinese here: left out, not guessed
    assert vectors.embedded == 2
    again = vectors.of(["cash", "money"])
    assert vectors.embedded == 2 and (again["cash"] == first["cash"]).all()
    monkeypatch.setattr(neighbours, "WORD_CACHE", 2)
    vectors.of(["boat"])  # "cash" was used least recently: dropped
    vectors.of(["money"])
    assert vectors.embedded == 3
    vectors.of(["cash"])  # embedded again
    assert vectors.embedded == 4


def test_an_embedder_without_the_two_packaged_models_has_no_word_vectors() -> None:
    assert neighbours.word_vectors(object()) is None


def test_a_deferred_embedder_is_read_through(service: MemoryService) -> None:
    # The CLI's searcher holds the embedder behind a DeferredEmbedder while a preload runs.
    from openclaw_cli.memory.embedding.deferred import DeferredEmbedder

    direct = neighbours.word_vectors(service.embedder())
    assert direct is not None
    assert neighbours.word_vectors(DeferredEmbedder(service.embedder)) is direct


def test_the_cache_reports_its_size_and_can_be_emptied(service: MemoryService) -> None:
    vectors = neighbours.WordVectors({"en": service.embedder().english})  # type: ignore[attr-defined]
    vectors.of(["money", "boat"])
    assert vectors.megabytes() == pytest.approx(2 * 384 * 4 / 1e6)
    vectors.clear()
    assert vectors.megabytes() == 0.0
    vectors.of(["money"])
    assert vectors.embedded == 3  # embedded again after the clear
