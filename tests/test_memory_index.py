"""Derived indexes: check, incremental repair, atomic rebuild, pending vectors and embedder changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_cli.config.loading import Settings
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.embedding.onnx_embedder import EmbeddingUnavailable
from openclaw_cli.memory.search.pipeline import SearchRequest
from openclaw_cli.memory.store.sqlite import vec
from tests import fake_openai as fake_server
from tests.memory_helpers import add, api_settings, service_for

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

fake_openai = fake_server.fake_openai


def _store(service):  # type: ignore[no-untyped-def]
    return service.store(service.db_path("user"))


def test_check_reports_and_repair_fixes_each_kind_of_drift(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    ids = [add(service, f"memory about topic {n}") for n in range(4)]
    service.delete(ids[3])  # a tombstone
    store = _store(service)
    conn = store.conn
    table = vec.current_table(conn)
    rowid = lambda rid: conn.execute("SELECT rowid FROM records WHERE id = ?", (rid,)).fetchone()[0]  # noqa: E731
    conn.execute("DELETE FROM records_fts WHERE rowid = ?", (rowid(ids[0]),))  # missing keyword row
    conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid(ids[1]),))  # missing vector
    conn.execute("INSERT INTO records_fts(rowid, l0, l1) VALUES (9999, 'orphan', '')")  # orphan keyword row
    report = service.check_indexes()[0]
    assert (report.fts_missing, report.fts_orphans, report.vectors_missing, report.tombstones) == (1, 1, 1, 1)
    assert not report.ok and len(report.problems()) == 3
    repaired = service.repair_indexes()[0]
    assert (repaired.fts_added, repaired.fts_removed, repaired.vectors_added, repaired.tombstones_purged) == (
        1,
        1,
        1,
        1,
    )
    after = service.check_indexes()[0]
    assert after.ok and after.tombstones == 0 and after.records == 3
    assert service.search(SearchRequest("topic 0", mode="bm25")).hits[0].record.id == ids[0]
    service.close()


def test_a_failing_api_embedder_loses_nothing_and_index_fills_later(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    settings = api_settings(fake_openai.url)
    service = service_for(tmp_path, settings)
    fake_openai.fail_next(1, status=500)
    rid = add(service, "the vpn gateway is vpn-gw-07.example.net")
    record = service.get(rid)
    assert record.vector_status == "pending"
    hits = service.search(SearchRequest("vpn gateway", mode="bm25")).hits
    assert [h.record.id for h in hits] == [rid]
    assert service.check_indexes()[0].vectors_pending == 1
    report = service.repair_indexes()[0]
    assert report.vectors_added == 1 and report.still_pending == 0
    assert service.get(rid).vector_status == "ready"
    assert service.search(SearchRequest("vpn gateway", mode="vector")).hits[0].record.id == rid
    service.close()


def test_changing_the_embedder_is_detected_and_rebuild_switches(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    local = service_for(tmp_path)
    rid = add(local, "prefers dark mode in every editor")
    local.close()
    api = service_for(tmp_path, api_settings(fake_openai.url))
    result = api.search(SearchRequest("dark mode editor"))
    assert any("re-embed" in w or "rebuild" in w for w in result.warnings)
    assert result.hits[0].record.id == rid and result.hits[0].candidate.vector_rank is None
    check = api.check_indexes()[0]
    assert check.embedder_mismatch and any("embedder changed" in p for p in check.problems())
    rebuilt = api.rebuild_indexes()[0]
    assert rebuilt.records == 1 and rebuilt.embedder["provider"] == "litellm"
    assert vec.stored_identity(_store(api).conn)["dimensions"] == 64
    after = api.search(SearchRequest("dark mode editor", explain=True))
    assert after.warnings == [] and after.hits[0].candidate.vector_rank == 1
    assert api.check_indexes()[0].ok
    api.close()


def test_a_rebuild_that_fails_half_way_leaves_the_old_index_working(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    settings = api_settings(fake_openai.url)
    service = service_for(tmp_path, settings)
    records = [service.build_record(NewMemory(l0=f"note number {n} about gardening")) for n in range(300)]
    ids = service.add_many(records).ids
    store = _store(service)
    old_table = vec.current_table(store.conn)
    # The embedding cache is the stored vectors, found by text hash: forget the hashes to force real
    # embedding calls during the rebuild.
    store.conn.execute("UPDATE records SET text_hash = NULL")
    calls_before = len(fake_openai.requests)
    fake_openai.fail_next(0)

    class Flaky:
        """The real API embedder, failing once the rebuild is past its first chunk."""

        def __init__(self, inner):  # type: ignore[no-untyped-def]
            self.inner, self.identity, self.calls = inner, inner.identity, 0

        def embed_passages(self, texts):  # type: ignore[no-untyped-def]
            self.calls += 1
            if self.calls > 1:
                fake_openai.fail_next(5, status=500)
            return self.inner.embed_passages(texts)

    from openclaw_cli.memory.upkeep.index import rebuild

    with pytest.raises(EmbeddingUnavailable):
        rebuild(store, Flaky(service.embedder()))
    assert len(fake_openai.requests) > calls_before
    assert vec.current_table(store.conn) == old_table
    assert [
        n
        for (n,) in store.conn.execute(
            "SELECT name FROM sqlite_schema WHERE name GLOB 'vec_[0-9]*' AND type='table' AND sql LIKE '%vec0%'"
        )
    ] == [old_table]
    assert service.check_indexes()[0].ok
    assert store.conn.execute(f"SELECT count(*) FROM {old_table}").fetchone()[0] == 300
    # While the API still fails, search degrades to keywords with a warning instead of failing.
    degraded = service.search(SearchRequest("note number 7 gardening"))
    assert ids[7] in [h.record.id for h in degraded.hits]
    assert any("keyword results only" in w for w in degraded.warnings)
    fake_openai.fail_next(0)
    with fake_openai._lock:
        fake_openai._failures.clear()
    hits = service.search(SearchRequest("note number 7 gardening", explain=True)).hits
    assert hits and hits[0].candidate.vector_rank is not None and ids[7] in [h.record.id for h in hits]
    service.close()


def test_index_cli_check_exit_code_and_rebuild_json(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    cli("memory", "add", "alpha memory")
    cli("memory", "add", "beta memory")
    assert cli("memory", "index", "--check").returncode == 0
    db = home / "agents" / "main" / "memory" / "memory.sqlite"
    import apsw

    conn = apsw.Connection(str(db))
    conn.execute("DELETE FROM records_fts WHERE rowid = 1")
    conn.close()
    broken = cli("memory", "index", "--check", "--json")
    assert broken.returncode == 1 and broken.json()["ok"] is False
    doctor = cli("doctor", "--json")
    assert doctor.returncode == 1
    assert any(f["check"] == "memory.index" and f["severity"] == "error" for f in doctor.json()["findings"])
    repaired = cli("memory", "index", "--json")
    assert repaired.returncode == 0 and repaired.json()["repaired"][0]["ftsAdded"] == 1
    rebuilt = cli("memory", "index", "--rebuild", "--json")
    assert rebuilt.returncode == 0 and rebuilt.json()["rebuilt"][0]["records"] == 2
    assert cli("memory", "index", "--check").returncode == 0
    assert cli("doctor").returncode == 0


def test_reranker_through_litellm_reorders_results(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    settings = Settings(
        memory={
            "search": {
                "rerank": {
                    "provider": "litellm",
                    "model": "cohere/rerank-english-v3.0",
                    "apiBase": fake_openai.url.removesuffix("/v1"),
                }
            }
        }
    )
    service = service_for(tmp_path, settings)
    add(service, "green tea in the afternoon")
    best = add(service, "black coffee with oat milk every morning")
    result = service.search(SearchRequest("black coffee oat milk", explain=True))
    assert result.hits[0].record.id == best and result.hits[0].candidate.rerank_score is not None
    assert fake_openai.requests_to("/rerank")
    assert "rerank" in result.timings_ms
    service.close()


def test_an_index_from_an_older_text_analysis_is_reported_and_reanalysed(tmp_path: Path) -> None:
    from openclaw_cli.memory.store.sqlite.meta import FTS_ANALYSIS_KEY, get_meta, set_meta
    from openclaw_cli.memory.text.analysis import ANALYSIS_VERSION

    service = service_for(tmp_path)
    rid = add(service, "私はコーヒーが好きです")
    add(service, "an english memory")
    conn = _store(service).conn
    assert get_meta(conn, FTS_ANALYSIS_KEY) == str(ANALYSIS_VERSION)  # a new database is current
    # What the old analysis wrote: the whole kana sentence as one term, under no version key.
    row = conn.execute("SELECT rowid FROM records WHERE id = ?", (rid,)).fetchone()[0]
    conn.execute("UPDATE records_fts SET l0 = '私はコーヒーが好きです' WHERE rowid = ?", (row,))
    set_meta(conn, FTS_ANALYSIS_KEY, ANALYSIS_VERSION - 1)
    assert service.search(SearchRequest("コーヒー", mode="bm25")).hits == []
    report = service.check_indexes()[0]
    assert report.fts_outdated and not report.ok
    assert any("text analysis" in p for p in report.problems())
    repaired = service.repair_indexes()[0]
    assert repaired.fts_reanalysed == 2
    assert service.check_indexes()[0].ok
    assert [h.record.id for h in service.search(SearchRequest("コーヒー", mode="bm25")).hits] == [rid]
    service.close()


def test_reranker_only_scores_pairs_in_its_languages(tmp_path: Path, fake_openai) -> None:  # type: ignore[no-untyped-def]
    """An English cross-encoder hurts Chinese: by default it re-scores English query-memory pairs only."""
    rerank = {
        "provider": "litellm",
        "model": "cohere/rerank-english-v3.0",
        "apiBase": fake_openai.url.removesuffix("/v1"),
    }
    service = service_for(tmp_path, Settings(memory={"search": {"rerank": rerank}}))
    add(service, "我喜欢喝咖啡，不喜欢茶")
    add(service, "black coffee with oat milk every morning")
    chinese = service.search(SearchRequest("咖啡", explain=True))
    assert chinese.hits and all(hit.candidate.rerank_score is None for hit in chinese.hits)
    assert not fake_openai.requests_to("/rerank")
    english = service.search(SearchRequest("coffee with milk", explain=True))
    scored = {hit.record.language: hit.candidate.rerank_score for hit in english.hits}
    assert scored["en"] is not None and scored.get("zh") is None
    service.close()


def test_a_store_built_with_another_local_model_is_an_embedder_change(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    """A store from before the multilingual model (MiniLM alone) is detected; --rebuild re-embeds it."""
    old = {"OPENCLAW_MEMORY__EMBEDDING__MODEL": "all-MiniLM-L6-v2-int8"}
    assert cli("memory", "add", "我喜欢喝咖啡，不喜欢茶", env=old).returncode == 0
    check = cli("memory", "index", "--check", "--json")
    assert check.returncode == 1 and "embedder changed" in " ".join(check.json()["databases"][0]["problems"])
    searched = cli("memory", "search", "coffee", "--json").json()
    assert any("differs" in w for w in searched["warnings"])
    assert cli("memory", "index", "--rebuild").returncode == 0
    assert cli("memory", "index", "--check").returncode == 0
    found = cli("memory", "search", "coffee", "--json").json()
    assert found["results"][0]["l0"] == "我喜欢喝咖啡，不喜欢茶" and not found["warnings"]
