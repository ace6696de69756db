"""Text analysis against a REAL FTS5 table: terms written with index_terms must be found by query_terms,
and no user text may ever break a MATCH expression."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openclaw_cli.memory.text.analysis import (
    FTS_TOKENIZE,
    MAX_QUERY_TERMS,
    detect_language,
    fts_match,
    has_han,
    index_terms,
    l0_hash,
    normalise_l0,
    query_terms,
)
from openclaw_cli.memory.text.scripts import latin_language


class Index:
    """A real in-memory FTS5 table holding index_terms() of each record, searched via fts_match()."""

    def __init__(self) -> None:
        self.conn = apsw.Connection(":memory:")
        self.conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{FTS_TOKENIZE}')")

    def add(self, *texts: str) -> None:
        for text in texts:
            self.conn.execute(
                "INSERT INTO t(rowid, body) VALUES ((SELECT count(*) + 1 FROM t), ?)", (index_terms(text),)
            )

    def clear(self) -> None:
        self.conn.execute("DELETE FROM t")

    def match(self, expression: str | None) -> list[int]:
        if expression is None:
            return []
        rows = self.conn.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank", (expression,))
        return [row[0] for row in rows]

    def search(self, query: str) -> list[int]:
        return self.match(fts_match(query_terms(query)))


@pytest.fixture
def index() -> Iterator[Index]:
    idx = Index()
    yield idx
    idx.conn.close()


# --------------------------------------------------------------------------- properties


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text())
def test_any_text_gives_a_valid_match_expression(index: Index, text: str) -> None:
    index.add("some record")
    expression = fts_match(query_terms(text))
    assert expression is None or isinstance(index.match(expression), list)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(), max_size=80))
def test_any_raw_terms_give_a_valid_match_expression(index: Index, terms: list[str]) -> None:
    index.add("some record")
    expression = fts_match(terms)
    if expression is None:
        assert all(not re.sub(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\s]", "", t) for t in terms)
    else:
        assert expression.count('" OR "') < MAX_QUERY_TERMS
        assert isinstance(index.match(expression), list)


_mixed_words = st.text(
    alphabet=st.sampled_from(
        [
            *"abcdeXYZ019_-.@#'éäñ ",
            *"我喜欢喝咖啡杭州部署小明的了，。!",
            "😀",
            *"はがコーヒｺｰﾋ・",
            *"커피를좋아",
        ]
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.text(), _mixed_words))
def test_a_record_is_found_by_each_of_its_words(index: Index, text: str) -> None:
    index.clear()
    index.add(text)
    for word in text.split():
        terms = query_terms(word)
        if terms:
            assert index.search(word) == [1], (word, terms, index_terms(text))


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_query_terms_are_capped_and_unique(text: str) -> None:
    terms = query_terms(text * 3)
    assert len(terms) <= MAX_QUERY_TERMS
    assert len(terms) == len(set(terms))
    assert all(term and term.strip() == term for term in terms)


# --------------------------------------------------------------------------- FTS special syntax


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '""',
        'say "hi',
        "*",
        "deploy*",
        "-",
        "-deploy",
        ":",
        "body:deploy",
        "col:",
        "^",
        "^deploy",
        "NEAR",
        "NEAR(a b)",
        "NEAR/2",
        "AND",
        "OR",
        "NOT",
        "a AND",
        "OR b",
        "NOT deploy",
        "(",
        ")",
        "(deploy",
        "((()))",
        "+",
        "{body}: x",
        "a\x00b",
        "\x01\x02\x1f\x7f",
        "😀🔥",
        "👨‍👩‍👧",
        "\u200b",
        "\ud800",
    ],
)
def test_fts_special_syntax_never_breaks_a_query(index: Index, query: str) -> None:
    index.add("deploy the service to production", "a b")
    expression = fts_match(query_terms(query))
    assert expression is None or isinstance(index.match(expression), list)
    raw = fts_match([query])  # a caller passing raw user text as a term is safe too
    assert raw is None or isinstance(index.match(raw), list)


def test_fts_operators_are_searched_as_words(index: Index) -> None:
    index.add("the NEAR field test", "nothing here")
    assert index.search("near") == [1]
    assert index.search("NEAR(field test)") == [1]


def test_quotes_inside_terms_are_doubled() -> None:
    assert fts_match(['say "hi"', "x"]) == '"say ""hi""" OR "x"'


def test_very_long_input_is_capped(index: Index) -> None:
    text = " ".join(f"word{i}" for i in range(5000))
    index.add("word3 is here")
    terms = query_terms(text)
    assert len(terms) == MAX_QUERY_TERMS
    expression = fts_match(terms)
    assert expression is not None and expression.count(" OR ") == MAX_QUERY_TERMS - 1
    assert index.match(expression) == [1]
    assert fts_match([f"t{i}" for i in range(1000)]).count(" OR ") == MAX_QUERY_TERMS - 1  # type: ignore[union-attr]


def test_one_giant_word_is_cut_identically_on_both_sides(index: Index) -> None:
    blob = "x" * 10_000
    index.add(f"hash {blob}")
    assert index.search(blob) == [1]


def test_empty_and_whitespace() -> None:
    for text in ["", " ", "\t\n  \u3000", "，。！？", "😀"]:
        assert query_terms(text) == []
        assert fts_match(query_terms(text)) is None
        assert index_terms(text) == ""
    assert fts_match([]) is None
    assert fts_match(["", "  ", "\x00"]) is None


# --------------------------------------------------------------------------- identifiers


def test_pr_number_matches_with_or_without_hash(index: Index) -> None:
    index.add("Merged PR #342 yesterday", "pr 342 needs review", "PR342 in the title", "issue 343")
    assert sorted(index.search("PR #342")) == [1, 2, 3]
    assert sorted(index.search("pr 342")) == [1, 2, 3]
    assert sorted(index.search("PR342")) == [1, 2, 3]
    assert 4 not in index.search("#342")


def test_mentions_and_handles(index: Index) -> None:
    index.add("ping @alice_dev about the release", "alice wrote docs", "bob_dev too")
    hits = index.search("@alice_dev")
    assert hits[0] == 1
    assert index.search("alice_dev")[0] == 1
    assert 1 in index.search("alice")


@pytest.mark.parametrize(
    ("record", "query"),
    [
        ("upgrade to v2.3.1 tomorrow", "v2.3.1"),
        ("column user-id_42 is null", "user-id_42"),
        ("mail alice@example.com today", "alice@example.com"),
        ("edit config.json then restart", "config.json"),
        ("see README.md", "readme"),
        ("deploy to k8s", "K8S"),
    ],
)
def test_identifiers_rank_the_exact_record_first(index: Index, record: str, query: str) -> None:
    index.add("unrelated text about 2 3 1 users and configs", record)
    assert index.search(query)[0] == 2


def test_identifier_emits_parts_and_joined_form() -> None:
    terms = index_terms("user-id_42").split()
    assert {"user", "id", "42", "userid42"} <= set(terms)


# --------------------------------------------------------------------------- stemming and stopwords


def test_stemming_matches_inflections(index: Index) -> None:
    index.add("we deploy on fridays", "cats are sleeping")
    assert index.search("deployments") == [1]
    assert index.search("deployed") == [1]
    assert index.search("cat sleeps") == [2]


def test_diacritics_and_full_width_fold(index: Index) -> None:
    index.add("a naïve café", "ＨＥＬＬＯ　Ｗｏｒｌｄ")
    assert index.search("naive cafe") == [1]
    assert index.search("hello") == [2]


def test_stopwords_are_dropped_from_queries() -> None:
    assert query_terms("what is the deployment plan") == ["deploy", "plan"]
    assert query_terms("我的咖啡") == ["咖啡"]


def test_only_stopwords_query_keeps_them(index: Index) -> None:
    assert query_terms("the who") == ["the", "who"]
    index.add("The Who played live", "something else")
    assert index.search("the who") == [1]
    assert query_terms("的") == ["的"]


# --------------------------------------------------------------------------- Chinese


def test_coffee_in_a_sentence(index: Index) -> None:
    index.add("我喜欢喝咖啡", "我喜欢喝茶")
    assert index.search("咖啡") == [1]


def test_city_names(index: Index) -> None:
    index.add("我住在杭州市西湖区", "下周去北京出差")
    assert index.search("杭州") == [1]
    assert index.search("北京") == [2]
    assert index.search("西湖") == [1]


def test_part_of_a_name_jieba_keeps_whole(index: Index) -> None:
    # jieba keeps 王小明 as one word; the index's character pairs still let 小明 find it.
    index.add("王小明在龙井村部署了新服务", "小红喜欢猫")
    assert index.search("小明") == [1]
    assert index.search("部署") == [1]
    assert index.search("猫") == [2]


def test_whole_word_ranks_above_partial_overlap(index: Index) -> None:
    index.add("咖啡杯放在桌上", "这家咖啡馆很安静")
    assert index.search("咖啡馆")[0] == 2


def test_chinese_stopwords_and_punctuation_are_not_query_terms() -> None:
    terms = query_terms("我的，他们的！部署。")
    assert terms == ["部署"]
    assert "，" not in index_terms("你好，世界。")


def test_jieba_loads_lazily_and_silently() -> None:
    """A fresh process: importing the module loads neither jieba nor the stemmer, and the first Chinese
    text loads jieba (without pkg_resources) and without its "Building prefix dict..." chatter on stderr."""
    script = (
        "import sys\n"
        "from openclaw_cli.memory.text.analysis import index_terms\n"
        "assert 'jieba' not in sys.modules and 'snowballstemmer' not in sys.modules\n"
        "index_terms('plain english')\n"
        "assert 'jieba' not in sys.modules\n"
        "print(index_terms('我喜欢喝咖啡'))\n"
        "assert 'jieba' in sys.modules\n"
        # jieba's own import of pkg_resources (~70 ms, only to open its data files) is skipped...
        "assert 'pkg_resources' not in sys.modules\n"
        # ...and only while jieba is imported: anything else may still import it.
        "import importlib.util\n"
        "assert importlib.util.find_spec('pkg_resources') is None or __import__('pkg_resources')\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "咖啡" in proc.stdout.split()


# --------------------------------------------------------------------------- mixed Chinese-English


def test_mixed_texts_yield_both_parts(index: Index) -> None:
    index.add("用TypeScript写前端", "部署到k8s集群", "用Python写脚本")
    assert index.search("typescript") == [1]
    assert index.search("前端") == [1]
    assert index.search("k8s") == [2]
    assert index.search("集群") == [2]
    assert index.search("TypeScript 前端")[0] == 1
    assert {"typescript", "前端"} <= set(query_terms("用TypeScript写前端"))
    assert {"部署", "k8s", "集群"} <= set(query_terms("部署到k8s集群"))


# --------------------------------------------------------------------------- language detection


# --------------------------------------------------------------------------- Japanese and Korean


def test_katakana_word_in_a_japanese_sentence(index: Index) -> None:
    index.add("私はコーヒーが好きです", "我喜欢喝咖啡", "紅茶が好き", "我好累")
    assert index.search("コーヒー") == [1]
    assert index.search("ｺｰﾋｰ") == [1]  # half-width katakana fold to the same bigrams
    assert sorted(index.search("好き")) == [1, 3]  # not 我好累: the query has no lone 好
    assert index.search("コーヒーが好き")[0] == 1


def test_kana_runs_are_bigrams_and_a_lone_kana_is_itself() -> None:
    assert index_terms("コーヒー").split() == ["コー", "ーヒ", "ヒー"]
    assert query_terms("コーヒー") == ["コー", "ーヒ", "ヒー"]
    assert query_terms("は") == ["は"]
    assert "は" in index_terms("私は学生").split()


def test_katakana_and_hiragana_mixes(index: Index) -> None:
    index.add("カタカナとひらがなを混ぜる", "ひらがなだけ", "カタログ")
    assert sorted(index.search("ひらがな")) == [1, 2]
    assert index.search("カタカナ")[0] == 1
    assert index.search("ナとひら")[0] == 1  # 2 shares only ひら
    assert index.search("混ぜる") == [1]


_kana = st.text(
    alphabet=st.sampled_from([*"あいうえおかきくけこはがをコーヒカタナｺｰﾋ"]), min_size=1, max_size=12
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_kana)
def test_a_kana_query_never_meets_han_only_records(index: Index, query: str) -> None:
    index.clear()
    index.add("我喜欢喝咖啡", "好", "学生", query)
    assert all(re.search(r"[\u3041-\u30ff]", term) for term in query_terms(query))
    assert index.search(query) == [4]


def test_korean_particles_attach_to_words(index: Index) -> None:
    index.add("저는 커피를 좋아해요", "차를 마셔요", "커피")
    assert sorted(index.search("커피")) == [1, 3]
    assert index.search("커피를")[0] == 1
    assert index.search("좋아") == [1]
    assert {"커피를", "커피", "피를"} <= set(index_terms("커피를").split())


# --------------------------------------------------------------------------- other Latin languages


def test_english_one_word_query_still_stems(index: Index) -> None:
    index.add("she runs every morning", "the house is big")
    assert index.search("running") == [1]
    assert query_terms("running") == ["run", "running"]  # undecided: the folded word meets other languages


def test_french_words_meet_their_inflections(index: Index) -> None:
    index.add("Les maisons sont grandes", "La maison est petite", "the houses are big")
    assert sorted(index.search("maisons")) == [1, 2]
    assert sorted(index.search("les maisons")) == [1, 2]
    assert sorted(index.search("maison")) == [1, 2]
    assert "les" not in query_terms("les maisons")  # a French stopword in a French query


def test_german_umlauts_fold_on_both_sides(index: Index) -> None:
    index.add("Die Häuser sind alt", "Das Haus ist neu", "a house by the sea")
    assert sorted(index.search("Häuser")) == [1, 2]
    # Typed without the umlaut the word gives no evidence of German, so it meets the same word only.
    assert index.search("hauser") == [1]
    assert sorted(index.search("Haus")) == [1, 2]


def test_non_english_text_is_not_english_stemmed() -> None:
    # English Snowball would make "grandes" -> "grand" and "universitaires" -> "universitair".
    assert index_terms("les universités sont grandes").split() == [
        "les",
        "le",
        "universites",
        "univers",
        "sont",
        "grandes",
        "grand",
    ]
    assert index_terms("we are running").split() == ["we", "are", "run"]  # English unchanged


@pytest.mark.parametrize(
    ("segment", "expected"),
    [
        ("the house is on the hill", "en"),
        ("les maisons sont grandes", "fr"),
        ("die häuser sind alt", "de"),
        ("el niño está en la casa", "es"),
        ("running", None),
        ("maisons", None),
        ("häuser", "de"),
        ("", None),
    ],
)
def test_latin_language(segment: str, expected: str | None) -> None:
    assert latin_language(segment) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我喜欢喝咖啡", "zh"),
        ("I like coffee", "en"),
        ("用TypeScript写前端", "mixed"),
        ("Ｃｏｆｆｅｅ", "en"),
        ("12345 !!! 😀", "other"),
        ("Привет мир", "other"),
        ("", "other"),
        # A dialogue turn's speaker label is not part of what was said.
        ("User: 丈母娘说想去灵隐寺。", "zh"),
        ("  assistant：好的，记下了。", "zh"),
        ("用户：Noted, thanks.", "en"),
        ("User: 准备换 Hoka Clifton 9。", "mixed"),
        ("Username: 林伟", "mixed"),
    ],
)
def test_detect_language(text: str, expected: str) -> None:
    assert detect_language(text) == expected


def test_has_han() -> None:
    assert has_han("abc 咖啡")
    assert has_han("𠀀")  # CJK extension B
    assert not has_han("abc 123 ，。")
    assert not has_han("what does Maya like to drink") and not has_han("PR #4521")  # ASCII, not scanned
    assert not has_han("café crème, Zürich") and has_han("café 咖啡")


def test_an_english_search_process_compiles_no_han_pattern() -> None:
    """The Han patterns' astral ranges take ~7 ms to compile: only a process that meets non-ASCII pays."""
    script = (
        "from openclaw_cli.memory.text import analysis as a\n"
        "a.detect_language('what does Maya like to drink'); a.query_terms('PR #4521')\n"
        "print(a._han_patterns.cache_info().currsize)\n"
        "a.detect_language('林伟喜欢喝什么')\n"
        "print(a._han_patterns.cache_info().currsize)\n"
    )
    root = Path(__file__).resolve().parent.parent  # this tree's package, not an installed one
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["0", "1"]
    assert not has_han("")


# --------------------------------------------------------------------------- exact dedup


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("User prefers dark mode.", "user   PREFERS dark mode"),
        ("Tea,coffee", "tea, coffee"),
        ("用户喜欢喝咖啡。", "用户喜欢喝咖啡"),
        ("用户喜欢喝咖啡，不喜欢茶！", "用户喜欢喝咖啡,不喜欢茶!"),
        ("用 Go 写后端", "用Go写后端"),
        ("ＡＢＣ　１２３", "abc 123"),
        ("Line one\nline\ttwo", "line one line two"),
        ("“Quoted”", '"quoted"'),
        ("zero\u200bwidth\u00a0space", "zerowidth space"),
        ("bell\x07here", "bell here"),
        ("lone\ud800surrogate", "lonesurrogate"),
    ],
)
def test_l0_hash_ignores_case_space_and_punctuation(a: str, b: str) -> None:
    assert normalise_l0(a) == normalise_l0(b)
    assert l0_hash(a) == l0_hash(b)


def test_l0_hash_differs_for_different_texts() -> None:
    texts = [
        "user prefers dark mode",
        "user prefers light mode",
        "用户喜欢喝咖啡",
        "用户讨厌喝咖啡",
        "v2",
        "v3",
    ]
    assert len({l0_hash(t) for t in texts}) == len(texts)


def test_l0_hash_is_sha256_hex() -> None:
    digest = l0_hash("hello")
    assert re.fullmatch(r"[0-9a-f]{64}", digest)
    assert normalise_l0("  Hello, World!  ") == "hello world"


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_l0_hash_never_raises_and_ignores_surrounding_space(text: str) -> None:
    assert l0_hash(text) == l0_hash(f" \t{text}\n ")


# --------------------------------------------------------------------------- jieba's dictionary cache


def _run_fresh(script: str, tmp_env: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp_env)}
    return subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120, env=env
    )


def test_jieba_cache_lives_in_the_given_dir_and_nothing_goes_to_temp(tmp_path: Path) -> None:
    system_tmp = tmp_path / "system-tmp"
    system_tmp.mkdir()
    cache = tmp_path / "home" / "cache"
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from openclaw_cli.memory.text import jieba_dictionary\n"
        "from openclaw_cli.memory.text.analysis import index_terms\n"
        f"jieba_dictionary.set_cache_dir(Path({str(cache)!r}))\n"
        "assert '咖啡' in index_terms('我喜欢喝咖啡').split()\n"
        "assert not jieba_dictionary.full_loaded()\n"
        "if sys.argv[1:] == ['full']:\n"
        "    jieba_dictionary.load_full()\n"
        "    assert jieba_dictionary.full_loaded() and '咖啡' in index_terms('他喜欢喝咖啡').split()\n"
    )
    first = _run_fresh(script, system_tmp)  # a few texts: the dictionary's table alone
    assert first.returncode == 0 and first.stderr == "", first.stderr
    [table] = [p for p in cache.iterdir() if p.suffix == ".sqlite"]
    assert sorted(p.name for p in cache.iterdir()) == sorted([table.name, f"{table.name}.lock"])
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in cache.iterdir())
    second = _run_fresh(script, system_tmp, "full")  # the whole dictionary, and its cache beside the table
    assert second.returncode == 0 and second.stderr == "", second.stderr
    assert stat.S_IMODE((cache / "jieba.cache").stat().st_mode) == 0o600
    third = _run_fresh(script, system_tmp, "full")  # loads from the cache, still silent
    assert third.returncode == 0 and third.stderr == "", third.stderr
    assert list(system_tmp.iterdir()) == []


@pytest.mark.parametrize("one_shot", [False, True], ids=["lasting", "one-shot"])
def test_only_a_process_that_segments_many_texts_loads_the_whole_dictionary(
    tmp_path: Path, one_shot: bool
) -> None:
    """Past FULL_AFTER Han runs a lasting process loads the whole dictionary on a thread and answers from
    it, the same terms before and after; a one-shot process stays with the table."""
    script = (
        "import time\n"
        "from pathlib import Path\n"
        "from openclaw_cli.memory.text import jieba_dictionary\n"
        "from openclaw_cli.memory.text.analysis import index_terms\n"
        "jieba_dictionary.FULL_AFTER = 5\n"
        f"jieba_dictionary.set_cache_dir(Path({str(tmp_path / 'cache')!r}), one_shot={one_shot})\n"
        "texts = ['我喜欢喝咖啡', '小朋友在学哪种水上运动', '张三升了经理', '编辑器快捷键偏好', '喝茶吗', '我家在杭州']\n"
        "before = [index_terms(t) for t in texts]\n"
        "deadline = time.monotonic() + 60\n"
        "while not jieba_dictionary.full_loaded() and time.monotonic() < deadline and not "
        f"{one_shot}:\n"
        "    time.sleep(0.02)\n"
        "print(jieba_dictionary.full_loaded())\n"
        "assert [index_terms(t) for t in texts] == before\n"
    )
    proc = _run_fresh(script, tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout.split() == [str(not one_shot)]


def test_without_a_cache_dir_jieba_writes_nothing(tmp_path: Path) -> None:
    script = "from openclaw_cli.memory.text.analysis import index_terms\nassert '咖啡' in index_terms('喝咖啡').split()\n"
    proc = _run_fresh(script, tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_jieba_point_lookups_segment_exactly_like_the_loaded_dictionary(tmp_path: Path) -> None:
    """A short process reads jieba's dictionary entry by entry from a table (jieba_lookup.py): it must
    cut every text the same way as the whole dictionary loaded in memory."""
    import json
    import logging

    import jieba

    from openclaw_cli.memory.text.jieba_lookup import open_frequencies

    jieba.setLogLevel(logging.WARNING)
    full = jieba.Tokenizer()
    full.initialize()
    lookup = jieba.Tokenizer()
    lookup.FREQ, lookup.total = open_frequencies(tmp_path / "cache", lookup)
    lookup.initialized = True
    assert lookup.total == full.total
    (table,) = (tmp_path / "cache").glob("jieba-*.sqlite")
    assert table.stat().st_mode & 0o777 == 0o600
    root = Path(__file__).resolve().parent.parent / "fixtures" / "eval"
    texts = [
        json.loads(line)["l0"] for line in (root / "memories.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    texts += ["编辑器快捷键偏好", "小朋友在学哪种水上运动", "张三升了经理，李四还是工程师", "喝茶吗"]
    for text in texts:
        assert list(lookup.cut_for_search(text)) == list(full.cut_for_search(text)), text
    again, _ = open_frequencies(tmp_path / "cache", lookup)  # built once, then only opened
    assert "咖啡" in again and again.get("不存在的词语xyz") is None


def test_homes_that_share_a_model_cache_share_the_jieba_table(tmp_path: Path) -> None:
    """jieba's table is derived from the packaged dictionary only: it lives with the converted models, so
    homes given the same model cache (as every test home is) share one table and write none of their own."""
    import jieba

    from openclaw_cli.memory.text.jieba_lookup import table_path
    from tests.conftest import SHARED_MODEL_CACHE, run_cli

    with jieba.dt.get_dict_file() as handle:  # the table is keyed by this installation's dictionary
        table = table_path(SHARED_MODEL_CACHE, Path(handle.name))
    for name in ("a", "b"):
        result = run_cli(tmp_path / name, "memory", "add", "我喜欢喝咖啡，不喜欢茶")
        assert result.returncode == 0, result.stderr
        assert not list((tmp_path / name).rglob("jieba*")), name
        assert table.stat().st_mode & 0o777 == 0o600
