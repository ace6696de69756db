"""What a warm process keeps so a turn does not embed the same text twice (issue 54): the query vectors
of recent searches (search/legs/query_memo.py) and the transcript index's passage vectors (memory/passage_memo.py).

The embedder is the API one, on the fake OpenAI-compatible server: its requests say what was embedded.
That the injected blocks stay the same is tests/test_inject_golden.py's."""

from __future__ import annotations

from concurrent.futures import Future

import numpy as np
import pytest

from openclaw_cli.config.loading import EmbeddingSettings
from openclaw_cli.memory.cached_words import forget_cached_words
from openclaw_cli.memory.embedding.loader import create_embedder
from openclaw_cli.memory.embedding.onnx_embedder import EmbeddingUnavailable, QueryEmbedding
from openclaw_cli.memory.passage_memo import PassageMemo
from openclaw_cli.memory.search.legs import query_memo
from openclaw_cli.memory.search.legs.semantic import QueryPrefetch
from tests import fake_openai as fake_server
from tests.fake_openai import FakeOpenAI

fake_openai = fake_server.fake_openai


def _embedder(fake: FakeOpenAI):  # type: ignore[no-untyped-def]
    settings = {"provider": "litellm", "model": "openai/text-embedding-3-small", "api_base": fake.url}
    return create_embedder(EmbeddingSettings.model_validate({**settings, "max_retries": 0, "dimensions": 64}))


def _embedded(fake: FakeOpenAI) -> list[str]:
    return [text for r in fake.requests_to("/embeddings") for text in r.body["input"]]


def test_a_query_searched_again_is_embedded_once_with_the_same_vector(fake_openai: FakeOpenAI) -> None:
    embedder = _embedder(fake_openai)
    first = QueryPrefetch(embedder, "I watered the plants").result()
    again = QueryPrefetch(embedder, "I watered the plants").result()
    other = QueryPrefetch(embedder, "I watered the garden").result()
    assert _embedded(fake_openai).count("I watered the plants") == 1
    assert np.array_equal(first.vector, again.vector)
    assert np.array_equal(first.vector, embedder.embed_query("I watered the plants").vector)
    assert not np.array_equal(first.vector, other.vector)


def test_a_failed_query_embedding_is_not_kept(fake_openai: FakeOpenAI) -> None:
    embedder = _embedder(fake_openai)
    fake_openai.fail_next(1, status=500)
    with pytest.raises(EmbeddingUnavailable):
        QueryPrefetch(embedder, "my sister's wedding").result()
    found = QueryPrefetch(embedder, "my sister's wedding").result()  # tried again, and answered
    assert np.array_equal(found.vector, embedder.embed_query("my sister's wedding").vector)


def test_forgetting_words_forgets_the_kept_queries(fake_openai: FakeOpenAI, tmp_path) -> None:  # type: ignore[no-untyped-def]
    embedder = _embedder(fake_openai)
    QueryPrefetch(embedder, "the ledger migration").result()
    forget_cached_words(tmp_path / "words", tmp_path / "models")  # what a purge or a delete calls
    QueryPrefetch(embedder, "the ledger migration").result()
    assert _embedded(fake_openai).count("the ledger migration") == 2


def test_the_memo_keeps_a_bounded_number_of_texts_per_embedder(fake_openai: FakeOpenAI) -> None:
    embedder = _embedder(fake_openai)
    started: list[str] = []

    def start(text: str) -> Future[QueryEmbedding]:
        started.append(text)
        done: Future[QueryEmbedding] = Future()
        done.set_result(embedder.embed_query(text))
        return done

    for n in range(query_memo.MEMO_SIZE + 1):
        query_memo.embedding(embedder, f"text {n}", lambda n=n: start(f"text {n}"))  # type: ignore[misc]
    query_memo.embedding(embedder, "text 0", lambda: start("text 0"))  # the oldest went
    query_memo.embedding(embedder, f"text {query_memo.MEMO_SIZE}", lambda: start("kept"))
    assert started.count("text 0") == 2 and "kept" not in started


def test_the_transcript_index_embeds_a_repeated_text_once(fake_openai: FakeOpenAI) -> None:
    embedder = _embedder(fake_openai)
    memo = PassageMemo(size=3)
    first = memo.embed(embedder, ["ok", "noted", "ok"])
    second = memo.embed(embedder, ["noted", "thanks"])
    assert _embedded(fake_openai) == ["ok", "noted", "thanks"]
    direct = embedder.embed_passages(["ok", "noted", "ok", "thanks"])
    assert np.array_equal(first, direct[:3]) and np.array_equal(second, direct[[1, 3]])
    assert memo.embed(embedder, []).shape == (0, 64)
    memo.forget()
    memo.embed(embedder, ["ok"])
    assert _embedded(fake_openai)[-1:] == ["ok"]  # embedded again once forgotten
