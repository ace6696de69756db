"""The default composite embedder with the real models: which texts the English model reads, and what a
memory's vector holds when it does not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from openclaw_cli.memory.embedding.composite import CompositeEmbedder, unread_half
from openclaw_cli.memory.search.pipeline import SearchRequest
from openclaw_cli.memory.store.vector_codec import decode, encode, int8_format
from openclaw_cli.memory.writing.candidate import Candidate
from openclaw_cli.memory.writing.write_path import write_memories
from tests.memory_helpers import WIDE_GREY, add, dedup_service, service_for

ENGLISH = "Prefers dark themes in every editor and terminal."
MIXED = "Neovim 的 colorscheme 从 tokyonight 换成了 gruvbox-material。"
CHINESE = "用户更喜欢用Vim键位，连浏览器都装了 Vimium 之外的插件"
PURE_CHINESE = "每周跑步三次，一般早上六点半沿钱塘江跑。"
JAPANESE = "私はコーヒーが好きです"


@pytest.fixture(scope="module")
def composite(tmp_path_factory: pytest.TempPathFactory) -> CompositeEmbedder:
    embedder = service_for(tmp_path_factory.mktemp("composite")).embedder()
    assert isinstance(embedder, CompositeEmbedder)
    return embedder


def test_english_and_mixed_texts_get_both_models(composite: CompositeEmbedder) -> None:
    vectors = composite.embed_passages([ENGLISH, MIXED])
    english = composite.english.embed_passages([ENGLISH, MIXED])
    multilingual = composite.multilingual.embed_passages([ENGLISH, MIXED])
    # Same models, same texts, one text per run: the halves are the models' own vectors, bit for bit.
    np.testing.assert_array_equal(vectors[:, :384], english)
    np.testing.assert_array_equal(vectors[:, 384:], multilingual)


def test_texts_the_english_model_cannot_read_skip_it(composite: CompositeEmbedder) -> None:
    texts = [PURE_CHINESE, JAPANESE, ENGLISH]
    vectors = composite.embed_passages(texts)
    np.testing.assert_array_equal(vectors[0, :384], unread_half(384))
    np.testing.assert_array_equal(vectors[1, :384], unread_half(384))
    np.testing.assert_array_equal(vectors[2, :384], composite.english.embed_passages([ENGLISH])[0])
    np.testing.assert_array_equal(vectors[:, 384:], composite.multilingual.embed_passages(texts))


def test_a_vector_does_not_depend_on_its_neighbours_in_the_batch(composite: CompositeEmbedder) -> None:
    alone = composite.embed_passages([PURE_CHINESE])[0]
    together = composite.embed_passages([ENGLISH, PURE_CHINESE, MIXED])[1]
    np.testing.assert_array_equal(alone, together)


def test_query_halves_computed_side_by_side_are_each_models_own(composite: CompositeEmbedder) -> None:
    """The two models embed a query on two threads; eight queries from eight threads at once (a gateway
    serving several clients) still get exactly each model's own vector and the English unknown share."""
    from concurrent.futures import ThreadPoolExecutor

    queries = [ENGLISH, MIXED, CHINESE, PURE_CHINESE, JAPANESE, "dark mode", "咖啡", "Vim keys"]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(composite.embed_query, queries))
    for text, got in zip(queries, results, strict=True):
        english, multilingual = composite.english.embed_query(text), composite.multilingual.embed_query(text)
        np.testing.assert_array_equal(got.vector[:384], english.vector)
        np.testing.assert_array_equal(got.vector[384:], multilingual.vector)
        assert got.unknown_share == english.unknown_share


def test_the_unread_half_is_a_unit_vector_int8_keeps_and_no_sentence_resembles() -> None:
    half = unread_half(384)
    assert float(np.linalg.norm(half)) == pytest.approx(1.0, abs=1e-6)
    fmt = int8_format(896)
    stored = decode(encode(np.concatenate([half, np.zeros(512, np.float32)]), fmt), fmt)[:384]
    # Every component is the same distance from zero, so int8 rounds them all alike: the direction is exact.
    assert float(stored @ half / np.linalg.norm(stored)) == pytest.approx(1.0, abs=1e-6)
    assert float(np.linalg.norm(stored)) == pytest.approx(1.0, abs=0.02)


def test_no_sentence_resembles_the_unread_half(composite: CompositeEmbedder) -> None:
    sentences = [ENGLISH, "which colour scheme does he like for his IDE", "when was he born", "dog", "the"]
    cosines = composite.english.embed_passages(sentences) @ unread_half(384)
    # A real sentence vector spreads over hundreds of components with no sign pattern, so its dot product
    # with an alternating vector is a sum of terms that cancel: measured below 0.1 in magnitude.
    assert np.all(np.abs(cosines) < 0.2), cosines


def test_search_still_finds_chinese_memories_in_both_languages(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    running = add(service, PURE_CHINESE)
    add(service, ENGLISH)
    for query in ("他平时跑步吗", "how often does he go running"):
        hits = service.search(SearchRequest(query=query, k=3)).hits
        assert hits and hits[0].record.id == running, (query, [h.record.l0 for h in hits])


def test_dedup_still_compares_chinese_memories_by_meaning(tmp_path: Path) -> None:
    service = dedup_service(tmp_path, **WIDE_GREY | {"duplicateAbove": 0.9})
    [first] = write_memories(service, [Candidate("我喜欢喝咖啡", "preference")])
    [again] = write_memories(service, [Candidate("我很喜欢喝咖啡", "preference")])
    assert (again.action, again.record_id) == ("duplicate", first.record_id)
