"""Whether a query is made of real words: what tells a question from nonsense when no memory holds any of
its words (stages.unmatched_floor).

Such a query has only its meaning to go on, and the embedders find a "nearest" memory for anything: that
is why it is held to the high `unmatched_floor`. But a new user's real question often shares no word with
the memory that answers it ("do I eat meat?" against "User is vegetarian and avoids fish"), and the floor
kept it out. Nonsense is made of words no language has ("asdfgh qwerty", "lorem ipsum", "blorp", "xkcd
927") or of one word alone ("whatever", 随便, "hello?"); a real question has at least two content words,
nearly all of which a dictionary lists. The dictionaries are those the package already ships: the English
words of the MiniLM tokenizer's WordPiece vocabulary (21,746 whole words, read on the first unmatched
English query: 30-50 ms under load, 3.3 MB held, 7.7 MB at peak) and jieba's dictionary for Chinese
(already loaded by then). A call costs ~35 us once they are read (benchmarks/test_bench_paraphrase.py).

Measured with the default embedder: of the eval's 46 nonsense queries (both halves and
nonsense_unseen.jsonl), 31 are unmatched and 2 of those read as words ("purple monkey dishwasher", "flux
capacitor zebra"; both stay under the relevance floor, and all 41 that were empty stay empty). Of the
unmatched real questions, 8 of the eval's 14 and all 5 of fixtures/paraphrase's read as words.
"""

from __future__ import annotations

import functools
import re

from openclaw_cli.memory.text.analysis import is_stopword, typed_words
from openclaw_cli.memory.text.jieba_dictionary import in_dictionary
from openclaw_cli.memory.text.scripts import HAN_CLASS

MIN_KNOWN = 2  # content words a query must have in a dictionary: one word alone says too little
KNOWN_SHARE = 2 / 3  # and the share of its content words they must be (a name or a brand may be missing)

_LATIN = re.compile(r"[a-z]+")
_HAN = re.compile(f"[{HAN_CLASS}]+")
_PARTS = re.compile(r"[^\W_]+")
# The vocabulary's whole words, as tokenizer.json writes them: "word": id (the pieces are "##word").
_VOCAB_ENTRY = re.compile(r'"([a-z]+)":')


def reads_as_words(query: str) -> bool:
    """True when at least MIN_KNOWN of the query's content words, and KNOWN_SHARE of them, are words of
    English or Chinese that a dictionary lists."""
    words = content_words(query)
    known = sum(is_known(word) for word in words)
    return known >= MIN_KNOWN and known >= KNOWN_SHARE * len(words)


def content_words(query: str) -> list[str]:
    """The query's distinct words as typed (jieba's words for Chinese), casefolded, without stopwords."""
    words: list[str] = []
    for typed, _ in typed_words(query):
        word = typed.casefold()
        # "long-distance", "e-mail": each part is a word of its own; a Chinese word stays whole
        words += [word] if _HAN.fullmatch(word) else _PARTS.findall(word)
    return [word for word in dict.fromkeys(words) if not is_stopword(word)]  # 好的好的 is one word


def is_known(word: str) -> bool:
    if _HAN.fullmatch(word):
        return in_dictionary(word)
    if _LATIN.fullmatch(word):
        vocabulary = english_words()
        return word in vocabulary or any(
            word.endswith(suffix) and word[: -len(suffix)] + ending in vocabulary
            for suffix, ending in (("s", ""), ("es", ""), ("ies", "y"))
        )
    return False  # numbers, identifiers, kana, emoji: no dictionary to ask


@functools.cache
def english_words() -> frozenset[str]:
    """The whole English words of the packaged tokenizer's vocabulary (empty when it is not installed:
    then no English query reads as words, and the floor stays as high as before)."""
    from openclaw_cli.core.errors import StoreError
    from openclaw_cli.memory.embedding.onnx_embedder import local_model_files

    try:
        text = local_model_files()[1].read_text(encoding="utf-8")
    except (StoreError, OSError):
        return frozenset()
    start = text.find('"vocab"')
    return frozenset(_VOCAB_ENTRY.findall(text, start)) if start >= 0 else frozenset()
