"""The keyword index held in memory by a warm process (store/sqlite/keyword_memory.py): the same matches,
scores and order as FTS5's `ORDER BY bm25()`, never used once the database changed, built again on a
thread once the database stays unchanged."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import apsw
import pytest

from openclaw_cli.memory.search.pipeline import SearchRequest
from openclaw_cli.memory.store.sqlite import keyword
from openclaw_cli.memory.store.sqlite.connection import open_db
from openclaw_cli.memory.store.sqlite.keyword_memory import (
    REBUILD_AFTER,
    REBUILD_ROWS_PER_SEARCH,
    KeywordCache,
    KeywordMemory,
    Tokens,
)
from openclaw_cli.memory.store.sqlite.keyword_state import index_state
from openclaw_cli.memory.store.vectors.query import VectorFilter
from openclaw_cli.memory.text.analysis import query_terms
from tests.memory_helpers import add, service_for

TEXTS = [
    "Maya drinks oolong tea every morning before standup.",
    "Maya drinks oolong tea every morning before standup.",  # ties with the one above
    "Tea tea tea: Maya's tea shelf holds oolong, sencha and a café au lait mug.",
    "The payments ledger migration is blocked on PR #4521 and ticket OPS-17.",
    "林伟每周三晚上打羽毛球，周五去游泳。",
    "林伟的妹妹在上海学钢琴。",
    "Café Noir on rue Saint-Denis serves the best crème brûlée.",
    "Prefers PostgreSQL 16.2 over MySQL for anything new; e-mail the DBA first.",
    "Has a ginger cat named Niangao who hates the vacuum cleaner.",
    "",
]
QUERIES = [
    "what does Maya drink in the morning",
    "tea",
    "oolong tea maya",
    "PR #4521",
    "OPS-17",
    "林伟什么时候打羽毛球",
    "钢琴",
    "cafe creme brulee",
    "Café",
    "PostgreSQL 16.2",
    "cat vacuum",
    "nothing stored matches this zebra",
]
PLAIN = VectorFilter(None, (), ())


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A memory database whose keyword index holds TEXTS (rows 1..n, each text as l0 and, for every third,
    a second text as l1), written by the store's own index writer."""
    path = tmp_path / "memory.sqlite"
    conn = open_db(path)
    with conn:
        for rowid, text in enumerate(TEXTS, start=1):
            keyword.write_row(conn, rowid, text, TEXTS[(rowid + 3) % len(TEXTS)] if rowid % 3 == 0 else None)
    conn.close()
    return path


def _reader(path: Path) -> Callable[[], apsw.Connection]:
    return lambda: open_db(path, create=False, readonly=True)


def _content(conn: apsw.Connection) -> list[tuple[int, str, str]]:
    return [
        (int(r), str(a), str(b))
        for r, a, b in conn.execute("SELECT id, coalesce(c0, ''), coalesce(c1, '') FROM records_fts_content")
    ]


def _term_lists() -> list[list[str]]:
    lists = [query_terms(q) for q in QUERIES]
    return [terms for terms in lists if terms] + [["tea", "maya", "tea"], ["zzz"]]


def test_the_copy_lists_and_counts_what_fts5_does_with_the_same_scores_and_order(db: Path) -> None:
    """The candidates of `ORDER BY bm25()`, and the document counts of FTS5's vocabulary table."""
    conn = open_db(db)
    copy = KeywordMemory.build("k", _content(conn), Tokens(conn))
    tokens = Tokens(conn)
    compared = counted = 0
    for terms in _term_lists():
        for pool in (1, 2, 3, 50):
            fts5 = keyword.bm25_candidates(conn, terms, PLAIN, pool)
            assert copy.candidates(terms, pool, tokens) == fts5, (terms, pool)
            compared += bool(fts5)
        counts = copy.document_counts(terms, tokens)
        if counts is None:  # a term of several tokens: the vocabulary table answers it
            assert any(tokens.of(t) != (t,) for t in terms)
            continue
        assert counts == keyword.document_counts(conn, terms), terms
        counted += bool(counts)
    assert compared > 20 and counted > 8  # most of the queries match something
    assert copy.document_counts(["tea", "e-mail"], tokens) is None
    assert copy.document_counts(["zzz"], tokens) == {}
    conn.close()


def test_tied_rows_keep_fts5s_rowid_order(db: Path) -> None:
    conn = open_db(db)
    copy = KeywordMemory.build("k", _content(conn), Tokens(conn))
    found = copy.candidates(["oolong"], 1, Tokens(conn))
    assert found is not None and found == keyword.bm25_candidates(conn, ["oolong"], PLAIN, 1)
    assert found[0][0] == 1  # rows 1 and 2 hold the same text: the lower rowid comes first
    conn.close()


def test_a_term_of_several_tokens_is_left_to_fts5(db: Path) -> None:
    """FTS5 searches `e-mail` as the phrase `e mail`: the copy does not answer it."""
    conn = open_db(db)
    copy = KeywordMemory.build("k", _content(conn), Tokens(conn))
    assert copy.candidates(["e-mail"], 10, Tokens(conn)) is None
    assert copy.candidates(["mail"], 10, Tokens(conn)) == keyword.bm25_candidates(conn, ["mail"], PLAIN, 10)
    conn.close()


def test_a_row_holding_a_build_mark_is_refused(db: Path) -> None:
    conn = open_db(db)
    with pytest.raises(ValueError, match="mark"):
        KeywordMemory.build("k", [(1, "tea \x00 cup", "")], Tokens(conn))
    conn.close()


def test_an_empty_index_lists_nothing(tmp_path: Path) -> None:
    conn = open_db(tmp_path / "memory.sqlite")
    copy = KeywordMemory.build("k", [], Tokens(conn))
    assert copy.candidates(["tea"], 10, Tokens(conn)) == []
    conn.close()


def test_the_cache_answers_only_for_the_state_it_was_built_at(db: Path) -> None:
    conn = open_db(db)
    cache = KeywordCache(_reader(db))
    try:
        key = keyword.state(conn)
        assert cache.document_counts(conn, key, ["tea"]) is None  # no copy yet: the vocabulary answers
        assert cache.ranked(conn, key, ["tea"], 10) is None  # the first build starts
        cache.wait()
        assert cache.ranked(conn, key, ["tea"], 10) == keyword.bm25_candidates(conn, ["tea"], PLAIN, 10)
        counts = cache.document_counts(conn, key, ["tea", "maya"])
        assert counts == keyword.document_counts(conn, ["tea", "maya"]) and counts
        with conn:
            keyword.write_row(conn, 40, "green tea with Maya", None)
        changed = keyword.state(conn)
        assert changed != key
        assert cache.ranked(conn, changed, ["tea"], 10) is None  # stale: FTS5 answers
        assert cache.document_counts(conn, changed, ["tea"]) is None
        assert not cache.building  # one search on a new state builds nothing yet
        assert cache.ranked(conn, changed, ["tea"], 10) is None  # nor two (a chat turn's)
        assert not cache.building
        assert cache.ranked(conn, changed, ["tea"], 10) is None  # the third one starts the build
        cache.wait()
        found = cache.ranked(conn, changed, ["tea"], 10)
        assert found == keyword.bm25_candidates(conn, ["tea"], PLAIN, 10)
        assert 40 in [rowid for rowid, _ in found or []]
    finally:
        cache.close()
        conn.close()


def test_the_index_state_moves_with_the_keyword_index_alone(db: Path) -> None:
    """index_state (the copy's key): any connection's change to the index moves it, another table's
    write does not, and inside a transaction (own changes not yet in FTS5's structure) it is never a
    committed state's."""
    conn, other = open_db(db), open_db(db)
    try:
        key, before = index_state(conn), keyword.state(conn)
        with other:  # a write beside the index, as a turn's FSRS reviews are
            other.execute("INSERT INTO meta(key, value) VALUES ('probe', '1')")
        assert keyword.state(conn) != before
        assert index_state(conn) == key
        with conn:
            keyword.write_row(conn, 41, "black tea", None)
            inside = index_state(conn)
            assert inside != key
        after = index_state(conn)
        assert after not in (key, inside)
        with other:
            keyword.delete_row(other, 41)
        assert index_state(conn) not in (key, inside, after)
    finally:
        conn.close()
        other.close()


def test_a_larger_copy_waits_for_more_searches_before_it_is_built_again(tmp_path: Path) -> None:
    """A stale copy of n rows is built again once n // REBUILD_ROWS_PER_SEARCH searches (at least
    REBUILD_AFTER) saw one state: a build costs more the more rows it reads."""
    path = tmp_path / "memory.sqlite"
    conn = open_db(path)
    with conn:
        for rowid in range(1, 97):
            keyword.write_row(conn, rowid, f"tea note number {rowid}", None)
    cache = KeywordCache(_reader(path))
    try:
        cache.ranked(conn, index_state(conn), ["tea"], 10)  # the first copy: at once
        cache.wait()
        with conn:
            keyword.write_row(conn, 97, "green tea", None)
        changed = index_state(conn)
        wanted = max(REBUILD_AFTER, 96 // REBUILD_ROWS_PER_SEARCH)
        assert wanted > REBUILD_AFTER
        for _ in range(wanted - 1):
            assert cache.ranked(conn, changed, ["tea"], 10) is None
            assert not cache.building
        assert cache.ranked(conn, changed, ["tea"], 10) is None  # this one starts the build
        cache.wait()
        assert cache.ranked(conn, changed, ["tea"], 10) == keyword.bm25_candidates(conn, ["tea"], PLAIN, 10)
    finally:
        cache.close()
        conn.close()


def test_another_connections_commit_makes_the_copy_stale(db: Path) -> None:
    conn, other = open_db(db), open_db(db)
    cache = KeywordCache(_reader(db))
    try:
        key = keyword.state(conn)
        cache.ranked(conn, key, ["tea"], 10)
        cache.wait()
        with other:
            keyword.delete_row(other, 1)
        assert keyword.state(conn) != key
        assert cache.ranked(conn, keyword.state(conn), ["tea"], 10) is None
    finally:
        cache.close()
        conn.close()
        other.close()


def test_a_write_after_every_turns_two_searches_builds_no_copy_then_three_searches_do(db: Path) -> None:
    """A chat turn searches twice and then writes (its FSRS hits): a copy built after its two searches
    would be stale before any search read it, so none is built until three searches saw one state."""
    conn = open_db(db)
    cache = KeywordCache(_reader(db))
    try:
        assert cache.ranked(conn, keyword.state(conn), ["tea"], 10) is None  # the first copy: at once
        cache.wait()
        for turn in range(3):
            with conn:
                conn.execute("UPDATE records_fts_content SET c1 = c1 WHERE id = 1")  # a write between turns
            key = keyword.state(conn)
            assert cache.ranked(conn, key, ["tea"], 10) is None
            assert cache.ranked(conn, key, ["tea"], 10) is None
            assert not cache.building, turn
        assert cache.ranked(conn, key, ["tea"], 10) is None  # a third search at the same state
        cache.wait()
        assert cache.ranked(conn, key, ["tea"], 10) == keyword.bm25_candidates(conn, ["tea"], PLAIN, 10)
    finally:
        cache.close()
        conn.close()


def test_a_failed_build_is_not_tried_again_for_the_same_state(tmp_path: Path, db: Path) -> None:
    conn = open_db(db)
    cache = KeywordCache(_reader(tmp_path / "no-such.sqlite"))
    try:
        key = keyword.state(conn)
        assert cache.ranked(conn, key, ["tea"], 10) is None
        cache.wait()
        assert cache.ranked(conn, key, ["tea"], 10) is None
        assert not cache.building
    finally:
        cache.close()
        conn.close()


def test_a_filtered_search_through_the_copy_lists_what_fts5_lists(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    for n, text in enumerate(TEXTS[:9]):
        add(service, text, user_id="ann" if n % 2 else "bob")
    service.close()
    path = next(tmp_path.rglob("memory.sqlite"))
    conn = open_db(path)
    cache = KeywordCache(_reader(path))
    try:
        key = keyword.state(conn)
        cache.ranked(conn, key, ["tea"], 10)
        cache.wait()
        for where in (VectorFilter("ann", (), ()), VectorFilter("bob", (), ()), PLAIN):
            for terms in _term_lists():
                fts5 = keyword.bm25_candidates(conn, terms, where, 2)
                copy = keyword.bm25_candidates(
                    conn, terms, where, 2, lambda t, fetch: cache.ranked(conn, key, t, fetch)
                )
                assert copy == fts5, (where, terms)
    finally:
        cache.close()
        conn.close()


def test_a_warm_service_answers_as_a_fresh_one_before_and_after_a_write(tmp_path: Path) -> None:
    seed = service_for(tmp_path)
    for text in TEXTS[:9]:
        add(seed, text)
    seed.close()
    now = datetime(2026, 12, 3, 8, 0, tzinfo=UTC)
    warm = service_for(tmp_path, warm=True)

    def same_answers() -> None:
        fresh = service_for(tmp_path)
        try:
            for query in QUERIES:
                kept = [
                    (h.record.id, h.candidate.score) for h in warm.search(SearchRequest(query, k=5), now).hits
                ]
                new = [
                    (h.record.id, h.candidate.score)
                    for h in fresh.search(SearchRequest(query, k=5), now).hits
                ]
                assert [i for i, _ in kept] == [i for i, _ in new], query
                # the vector leg's float32 sums differ in the last digits between the warm matrix and vec0
                assert [s for _, s in kept] == pytest.approx([s for _, s in new], abs=1e-6)
        finally:
            fresh.close()

    try:
        warm.search(SearchRequest("tea", k=5), now)  # starts the copy's build
        storage = next(iter(warm.existing_stores())).storage
        cache = storage._in_memory  # noqa: SLF001
        assert cache is not None

        def copy_answers() -> bool:
            return cache.ranked(storage.conn, index_state(storage.conn), ["tea"], 5) is not None

        cache.wait()
        same_answers()
        assert copy_answers()
        # A turn's FSRS reviews write to the database but not to the keyword index: the copy stays usable.
        shown = [hit.record.id for hit in warm.search(SearchRequest("tea", k=3), now).hits]
        assert shown and warm.record_hits(shown, now) == shown
        assert copy_answers()
        same_answers()
        add(warm, "Maya switched from oolong tea to matcha in November.")
        assert not copy_answers()
        same_answers()  # the first two searches after the write start nothing; the third builds again
        cache.wait()
        same_answers()
        assert copy_answers()
    finally:
        warm.close()


def test_threads_scoring_at_once_each_list_what_fts5_lists(db: Path) -> None:
    """Each thread scores in buffers of its own, left all zeros after every query."""
    import threading

    conn = open_db(db)
    copy = KeywordMemory.build("k", _content(conn), Tokens(conn))
    expected = {tuple(terms): keyword.bm25_candidates(conn, terms, PLAIN, 50) for terms in _term_lists()}
    conn.close()
    failures: list[object] = []

    def search_repeatedly() -> None:
        reader = open_db(db, create=False, readonly=True)
        tokens = Tokens(reader)
        try:
            for _ in range(30):
                for terms, fts5 in expected.items():
                    found = copy.candidates(list(terms), 50, tokens)
                    if found != fts5:
                        failures.append((terms, found, fts5))
            score, listed = copy._buffers()
            if score.any() or listed.any():
                failures.append("buffers left dirty")
        finally:
            reader.close()

    threads = [threading.Thread(target=search_repeatedly) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
