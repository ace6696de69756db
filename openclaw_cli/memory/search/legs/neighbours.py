"""Word neighbours: keyword evidence for a question put in other words than the memory's (issue 24).

"what am I putting cash aside for?" shares no word with "User is saving money to buy a house", so the
keyword leg gives it nothing and the sentence vectors alone must carry it, against a store of memories
that are as close to the question as a whole. But the two texts' words are close one by one: "cash" and
"money" (0.70 apart in MiniLM's space), "antibiotic" and "penicillin" (0.70), 小孩 and 儿子. Here each
content word of the query is compared with the content words of the best candidates (not the whole
store: that vocabulary would have to be embedded before the first search), and a candidate holding a
close neighbour of a query word gets that word's share of the query as keyword evidence, weighed by how
close the neighbour is. The evidence is fused as the keyword leg's is (profile.fuse), only ever raising a
candidate's keyword share.

Words are embedded alone, English ones by the English model, Chinese ones by the multilingual model, and
kept per embedder for the process (WORD_CACHE words): a warm searcher embeds only words it has not met.
Only words a dictionary lists take part (search/legs/vocabulary.py): names, numbers and fragments have no
meaning alone. It runs only where it can matter and cannot make nonsense look like an answer: when the
best keyword evidence is weak (below WEAK_KEYWORDS: a query the keyword leg answers needs no paraphrase),
and the query is a sentence (SENTENCE_TERMS terms; nonsense is short) or a shorter question about the
user in real words ("would a beef burger suit me?"; "purple monkey dishwasher" names nobody).

The thresholds were set on the eval's tuning half (tests/evalset.py): neighbours from 0.6 (English) and
0.65 (Chinese), 3 per word, among the words of the best 50 candidates (with 30 the tuning half's gain
vanished; lower thresholds or a weight above 1 lost MRR). The stage's figures are in stages.neighbours.
Cost: one model run per word not met before (~2 ms each at load 6-9: 2,352 words for the eval's 138
gated queries in 7.9 s), nothing for a word met before; benchmarks/test_bench_paraphrase.py. A process
that runs one search starts with no words met, and its unoptimised models take ~2-3 ms a word (~100 words
for an English question at 20k memories), and a warm process's first search of a question pays the same
for words it has not met (10-107 ms at 100k): both read the words any earlier search of the home met from
the home's tables (embedding/word_table.py) and add their own, and a running gateway embeds the store's
words ahead (search/legs/word_warmup.py); benchmarks/test_bench_search_100k.py and test_bench_word_table.py
measure them.
"""

from __future__ import annotations

import functools
import random
import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from openclaw_cli.memory.search.legs.vocabulary import content_words, is_known, reads_as_words
from openclaw_cli.memory.text.subject import refers_to_user

if TYPE_CHECKING:
    import numpy as np

    from openclaw_cli.memory.embedding.onnx_embedder import Embedder
    from openclaw_cli.memory.embedding.word_table import WordTable, WordTables

Kind = Literal["en", "zh"]

# The cosine two words must reach to count as neighbours, per model (MiniLM's single words are more
# spread out than the multilingual model's Chinese ones: 小孩/孩子 0.89, 休息日 and a fragment 0.75).
CLOSE: dict[str, float] = {"en": 0.6, "zh": 0.65}
NEIGHBOURS = 3  # a query word's closest candidate words that may count
POOL = 50  # the best candidates whose words are compared
WEAK_KEYWORDS = 0.5  # the best keyword share below which the query may be a paraphrase
WORD_CACHE = 50_000
TEXT_CACHE = 20_000  # candidate texts whose words are kept
OPEN_TABLES = 8  # word tables (2 per home) kept open; a process serves one home, a test run many

_ENGLISH = re.compile(r"[a-z]{3,}")
_CHINESE = re.compile(r"[\u3400-\u9fff]{2,}")


def word_kind(word: str) -> Kind | None:
    """Which model reads a word alone: English words of 3+ letters, Chinese words of 2+ characters."""
    if _ENGLISH.fullmatch(word):
        return "en"
    if _CHINESE.fullmatch(word):
        return "zh"
    return None


def meaningful_words(text: str) -> list[str]:
    """The text's content words that mean something alone: a dictionary lists them."""
    return list(_meaningful(text))


def dictionary_words(text: str) -> list[str]:
    """As meaningful_words, but not kept: for a walk over every text of a store (search/legs/word_warmup.py)."""
    return [w for w in content_words(text) if word_kind(w) is not None and is_known(w)]


@functools.lru_cache(maxsize=TEXT_CACHE)
def _meaningful(text: str) -> tuple[str, ...]:
    # A warm searcher meets the same candidates again: their analysis (~0.5 ms a text) is kept.
    return tuple(dictionary_words(text))


class WordVectors:
    """Unit vectors of single words, by the model of each word's language, cached (least recently
    used first out). Given a home's WordTables (embedding/word_table.py), words met by earlier searches
    of any process are read from its tables on disk and the new ones kept there, unless a purge came
    between: once per process and table, one word read back is embedded again and must match bit for
    bit, else the table is started again and every word embedded. A purge the cache has not seen (the
    home's token changed) empties the cache too."""

    def __init__(self, models: dict[Kind, Embedder]) -> None:
        self._models = models
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._tables: OrderedDict[tuple[Path, Kind], WordTable] = OrderedDict()
        self._probed: set[Path] = set()
        self._tokens: dict[Path, str] = {}  # per home's directory, the purge token the cache was filled under
        self.embedded = 0  # words run through a model (for the benchmark)
        self.from_table = 0  # words read from the tables on disk

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()

    def megabytes(self) -> float:
        """What the cached vectors hold (384 or 512 float32 each: 1.5-2 KB a word)."""
        with self._lock:
            return sum(v.nbytes for v in self._cache.values()) / 1e6

    def reads(self, kind: Kind | None) -> bool:
        return kind is not None and kind in self._models

    def of(self, words: Iterable[str], tables: WordTables | None = None) -> dict[str, np.ndarray]:
        """The words' vectors (those a model reads); `tables`: the home's, as the search found them."""
        wanted = [w for w in dict.fromkeys(words) if self.reads(word_kind(w))]
        with self._lock:
            if tables is not None and self._tokens.setdefault(tables.directory, tables.token) != tables.token:
                self._cache.clear()  # a purge since: what the cache held may be the forgotten memories'
                self._tokens[tables.directory] = tables.token
            new = [w for w in wanted if w not in self._cache]
            fetched: dict[str, np.ndarray] = {}
            for kind, model in self._models.items():
                batch = [w for w in new if word_kind(w) == kind]
                if batch:
                    fetched.update(self._fetch(kind, model, batch, tables))
            if fetched and (tables is None or tables.current()):  # not words of memories purged meanwhile
                self._cache.update(fetched)
            found = {}
            for word in wanted:
                if word in self._cache:
                    self._cache.move_to_end(word)
                    found[word] = self._cache[word]
                else:
                    found[word] = fetched[word]
            while len(self._cache) > WORD_CACHE:
                self._cache.popitem(last=False)
        return found

    def forget(self) -> None:
        """Drop every cached word (a purge in this process)."""
        with self._lock:
            self._cache.clear()
            self._tokens.clear()

    def _fetch(
        self, kind: Kind, model: Embedder, words: list[str], tables: WordTables | None
    ) -> dict[str, np.ndarray]:
        """`words`' vectors: from the home's table when it has them (checked once), else from the model."""
        import numpy as np

        table = self._table(kind, model, tables)
        found = table.read(words) if table is not None else {}
        if table is not None and found and table.path not in self._probed:
            self._probed.add(table.path)
            probe = random.choice(sorted(found))
            if not np.array_equal(self._embed(model, [probe])[0], found[probe]):
                table.reset()
                found = {}
        self.from_table += len(found)
        missing = [w for w in words if w not in found]
        if missing:
            fresh = dict(zip(missing, self._embed(model, missing), strict=True))
            if table is not None and tables is not None:
                table.write(fresh, tables.token)
            found.update(fresh)
        return found

    def _table(self, kind: Kind, model: Embedder, tables: WordTables | None) -> WordTable | None:
        """The home's table of this model's words (for the models that say what their vectors depend
        on: the packaged ones); the OPEN_TABLES most recently used stay open."""
        from openclaw_cli.memory.embedding.word_table import WordTable, table_path

        vectors_key = getattr(model, "vectors_key", None)
        if tables is None or not callable(vectors_key):
            return None
        slot = (tables.directory, kind)
        if slot not in self._tables:
            key = str(vectors_key())
            self._tables[slot] = WordTable(table_path(tables.directory, key), key, model.identity.dimensions)
            while len(self._tables) > OPEN_TABLES:
                self._tables.popitem(last=False)[1].close()
        self._tables.move_to_end(slot)
        return self._tables[slot]

    def _embed(self, model: Embedder, words: list[str]) -> np.ndarray:
        import numpy as np

        vectors = model.embed_passages(words)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        self.embedded += len(words)
        return vectors


_BY_EMBEDDER: weakref.WeakKeyDictionary[object, WordVectors] = weakref.WeakKeyDictionary()
_BY_EMBEDDER_LOCK = threading.Lock()


def word_vectors(embedder: object) -> WordVectors | None:
    """The word cache of the default (composite) embedder: its English and multilingual models. Other
    embedders get none: an API embedder would make one remote call per new word. A deferred embedder
    (embedding/deferred.py) is read through: by the time a search compares words it has embedded the query."""
    resolve = getattr(embedder, "resolve", None)
    if callable(resolve):
        embedder = resolve()
    english, multilingual = getattr(embedder, "english", None), getattr(embedder, "multilingual", None)
    if english is None or multilingual is None:
        return None
    with _BY_EMBEDDER_LOCK:
        found = _BY_EMBEDDER.get(embedder)
        if found is None:
            found = _BY_EMBEDDER[embedder] = WordVectors({"en": english, "zh": multilingual})
    return found


def forget_cached_words() -> None:
    """Drop the words every word cache of this process holds (a purge or delete in this process)."""
    with _BY_EMBEDDER_LOCK:
        caches = list(_BY_EMBEDDER.values())
    for cache in caches:
        cache.forget()


def neighbour_shares(
    query: str, candidates: dict[int, str], vectors: WordVectors, tables: WordTables | None = None
) -> dict[int, float]:
    """For each candidate (rowid -> its text), the share of the query's content words it holds a close
    neighbour of, each weighed by the neighbour's cosine. Every content word counts in the share, those
    without a neighbour too ("what am I putting cash aside for": 4 words, 1 found at 0.70: 0.175).
    `tables`: the home's word tables (WordVectors.of)."""
    import numpy as np

    total_words = len(content_words(query))
    asked = [w for w in meaningful_words(query) if vectors.reads(word_kind(w))]
    if not asked:
        return {}
    held = {rowid: set(_meaningful(text)) for rowid, text in candidates.items()}
    vocabulary = sorted(set().union(*held.values()) - set(asked))
    vecs = vectors.of([*asked, *vocabulary], tables)
    by_kind: dict[str, tuple[list[str], np.ndarray]] = {}
    for language in {str(word_kind(w)) for w in asked}:
        same = [w for w in vocabulary if word_kind(w) == language and w in vecs]
        if same:
            by_kind[language] = (same, np.stack([vecs[w] for w in same]))
    closest: list[dict[str, float]] = []
    for word in asked:
        kind = str(word_kind(word))
        if word not in vecs or kind not in by_kind:
            continue
        same, matrix = by_kind[kind]
        cosines = matrix @ vecs[word]
        order = np.argsort(-cosines)[:NEIGHBOURS]
        near = {same[i]: float(cosines[i]) for i in order if cosines[i] >= CLOSE[kind]}
        if near:
            closest.append(near)
    if not closest:
        return {}
    shares = {}
    for rowid, words in held.items():
        found = sum(max((c for w, c in near.items() if w in words), default=0.0) for near in closest)
        if found > 0:
            shares[rowid] = found / total_words
    return shares


def best_first(relevance: dict[int, float], limit: int = POOL) -> list[int]:
    """The `limit` rowids of highest relevance."""
    return sorted(relevance, key=lambda rowid: -relevance[rowid])[:limit]


def applies(query: str, terms: Sequence[str], best_keyword_share: float, sentence_terms: int) -> bool:
    """Whether the query may be a paraphrase worth the word comparison (see the module docstring): weak
    keyword evidence, and a sentence, or a shorter question about the user in real words ("would a beef
    burger suit me?"; nonsense such as "purple monkey dishwasher" names nobody)."""
    if best_keyword_share >= WEAK_KEYWORDS:
        return False
    return len(terms) >= sentence_terms or (refers_to_user(query) and reads_as_words(query))
