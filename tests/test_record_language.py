"""A memory's language is that of its L0, the text whose vector is stored, and a dialogue turn's is that
of what was said, not of its speaker label ("User: 准备换跑鞋" is Chinese): stored that way, migrated that
way in older databases, and searched that way, so an English question finds a Chinese turn. Real
databases and the default local models."""

from __future__ import annotations

from pathlib import Path

from openclaw_cli.memory.search.pipeline import SearchRequest
from openclaw_cli.memory.store.sqlite import vec
from openclaw_cli.memory.store.sqlite.connection import open_db
from tests.memory_helpers import add, service_for

TURNS = [
    "User: 女儿的钢琴课从周四晚上改到周日下午三点。",
    "User: The piano tuner is coming to the flat next month.",
    "User: My sister's wedding is on October 18 in Shenzhen.",
    "User: Booked the dentist for a cleaning on Tuesday afternoon.",
    "Assistant: Noted, the piano tuner comes next month.",
    "User: Duoduo dropped the petals all in one spot though.",
]


def _languages(path: Path) -> dict[str, str]:
    conn = open_db(path)
    try:
        return {str(l0): str(language) for l0, language in conn.execute("SELECT l0, language FROM records")}
    finally:
        conn.close()


def test_a_labelled_chinese_turn_is_stored_as_chinese(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    add(service, TURNS[0])
    add(service, "User: 准备换 Hoka Clifton 9。")
    add(service, "Assistant: Noted.")
    path = service.db_path("user")
    service.close()
    assert _languages(path) == {
        TURNS[0]: "zh",
        "User: 准备换 Hoka Clifton 9。": "mixed",
        "Assistant: Noted.": "en",
    }


def test_the_language_is_that_of_l0_whatever_l1_says(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    add(service, "喜欢喝拿铁，不加糖。", l1="Usually an oat-milk latte from the place downstairs.")
    add(service, "Prefers a latte without sugar.", l1="楼下那家的燕麦拿铁。")
    path = service.db_path("user")
    service.close()
    assert _languages(path) == {"喜欢喝拿铁，不加糖。": "zh", "Prefers a latte without sugar.": "en"}


def test_an_english_question_finds_a_chinese_turn(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    for text in TURNS:
        add(service, text)
    hits = service.search(SearchRequest("when are my daughter's piano lessons?")).hits
    service.close()
    assert hits and hits[0].record.l0 == TURNS[0]


def test_an_older_database_gets_its_languages_migrated(tmp_path: Path) -> None:
    service = service_for(tmp_path)
    for text in (TURNS[0], TURNS[1]):
        add(service, text)
    add(service, "女儿叫朵朵，今年六岁。", l1="Duoduo starts primary school in September.")
    path = service.db_path("user")
    service.close()
    conn = open_db(path)  # as written before: the turn and the fact with an English L1 read as mixed
    conn.execute(
        "UPDATE records SET language = 'mixed' WHERE l0 IN (?, ?)", (TURNS[0], "女儿叫朵朵，今年六岁。")
    )
    conn.execute("DELETE FROM schema_migrations WHERE name = '0009_language_of_l0'")
    history = conn.execute("SELECT count(*) FROM history").fetchone()[0]
    conn.close()
    assert _languages(path)[TURNS[0]] == "zh"
    assert _languages(path) == {TURNS[0]: "zh", TURNS[1]: "en", "女儿叫朵朵，今年六岁。": "zh"}
    conn = open_db(path)
    try:  # a derived column, like the keyword index: no history row for it
        assert conn.execute("SELECT count(*) FROM history").fetchone()[0] == history
    finally:
        conn.close()


def _stored_vectors(path: Path) -> dict[str, bytes]:
    conn = open_db(path)
    try:
        table = vec.current_table(conn)
        return {
            str(l0): bytes(blob)
            for l0, blob in conn.execute(
                f"SELECT r.l0, v.embedding FROM records r JOIN {table} v USING (rowid)"
            )
        }
    finally:
        conn.close()


def test_the_migration_gives_an_older_turn_the_vector_a_new_store_gives_it(tmp_path: Path) -> None:
    """Before, the English model embedded "User: 女儿的…" as text it could read (label and unknown
    tokens); a Chinese turn's English half is now the constant for unread text, as in a new store."""
    texts = (TURNS[0], TURNS[1])
    fresh = service_for(tmp_path / "fresh")
    for text in texts:
        add(fresh, text)
    expected = _stored_vectors(fresh.db_path("user"))
    fresh.close()

    older = service_for(tmp_path / "older")
    for text in texts:
        add(older, text)
    path = older.db_path("user")
    older.close()
    conn = open_db(path)  # as written before: the turn's English half from another English text
    table = vec.current_table(conn)
    rowid = {str(l0): int(r) for r, l0 in conn.execute("SELECT rowid, l0 FROM records")}
    turn, english = rowid[texts[0]], rowid[texts[1]]
    mixed = vec.read(conn, table, [turn])[turn].copy()
    mixed[:384] = vec.read(conn, table, [english])[english][:384]
    scope, user_id, category = conn.execute(
        "SELECT scope, user_id, category FROM records WHERE rowid = ?", (turn,)
    ).fetchone()
    vec.upsert(conn, table, turn, mixed, (scope, user_id or "", category))
    conn.execute("UPDATE records SET language = 'mixed' WHERE rowid = ?", (turn,))
    conn.execute("DELETE FROM schema_migrations WHERE name = '0009_language_of_l0'")
    before = bytes(conn.execute(f"SELECT embedding FROM {table} WHERE rowid = ?", (turn,)).fetchone()[0])
    conn.close()
    assert before != expected[texts[0]]
    assert _stored_vectors(path) == expected  # opening it migrated it
