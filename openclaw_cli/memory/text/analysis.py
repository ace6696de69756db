"""Text analysis for keyword search: script detection, terms for the FTS5 index and for queries,
safe FTS5 MATCH expressions, and the normalisation used for exact deduplication.

Design: we do the linguistic work in Python and hand FTS5 a plain space-separated string of terms.
Every term we emit is a run of Unicode letters/digits, so FTS5's unicode61 tokenizer sees exactly our
terms (it only folds diacritics further, identically on both sides). Index and query go through the
same `_analyse` pipeline, which is what guarantees that they produce matching terms.

The text is split into runs by script (text/scripts.py), and each run is analysed on its own:

- Latin and other spaced scripts: NFKC + casefold, words by a Unicode-aware regex. The language of a Latin
  run is guessed from stopwords and language-specific letters: English or undecided text is indexed as
  English Snowball stems; French, German, Spanish, Italian, Portuguese and Dutch as the diacritic-folded
  word plus that language's stem. A query emits the English stem and, unless it is decidedly English,
  the folded word and its own language's stem, so both sides meet whichever way the guess went. Identifiers (PR #342, @alice_dev, v2.3.1, user-id_42, a@b.com,
  config.json) emit their parts AND the parts joined into one term, so "alice dev", "alice_dev" and
  "@alice_dev" all meet, and the joined term ranks the exact identifier first. Letter+digit words
  (pr342, k8s) also emit their letter and digit runs, so "PR342" meets "PR #342".
- Han text: jieba search-mode words, plus every Han character and every adjacent pair of Han characters
  on the index side. Why: jieba's segmentation depends on context, so a word in a query is not always a
  word in the record (the query 小明 against a record with 王小明, which jieba keeps whole; an unknown
  name segmented one way alone and another way in a sentence). The query side emits jieba words and, for
  Han words longer than two characters, their pairs; since the index holds every pair and every single
  character, a record that contains a query's Han word as a substring is always found, while whole-word
  matches still score higher in BM25 (they match more terms).
- Japanese (a run of kana, possibly with Han): no segmenter, so every adjacent pair involving a kana
  character (across Han/kana boundaries too: 好き), a lone kana character as itself, and the Han sub-runs
  through the Han path. A query in kana therefore only ever emits terms containing kana.
- Hangul: the word and its syllable bigrams on both sides, since particles attach (커피를 meets 커피).
- Stopwords are kept in the index (BM25 already gives them almost no weight) and dropped from queries,
  unless the query has nothing else: "the who" must still find "The Who".
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from typing import Literal

from openclaw_cli.memory.text import jieba_dictionary, scripts
from openclaw_cli.memory.text.stopwords import CHINESE_STOPWORDS, ENGLISH_STOPWORDS, LATIN_STOPWORDS

FTS_TOKENIZE = "unicode61 remove_diacritics 2"
# Bump whenever index_terms() gives different terms for some text: databases record the version their
# keyword index was written with, and `memory index` re-analyses an older one. 1 = before per-script runs.
ANALYSIS_VERSION = 2

MAX_QUERY_TERMS = 64
MAX_TERM_CHARS = 64  # longer words (hashes, base64 blobs) are cut; identically on both sides

Language = Literal["zh", "en", "mixed", "other"]

_HAN_CLASS = scripts.HAN_CLASS
_LATIN_LETTER = re.compile(r"[A-Za-z\u00c0-\u024f\u1e00-\u1eff]")
# A chunk is letters/digits joined by identifier punctuation: v2.3.1, user-id_42, a@b.com, main.py.
_CHUNK = re.compile(r"[^\W_]+(?:[._\-@/:+#]+[^\W_]+)*")
_ALNUM_RUN = re.compile(r"[^\W_]+")
_LETTERS_OR_DIGITS = re.compile(r"[^\W\d_]+|\d+")
_APOSTROPHE_IN_WORD = re.compile(r"(?<=[^\W_])['\u2019](?=[^\W_])")
_ASCII_WORD = re.compile(r"[a-z]+")
_WHITESPACE = re.compile(r"\s+")


@lru_cache(maxsize=1)
def _han_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(one Han char, a captured Han run, whitespace touching Han), compiled on first use: the astral
    ranges make each take milliseconds, which would otherwise be paid by every CLI start that imports us."""
    return (
        re.compile(f"[{_HAN_CLASS}]"),
        re.compile(f"([{_HAN_CLASS}]+)"),
        re.compile(f"\\s+(?=[{_HAN_CLASS}])|(?<=[{_HAN_CLASS}])\\s+"),
    )


# --------------------------------------------------------------------------- script detection


def has_han(text: str) -> bool:
    """True when the text contains at least one Han (Chinese) character."""
    # ASCII text holds none, and is known as such without a scan: a process that meets only ASCII (an
    # English or identifier search of English memories) never compiles the Han patterns (~7 ms).
    return not text.isascii() and _han_patterns()[0].search(text) is not None


# The speaker label a stored dialogue turn starts with ("User: …", "助手：…").
SPEAKER_LABEL = re.compile(r"^\s*(?:user|assistant|用户|助手)\s*[:：]\s*", re.IGNORECASE)


def without_speaker(text: str) -> str:
    """The text without the speaker label a stored dialogue turn starts with."""
    return SPEAKER_LABEL.sub("", text, count=1)


def detect_language(text: str) -> Language:
    """Classify by script: Han only -> zh, Latin letters only -> en, both -> mixed, neither -> other.

    A leading speaker label is left out: "User: 准备换跑鞋" is a Chinese turn, not mixed text. Read as
    mixed, its English model vector (built from unknown tokens) was trusted at half weight and the
    cross-language bonus skipped, so English questions could not find Chinese turns.
    """
    folded = unicodedata.normalize("NFKC", without_speaker(text))
    han = has_han(folded)
    latin = _LATIN_LETTER.search(folded) is not None
    if han and latin:
        return "mixed"
    if han:
        return "zh"
    if latin:
        return "en"
    return "other"


# --------------------------------------------------------------------------- terms


def index_terms(text: str) -> str:
    """The space-separated term string to store in the FTS5 column for a record's text."""
    return " ".join(term for term, _ in _analyse(text, for_query=False))


def query_terms(text: str) -> list[str]:
    """The normalised, de-duplicated terms of a query, in order; stopwords dropped unless that empties it."""
    analysed = list(_analyse(text, for_query=True))
    content = [term for term, is_stop in analysed if not is_stop]
    chosen = content if content else [term for term, _ in analysed]
    return _dedupe(chosen)[:MAX_QUERY_TERMS]


def typed_words(text: str) -> list[tuple[str, list[str]]]:
    """Each word of a query as it was typed, with the terms the analysis made of it (a stem, the pairs
    of a Chinese word, the parts of an identifier), for --explain: `coffee` was searched as `coffe`,
    编辑器 as 编辑器, 编辑 and 辑器. Analysed one script run at a time, as `query_terms` does."""
    words: list[tuple[str, list[str]]] = []
    for kind, run in scripts.runs(unicodedata.normalize("NFKC", text)):
        if kind == "han":
            pieces = [w for w in jieba_dictionary.segmenter().lcut(run) if w.strip()]
            words += [(w, [t for t, _ in _han_terms(w, for_query=True)]) for w in pieces]
        elif kind != "other":
            words.append((run, [t for t, _ in _analyse(run, for_query=True)]))
        else:
            segment = _APOSTROPHE_IN_WORD.sub("", run)
            language = scripts.latin_language(segment.casefold())
            for chunk in _CHUNK.finditer(segment):
                parts = _ALNUM_RUN.findall(chunk.group().casefold())
                terms = [t for part in parts for t, _ in _part_terms(part, language, for_query=True)]
                if len(parts) > 1:
                    terms.append(_cap("".join(_strip_diacritics(p) for p in parts)))
                words.append((chunk.group(), _dedupe(terms)))
    return words


def is_stopword(term: str) -> bool:
    """True for an analysed query term that is an English or Chinese stopword."""
    return term in ENGLISH_STOPWORDS or _chinese_stopword(term)


def _chinese_stopword(word: str) -> bool:
    """A Chinese stopword, or one particle repeated (啊啊啊, 哈哈哈: an interjection, not a topic)."""
    return word in CHINESE_STOPWORDS or (len(set(word)) == 1 and word[0] in CHINESE_STOPWORDS)


def fts_match(terms: Sequence[str]) -> str | None:
    """A MATCH expression that is always valid FTS5: each term a quoted string, joined with OR.

    Inside double quotes FTS5 treats everything (*, -, :, ^, NEAR, AND, parentheses) as text, so only
    the quote itself needs escaping (doubled). NUL would end the SQL string early, and other control
    characters and lone surrogates are never useful, so they are removed; terms left empty are skipped.
    """
    cleaned = match_terms(terms)
    if not cleaned:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in cleaned)


def match_terms(terms: Sequence[str]) -> list[str]:
    """The terms a keyword match looks for: control characters and lone surrogates removed, empty terms
    skipped, each once, at most MAX_QUERY_TERMS (every backend's keyword index matches these)."""
    return _dedupe(term for term in (_strip_unsafe(t) for t in terms) if term)[:MAX_QUERY_TERMS]


def _strip_unsafe(term: str) -> str:
    kept = "".join(ch for ch in term if unicodedata.category(ch) not in ("Cc", "Cs"))
    return kept.strip()


def _dedupe(terms: Iterator[str] | Sequence[str]) -> list[str]:
    return list(dict.fromkeys(terms))


def _analyse(text: str, *, for_query: bool) -> Iterator[tuple[str, bool]]:
    """Yield (term, is_stopword) in text order, each run of the text analysed by its script."""
    for kind, run in scripts.runs(_fold(text)):
        if kind == "han":
            yield from _han_terms(run, for_query=for_query)
        elif kind == "japanese":
            yield from _japanese_terms(run, for_query=for_query)
        elif kind == "hangul":
            yield from ((term, False) for term in scripts.hangul_terms(_cap(run)))
        else:
            yield from _word_terms(run, for_query=for_query)


def _fold(text: str) -> str:
    """NFKC (full-width -> ASCII, compatibility ideographs -> unified) and casefold."""
    return unicodedata.normalize("NFKC", text).casefold()


# --------------------------------------------------------------------------- Latin and other spaced scripts


def _word_terms(segment: str, *, for_query: bool) -> Iterator[tuple[str, bool]]:
    segment = _APOSTROPHE_IN_WORD.sub("", segment)
    language = scripts.latin_language(segment)
    for chunk in _CHUNK.findall(segment):
        yield from _chunk_terms(chunk, language, for_query=for_query)


# A chunk is mostly one word, and words repeat: looked up whole, a chunk's terms cost one dictionary
# lookup instead of a regex and a lookup per part (a third of a bulk load's analysis per record).
@lru_cache(maxsize=50_000)
def _chunk_terms(chunk: str, language: str | None, *, for_query: bool) -> tuple[tuple[str, bool], ...]:
    parts = _ALNUM_RUN.findall(chunk)
    terms = [term for part in parts for term in _part_terms(part, language, for_query=for_query)]
    if len(parts) > 1:
        terms.append((_cap("".join(_strip_diacritics(p) for p in parts)), False))
    return tuple(terms)


# Words repeat across a store's texts, and stemming each again was most of a bulk load's analysis time.
@lru_cache(maxsize=50_000)
def _part_terms(part: str, language: str | None, *, for_query: bool) -> tuple[tuple[str, bool], ...]:
    raw = _cap(part)
    word = scripts.strip_diacritics(raw)
    is_stop = _is_stopword(raw, word, language)
    terms = [(form, is_stop) for form in _latin_forms(raw, word, language, for_query=for_query)]
    pieces = _LETTERS_OR_DIGITS.findall(word)
    if len(pieces) > 1:  # pr342 -> pr, 342; k8s -> 8 (single letters are noise)
        terms += [(_stem_if_latin(p), False) for p in pieces if p.isdigit() or len(p) > 1]
    return tuple(terms)


def _is_stopword(raw: str, word: str, language: str | None) -> bool:
    if language is None or language == "en":
        return word in ENGLISH_STOPWORDS
    return raw in LATIN_STOPWORDS[language]


def _latin_forms(raw: str, word: str, language: str | None, *, for_query: bool) -> list[str]:
    """The terms of one Latin word. English (and text whose language is undecided) is indexed as English
    stems, as before; other languages as the folded word plus that language's stem. A query emits the
    English stem, and unless it is decidedly English also the folded word (which meets any language's
    index) and its own language's stem: so "running" meets "runs", and "maisons" or "hauser" meet
    French and German records whether or not the query alone reveals its language.
    """
    if not _ASCII_WORD.fullmatch(word):
        return [word]
    english = _stem(word, "en")
    if language is None or language == "en":
        return [english, word] if for_query and language is None else [english]
    own = _strip_diacritics(_stem(raw, language))  # the stemmer knows its language's diacritics
    return _dedupe([english, word, own] if for_query else [word, own])


def _strip_diacritics(word: str) -> str:
    """naïve -> naive, for Latin words only (other scripts' marks are part of the letter)."""
    return scripts.strip_diacritics(_cap(word))


def _cap(word: str) -> str:
    return word[:MAX_TERM_CHARS]


def _stem_if_latin(word: str) -> str:
    if _ASCII_WORD.fullmatch(word):
        return _stem(word, "en")
    return word


@lru_cache(maxsize=20_000)
def _stem(word: str, language: str) -> str:
    return _stemmer(language)(word)


@lru_cache(maxsize=8)
def _stemmer(language: str) -> Callable[[str], str]:
    from openclaw_cli.memory.text.stemmers import stemmer  # only search needs it

    return stemmer(scripts.SNOWBALL_NAMES[language])


# --------------------------------------------------------------------------- Han


def _han_terms(run: str, *, for_query: bool) -> Iterator[tuple[str, bool]]:
    words = [word for word in jieba_dictionary.segmenter().cut_for_search(run) if word.strip()]
    for word in words:
        stop = _chinese_stopword(word)
        yield word, stop
        if for_query and len(word) > 2:
            yield from ((pair, stop) for pair in _pairs(word))
    if not for_query:
        known = set(words)
        yield from ((ch, False) for ch in run if ch not in known)
        yield from ((pair, False) for pair in _pairs(run) if pair not in known)


def _pairs(run: str) -> list[str]:
    return [run[i : i + 2] for i in range(len(run) - 1)]


# --------------------------------------------------------------------------- Japanese


def _japanese_terms(run: str, *, for_query: bool) -> Iterator[tuple[str, bool]]:
    """Kana bigrams (including pairs across a Han/kana boundary) on both sides, a lone kana character as
    itself, and the Han sub-runs through the Han path. A query skips single Han characters between kana:
    its boundary bigrams carry them (好き), and alone they would match unrelated Chinese records."""
    for is_kana, sub in scripts.japanese_subruns(run):
        if not is_kana and (len(sub) > 1 or not for_query):
            yield from _han_terms(sub, for_query=for_query)
        elif is_kana and len(sub) == 1 and (not for_query or len(run) == 1):
            yield sub, False
    yield from ((pair, False) for pair in scripts.kana_bigrams(run))


# --------------------------------------------------------------------------- exact dedup


def normalise_l0(text: str) -> str:
    """NFKC, casefold, punctuation and control characters to spaces, invisible format characters
    removed, whitespace collapsed, no spaces next to Han characters.

    Punctuation becomes a space rather than nothing so "tea,coffee" equals "tea, coffee"; spaces next to
    Han are dropped because Chinese does not use them ("用 Go 写" equals "用Go写").
    """
    folded = _fold(text)
    # Per character only where needed: ASCII text (most of it) goes through one table.
    no_punct = folded.translate(_ASCII_L0) if folded.isascii() else "".join(map(_l0_char, folded))
    collapsed = _WHITESPACE.sub(" ", no_punct).strip()
    return _han_patterns()[2].sub("", collapsed)


@lru_cache(maxsize=4096)
def _l0_char(ch: str) -> str:
    category = unicodedata.category(ch)
    if category.startswith("P") or category == "Cc":
        return " "
    # Zero-width spaces/joiners are invisible; a lone surrogate (possible in JSON input) cannot be encoded.
    return "" if category in ("Cf", "Cs") else ch


_ASCII_L0 = str.maketrans({chr(n): _l0_char(chr(n)) for n in range(128)})


def l0_hash(text: str) -> str:
    """sha256 hex digest of normalise_l0(text): equal for texts that differ only in case, spacing or
    punctuation."""
    return hashlib.sha256(normalise_l0(text).encode("utf-8")).hexdigest()
