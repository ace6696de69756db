"""What a warm process keeps between searches (the query-embedding worker, the context steps' caches),
and the vector leg scoring the keyword hits with the nearest rows: the same answers as a fresh search."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from openclaw_cli.memory.embedding.onnx_embedder import Embedder, QueryEmbedding
from openclaw_cli.memory.search.legs import semantic
from openclaw_cli.memory.search.pipeline import HybridSearcher, SearchRequest
from openclaw_cli.memory.search.profiles import profile_for
from openclaw_cli.memory.service import MemoryService
from openclaw_cli.memory.store.memory_store import MemoryStore
from openclaw_cli.memory.store.vectors.query import VectorFilter
from tests.memory_helpers import add, service_for

FACTS = [
    "Maya drinks oolong tea every morning before standup.",
    "Tom's sister Priya moved to Lisbon in March.",
    "The payments ledger migration is blocked on PR #4521.",
    "林伟每周三晚上打羽毛球。",
    "Prefers PostgreSQL over MySQL for anything new.",
    "Has a ginger cat named Niangao.",
    "When did the billing API outage start? It began at 3am on Friday.",
    "Assistant: Noted, I will remind you on Monday.",
]
QUERIES = ["what does Maya drink in the morning", "Priya", "PR #4521", "林伟什么时候打羽毛球", "cat"]
NOW = datetime(2026, 12, 3, 8, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = Path(tmp_path_factory.mktemp("warm"))
    service = service_for(where)
    for text in FACTS:
        add(service, text)
    service.close()
    return where


def _store(service: MemoryService) -> MemoryStore:
    return next(iter(service.existing_stores()))


def _answers(service: MemoryService, query: str) -> list[tuple[str, float]]:
    return [(h.record.l0, h.candidate.score) for h in service.search(SearchRequest(query, k=5), NOW).hits]


def test_a_warm_service_keeps_one_context_per_store_and_answers_as_a_fresh_one(home: Path) -> None:
    warm, fresh = service_for(home, warm=True), service_for(home)
    try:
        store = _store(warm)
        assert warm.searcher(store).context is warm.searcher(store).context
        assert fresh.searcher(_store(fresh)).context is not fresh.searcher(_store(fresh)).context
        for query in QUERIES * 2:  # the second time round, from the kept caches
            kept, new = _answers(warm, query), _answers(fresh, query)
            assert [text for text, _ in kept] == [text for text, _ in new]
            assert [score for _, score in kept] == pytest.approx([score for _, score in new], abs=1e-6)
        assert all(_answers(warm, query) for query in QUERIES)
    finally:
        warm.close()
        fresh.close()


class _Watched:
    """The real embedder, noting the thread each query is embedded on."""

    def __init__(self, real: Embedder) -> None:
        self.real = real
        self.threads: list[threading.Thread] = []

    def embed_query(self, text: str) -> QueryEmbedding:
        self.threads.append(threading.current_thread())
        return self.real.embed_query(text)


def test_queries_are_embedded_on_a_kept_worker_thread(home: Path) -> None:
    service = service_for(home)
    try:
        watched = _Watched(service.embedder())
        first = semantic.QueryPrefetch(watched, "what does Maya drink")  # type: ignore[arg-type]
        first.settle()
        second = semantic.QueryPrefetch(watched, "林伟什么时候打羽毛球")  # type: ignore[arg-type]
        direct = watched.real.embed_query("林伟什么时候打羽毛球")
        assert np.array_equal(second.result().vector, direct.vector)
        assert second.result().unknown_share == direct.unknown_share
        assert watched.threads[0] is watched.threads[1] is not threading.main_thread()
        assert watched.threads[0].name.startswith("query-prefetch")
    finally:
        service.close()


class _WaitsForFacts:
    """The real embedder, whose query embedding first waits (up to 10 s) for `read`: it is set when the
    search reads the keyword hits' ranking facts, so it is set in time only if that happens meanwhile."""

    def __init__(self, real: Embedder, read: threading.Event) -> None:
        self.real, self.read = real, read
        self.identity = real.identity
        self.waited: list[bool] = []

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self.real.embed_passages(texts)

    def embed_query(self, text: str) -> QueryEmbedding:
        self.waited.append(self.read.wait(10))
        return self.real.embed_query(text)


def test_the_keyword_hits_facts_are_read_while_the_query_embeds(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = service_for(home, warm=True)
    try:
        store = _store(service)
        expected = _answers(service, "oolong tea")
        read, asked = threading.Event(), []
        original = store.ranking_facts

        def ranking_facts(rowids: object) -> object:
            rows = list(rowids)  # type: ignore[call-overload]
            asked.append(rows)
            found = original(rows)
            read.set()
            return found

        monkeypatch.setattr(store, "ranking_facts", ranking_facts)
        embedder = _WaitsForFacts(service.embedder(), read)
        searcher = HybridSearcher(store, service.settings.search, embedder, warm=True)  # type: ignore[arg-type]
        result = searcher.search(SearchRequest("oolong tea", k=5), NOW)
        assert embedder.waited == [True]
        oolong = int(store.conn.execute("SELECT rowid FROM records WHERE l0 LIKE 'Maya%'").fetchone()[0])
        assert asked[0] == [oolong]  # the keyword hit, before any vector row
        assert all(oolong not in rows for rows in asked[1:])  # never asked for twice
        assert [h.record.l0 for h in result.hits] == [text for text, _ in expected]
        assert [h.candidate.score for h in result.hits] == pytest.approx([s for _, s in expected], abs=1e-6)
    finally:
        service.close()


def test_the_vector_leg_scores_the_keyword_hits_with_the_nearest_rows(home: Path) -> None:
    service = service_for(home, warm=True)
    try:
        store = _store(service)
        matrix = store.vector_matrix()
        profile = profile_for(store.storage.vector_identity(), service.settings.search)
        query = service.embedder().embed_query("tea in the morning")
        where = VectorFilter(None, (), ())
        nearest = semantic.candidates(matrix, query, profile, 1, where)
        every = [int(r[0]) for r in store.conn.execute("SELECT rowid FROM records ORDER BY rowid")]
        others = [rowid for rowid in every if rowid not in nearest]
        assert others
        missing = max(every) + 1000  # no such row: left out, as a row without a vector is
        together = semantic.candidates(matrix, query, profile, 1, where, also=[*others, missing])
        assert list(together) == [*nearest, *others]
        alone = semantic.leg_cosines(query.vector, matrix.rows(others), profile.legs)
        for rowid in others:
            assert together[rowid] == pytest.approx(alone[rowid], abs=1e-6)
        for rowid, legs in nearest.items():
            assert together[rowid] == pytest.approx(legs, abs=1e-6)
    finally:
        service.close()


def test_indexed_terms_are_the_keyword_index_s_own_and_leave_deleted_memories_out(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    try:
        ids = [add(service, text) for text in FACTS]
        store = _store(service)
        gone = int(store.conn.execute("SELECT rowid FROM records WHERE id = ?", (ids[0],)).fetchone()[0])
        assert store.storage.indexed_terms([gone])[gone][0]
        service.delete(ids[0])
        rowids = [int(r[0]) for r in store.conn.execute("SELECT rowid FROM records ORDER BY rowid")]
        through_index = {
            int(rowid): (str(l0), str(l1 or ""))
            for rowid, l0, l1 in store.conn.execute("SELECT rowid, l0, l1 FROM records_fts")
        }
        found = store.storage.indexed_terms(rowids)
        assert found == through_index
        assert len(found) == len(FACTS) - 1 and len(rowids) == len(FACTS)
        assert gone in rowids and gone not in found
    finally:
        service.close()


def test_term_counts_are_kept_until_this_or_another_connection_writes(tmp_path: Path) -> None:
    reader, writer = service_for(tmp_path), service_for(tmp_path)
    try:
        add(reader, "Maya drinks oolong tea every morning.")
        storage = _store(reader).storage
        assert storage.document_counts(["oolong", "nosuchterm"]) == {"oolong": 1}
        size = storage.store_size()
        add(reader, "Oolong again, this time iced.")  # this connection's own write
        assert storage.document_counts(["oolong"]) == {"oolong": 2}
        assert storage.store_size() > size
        add(writer, "A third oolong, from another process's connection.")
        assert storage.document_counts(["oolong", "nosuchterm"]) == {"oolong": 3}
        assert storage.store_size() == _store(writer).storage.store_size()
        assert storage.document_counts([]) == {}
    finally:
        reader.close()
        writer.close()
