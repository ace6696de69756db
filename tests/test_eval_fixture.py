"""Validate the retrieval evaluation set in fixtures/eval/.

The benchmark and the search-default tuning trust these files blindly, so every structural rule and every
rule about what counts as a correct answer is checked here rather than left to review.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

EVAL_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "eval"
MEMORIES = EVAL_DIR / "memories.jsonl"
QUERIES = EVAL_DIR / "queries.jsonl"
DISTRACTORS = EVAL_DIR / "distractors.jsonl"
CONVERSATIONS = EVAL_DIR / "conversations.jsonl"
CONVERSATION_QUERIES = EVAL_DIR / "conversation_queries.jsonl"
ROOT = EVAL_DIR.parent.parent

USERS = {"u-lin", "u-sam"}
ALL_USERS = {"u-lin", "u-sam", "u-mei", "u-hao", "u-omar"}
SCOPES = {"user", "agent"}
CATEGORIES = {"profile", "preference", "event", "case", "lesson", "insight"}
KINDS = {
    "keyword",
    "paraphrase",
    "zh-2char",
    "zh",
    "mixed",
    "identifier",
    "cross-en-zh",
    "cross-zh-en",
    "japanese",
    "nonsense",
    "other-person",
}
LANGUAGES = {"en", "zh", "mixed", "ja"}
MEMORY_KEYS = {"id", "userId", "scope", "category", "l0", "l1"}
TURN_KEYS = MEMORY_KEYS | {"session", "turn", "speaker", "ts"}
QUERY_KEYS = {"query", "expected", "userId", "kind", "language"}
CONVERSATION_QUERY_KEYS = QUERY_KEYS | {"aspect", "evidence"}
ASPECTS = {"single", "combine", "cross", "correction"}
KIND_MINIMUMS = {
    "paraphrase": 40,
    "zh-2char": 8,
    "mixed": 8,
    "identifier": 8,
    "cross-en-zh": 20,
    "cross-zh-en": 20,
    "japanese": 10,
    "nonsense": 15,
    "other-person": 20,
    "keyword": 20,
    "zh": 15,
}

CJK = re.compile(r"[\u4e00-\u9fff]")
KANA = re.compile(r"[\u3040-\u30ff]")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
# Function words only: a paraphrase may share these with its answer without giving BM25 anything to match.
STOPWORDS = {
    "a",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "by",
    "did",
    "do",
    "does",
    "for",
    "from",
    "had",
    "has",
    "he",
    "him",
    "his",
    "how",
    "in",
    "is",
    "it",
    "of",
    "on",
    "or",
    "the",
    "to",
    "was",
    "were",
    "what",
    "when",
    "where",
    "which",
    "who",
    "why",
    "with",
}


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        assert line.strip(), f"{path.name}:{number} is blank"
        row = json.loads(line)
        assert isinstance(row, dict), f"{path.name}:{number} is not a JSON object"
        rows.append(row)
    return rows


@pytest.fixture(scope="module")
def memories() -> list[dict[str, Any]]:
    return read_jsonl(MEMORIES)


@pytest.fixture(scope="module")
def queries() -> list[dict[str, Any]]:
    return read_jsonl(QUERIES)


@pytest.fixture(scope="module")
def distractors() -> list[dict[str, Any]]:
    return read_jsonl(DISTRACTORS)


@pytest.fixture(scope="module")
def turns() -> list[dict[str, Any]]:
    return read_jsonl(CONVERSATIONS)


@pytest.fixture(scope="module")
def conversation_queries() -> list[dict[str, Any]]:
    return read_jsonl(CONVERSATION_QUERIES)


@pytest.fixture(scope="module")
def everything(
    memories: list[dict[str, Any]], distractors: list[dict[str, Any]], turns: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Every record the eval database holds: hand-written memories, distractors and dialogue turns."""
    return memories + distractors + turns


@pytest.fixture(scope="module")
def by_id(everything: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {m["id"]: m for m in everything}


def text_of(memory: dict[str, Any]) -> str:
    return f"{memory['l0']} {memory['l1']}"


def script_of(text: str) -> str:
    """ja = any kana; en = no Chinese; zh = Chinese with no Latin word of 2+ letters; mixed = both."""
    if KANA.search(text):
        return "ja"
    if not CJK.search(text):
        return "en"
    return "mixed" if LATIN_WORD.search(text) else "zh"


def content_words(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {w for w in words if len(w) >= 3 and w not in STOPWORDS}


def same_stem(a: str, b: str) -> bool:
    # Crude on purpose: "prefers"/"preference" and "read"/"reads" count as shared (errs on the strict side).
    shorter, longer = sorted((a, b), key=len)
    return a[:5] == b[:5] or (len(shorter) >= 4 and longer.startswith(shorter))


def cjk_bigrams(text: str) -> set[str]:
    bigrams: set[str] = set()
    for run in re.findall(r"[\u4e00-\u9fff]+", text):
        bigrams.update(run[i : i + 2] for i in range(len(run) - 1))
    return bigrams


def identifier_pattern(identifier: str) -> re.Pattern[str]:
    # Bounded so that "PR #342" never matches "PR #3421" and "v2.3.1" never matches "v2.3.10".
    return re.compile(r"(?<![\w#@.-])" + re.escape(identifier) + r"(?![\w])", re.IGNORECASE)


def test_memory_lines_have_exactly_the_documented_fields(memories: list[dict[str, Any]]) -> None:
    for memory in memories:
        assert set(memory) == MEMORY_KEYS, memory
        assert all(isinstance(memory[key], str) for key in MEMORY_KEYS), memory
        assert memory["l0"].strip(), memory["id"]


def test_memory_ids_are_unique_and_well_formed(memories: list[dict[str, Any]]) -> None:
    ids = [m["id"] for m in memories]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]
    assert all(re.fullmatch(r"m-\d{3}", i) for i in ids)


def test_memory_users_scopes_and_categories_are_valid(memories: list[dict[str, Any]]) -> None:
    for memory in memories:
        assert memory["userId"] in USERS, memory["id"]
        assert memory["scope"] in SCOPES, memory["id"]
        assert memory["category"] in CATEGORIES, memory["id"]
    assert {m["category"] for m in memories} == CATEGORIES
    assert {m["scope"] for m in memories} == SCOPES
    assert {m["userId"] for m in memories} == USERS


def test_there_are_enough_memories_and_queries(
    memories: list[dict[str, Any]], queries: list[dict[str, Any]]
) -> None:
    assert len(memories) >= 100
    assert len(queries) >= 70


def test_memory_language_mix_is_about_55_35_10(memories: list[dict[str, Any]]) -> None:
    shares = Counter(script_of(text_of(m)) for m in memories)
    assert shares["ja"] <= 10, shares  # a few Japanese notes for the japanese queries
    total = len(memories) - shares["ja"]
    assert abs(shares["en"] / total - 0.55) <= 0.05, shares
    assert abs(shares["zh"] / total - 0.35) <= 0.05, shares
    assert abs(shares["mixed"] / total - 0.10) <= 0.05, shares


def test_query_lines_have_exactly_the_documented_fields(queries: list[dict[str, Any]]) -> None:
    for query in queries:
        assert set(query) == QUERY_KEYS, query
        assert isinstance(query["query"], str) and query["query"].strip(), query
        assert query["kind"] in KINDS, query
        assert query["language"] in LANGUAGES, query
        assert query["userId"] in USERS, query
        expected = query["expected"]
        assert isinstance(expected, list), query
        assert bool(expected) == (query["kind"] != "nonsense"), query
        assert len(expected) == len(set(expected)), query


def test_queries_are_not_repeated_for_the_same_user(queries: list[dict[str, Any]]) -> None:
    keys = Counter((q["userId"], q["query"]) for q in queries)
    assert [k for k, n in keys.items() if n > 1] == []


def test_every_expected_id_exists_and_belongs_to_the_query_user(
    queries: list[dict[str, Any]], by_id: dict[str, dict[str, Any]]
) -> None:
    for query in queries:
        for memory_id in query["expected"]:
            assert memory_id in by_id, (query["query"], memory_id)
            assert by_id[memory_id]["userId"] == query["userId"], (query["query"], memory_id)


def test_each_kind_meets_its_minimum(queries: list[dict[str, Any]]) -> None:
    counts = Counter(q["kind"] for q in queries)
    for kind, minimum in KIND_MINIMUMS.items():
        assert counts[kind] >= minimum, (kind, counts[kind])
    assert set(counts) == KINDS, counts
    assert len(queries) >= 250


def test_query_language_label_matches_its_script(queries: list[dict[str, Any]]) -> None:
    for query in queries:
        if query["kind"] == "identifier":
            assert not CJK.search(query["query"]), query
            continue
        assert script_of(query["query"]) == query["language"], query


def test_two_character_queries_are_two_chinese_characters(queries: list[dict[str, Any]]) -> None:
    for query in (q for q in queries if q["kind"] == "zh-2char"):
        assert re.fullmatch(r"[\u4e00-\u9fff]{2}", query["query"]), query


def test_two_character_queries_expect_every_literal_hit(
    queries: list[dict[str, Any]], everything: list[dict[str, Any]]
) -> None:
    memories = everything  # distractors and dialogue turns must not hold the word either
    # A memory containing the word is a correct answer; missing it would punish BM25 for being right.
    for query in (q for q in queries if q["kind"] == "zh-2char"):
        hits = {m["id"] for m in memories if m["userId"] == query["userId"] and query["query"] in text_of(m)}
        assert hits, query
        assert hits <= set(query["expected"]), (query["query"], sorted(hits - set(query["expected"])))


def test_identifier_queries_expect_exactly_the_memories_naming_them(
    queries: list[dict[str, Any]], everything: list[dict[str, Any]]
) -> None:
    memories = everything
    for query in (q for q in queries if q["kind"] == "identifier"):
        pattern = identifier_pattern(query["query"])
        hits = {m["id"] for m in memories if m["userId"] == query["userId"] and pattern.search(text_of(m))}
        assert hits == set(query["expected"]), (query["query"], sorted(hits), query["expected"])


def test_identifiers_have_a_near_miss_distractor(
    queries: list[dict[str, Any]], memories: list[dict[str, Any]]
) -> None:
    # PR #342 vs #324, v2.3.1 vs v2.3.0, JIRA-4521 vs 4512: exact-token matching must be what wins.
    all_text = " ".join(text_of(m) for m in memories)
    for identifier, near_miss in [("#342", "#324"), ("v2.3.1", "v2.3.0"), ("JIRA-4521", "JIRA-4512")]:
        assert identifier in all_text and near_miss in all_text


def test_paraphrases_share_no_content_word_with_their_answers(
    queries: list[dict[str, Any]], by_id: dict[str, dict[str, Any]]
) -> None:
    paraphrases = [q for q in queries if q["kind"] == "paraphrase"]
    assert sum(q["language"] == "en" for q in paraphrases) >= 15
    for query in paraphrases:
        query_words = content_words(query["query"])
        query_bigrams = cjk_bigrams(query["query"])
        for memory_id in query["expected"]:
            memory_text = text_of(by_id[memory_id])
            shared = {(q, m) for q in query_words for m in content_words(memory_text) if same_stem(q, m)}
            assert not shared, (query["query"], memory_id, shared)
            assert not query_bigrams & cjk_bigrams(memory_text), (query["query"], memory_id)


def test_cross_lingual_queries_reach_across_languages(
    queries: list[dict[str, Any]], by_id: dict[str, dict[str, Any]]
) -> None:
    for query in (q for q in queries if q["kind"] in ("cross-en-zh", "cross-zh-en")):
        source, target = query["kind"].split("-")[1:]
        assert query["language"] == source, query
        answer_scripts = {script_of(text_of(by_id[i])) for i in query["expected"]}
        assert target in answer_scripts, (query["query"], answer_scripts)


def test_second_user_shares_keywords_so_the_user_filter_matters(
    queries: list[dict[str, Any]], memories: list[dict[str, Any]]
) -> None:
    # At least a few u-lin queries literally match a u-sam memory: a search that ignores userId loses points.
    sam_text = [text_of(m).lower() for m in memories if m["userId"] == "u-sam"]
    leaking = [
        q for q in queries if q["userId"] == "u-lin" and any(q["query"].lower() in t for t in sam_text)
    ]
    assert len(leaking) >= 3, [q["query"] for q in leaking]
    assert any(q["userId"] == "u-sam" for q in queries)


# --- the larger set: distractors, dialogues and their questions -------------------------------------


def test_distractor_and_turn_lines_have_the_documented_fields(
    distractors: list[dict[str, Any]], turns: list[dict[str, Any]]
) -> None:
    for row in distractors:
        assert set(row) == MEMORY_KEYS, row
        assert re.fullmatch(r"d-\d{4}", row["id"]), row
    for row in turns:
        assert set(row) == TURN_KEYS, row
        assert re.fullmatch(r"c-\d{2}-\d-\d{2}", row["id"]), row
        assert row["speaker"] in ("user", "assistant") and row["scope"] == "user", row
        assert row["l0"].startswith("User: " if row["speaker"] == "user" else "Assistant: "), row
        assert row["l1"] == "" and row["category"] == "event", row
    for row in distractors + turns:
        assert row["userId"] in ALL_USERS and row["scope"] in SCOPES and row["category"] in CATEGORIES, row


def test_ids_are_unique_across_files_and_the_set_is_large(everything: list[dict[str, Any]]) -> None:
    ids = Counter(m["id"] for m in everything)
    assert [i for i, n in ids.items() if n > 1] == []
    assert len(everything) >= 2000
    assert {m["userId"] for m in everything} == ALL_USERS


def spoken(turn: dict[str, Any]) -> str:
    """A turn's words without the "User: " / "Assistant: " prefix (which would make every turn look mixed)."""
    return str(turn["l0"]).split(": ", 1)[1]


def test_dialogues_are_long_enough(turns: list[dict[str, Any]]) -> None:
    conversations = Counter(t["id"].split("-")[1] for t in turns)
    sessions = {t["session"] for t in turns}
    assert len(conversations) >= 8 and len(sessions) >= 40 and len(turns) >= 500, (
        conversations,
        len(sessions),
    )
    assert Counter(script_of(spoken(t)) for t in turns)["zh"] >= 100
    for conv in conversations:  # turns of a session are numbered 1..n and move forward in time
        rows = [t for t in turns if t["id"].split("-")[1] == conv]
        assert [t["ts"] for t in rows] == sorted(t["ts"] for t in rows), conv


def test_distractor_language_mix_is_about_55_35_10(distractors: list[dict[str, Any]]) -> None:
    shares = Counter(script_of(text_of(m)) for m in distractors)
    total = len(distractors)
    assert abs(shares["en"] / total - 0.55) <= 0.05, shares
    assert abs(shares["zh"] / total - 0.35) <= 0.05, shares
    assert abs(shares["mixed"] / total - 0.10) <= 0.05, shares


def test_distractors_of_lin_and_sam_are_about_other_people(distractors: list[dict[str, Any]]) -> None:
    # They can then never answer a question about the user himself.
    for row in distractors:
        if row["userId"] in USERS:
            assert not re.search(r"\b(Lin Wei|林伟(?!的))", text_of(row)), row


def test_keyword_queries_are_not_fully_matched_by_a_distractor_or_turn(
    queries: list[dict[str, Any]], distractors: list[dict[str, Any]], turns: list[dict[str, Any]]
) -> None:
    for query in (q for q in queries if q["kind"] == "keyword"):
        words = [w.lower() for w in query["query"].split()]
        for row in distractors + turns:
            if row["userId"] == query["userId"]:
                assert not all(w in text_of(row).lower() for w in words), (query["query"], row["id"])


def test_other_person_queries_have_their_trap_present(
    queries: list[dict[str, Any]], distractors: list[dict[str, Any]]
) -> None:
    # "where does the user live" must compete with "User's friend Bob lives in Toronto".
    anchors = [d for d in distractors if d["userId"] == "u-lin" and int(d["id"][2:]) <= 26]
    assert len(anchors) == 26
    assert sum(q["kind"] == "other-person" for q in queries) >= 20


def test_nonsense_queries_expect_nothing(queries: list[dict[str, Any]]) -> None:
    nonsense = [q for q in queries if q["kind"] == "nonsense"]
    assert len(nonsense) >= 15 and all(q["expected"] == [] for q in nonsense)


def test_conversation_queries_follow_the_rules(
    conversation_queries: list[dict[str, Any]], by_id: dict[str, dict[str, Any]]
) -> None:
    assert len(conversation_queries) >= 120
    aspects: Counter[str] = Counter()
    for query in conversation_queries:
        assert set(query) == CONVERSATION_QUERY_KEYS, query
        assert query["kind"] == "conversation" and query["expected"], query
        assert query["language"] == script_of(query["query"]), query
        assert set(query["aspect"]) <= ASPECTS, query
        aspects.update(query["aspect"])
        for turn_id in query["expected"]:
            assert turn_id.startswith("c-") and turn_id in by_id, (query["query"], turn_id)
            assert by_id[turn_id]["userId"] == query["userId"], (query["query"], turn_id)
        # Evidence comes in pieces, each stated by one or more turns (a fact and the assistant's
        # "Noted: ..." repeating it); `expected` lists every turn of every piece, in order.
        pieces = query["evidence"]
        assert [turn for piece in pieces for turn in piece] == query["expected"], query
        assert all(piece for piece in pieces) and len(set(query["expected"])) == len(query["expected"])
        if "combine" in query["aspect"]:
            assert len(pieces) >= 2, query
        elif "correction" not in query["aspect"]:
            assert len(pieces) == 1, query  # one fact, however many turns state it
        if "cross" in query["aspect"]:
            evidence = {script_of(spoken(by_id[i])) for i in query["expected"]}
            assert query["language"] not in evidence, (query["query"], evidence)
    assert aspects["combine"] >= 10 and aspects["cross"] >= 20 and aspects["correction"] >= 8, aspects
    keys = Counter((q["userId"], q["query"]) for q in conversation_queries)
    assert [k for k, n in keys.items() if n > 1] == []


def test_generated_files_are_reproducible(tmp_path: Path) -> None:
    # The committed files are exactly what the tools write: nobody hand-edits generated output.
    out = tmp_path / "distractors.jsonl"
    subprocess.run([sys.executable, str(ROOT / "tools" / "gen_eval.py"), "--out", str(out)], check=True)
    assert out.read_bytes() == DISTRACTORS.read_bytes()
    subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_conversations.py"), "--out", str(tmp_path)], check=True
    )
    assert (tmp_path / "conversations.jsonl").read_bytes() == CONVERSATIONS.read_bytes()
    assert (tmp_path / "conversation_queries.jsonl").read_bytes() == CONVERSATION_QUERIES.read_bytes()
