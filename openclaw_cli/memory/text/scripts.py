"""Script runs and per-run analysis that needs no dictionary: kana (Japanese), Hangul (Korean), and the
language of a run of Latin words. text/analysis.py decides what each run becomes on the index and query side.

Why per run: one memory can mix scripts ("用TypeScript写前端", "私はコーヒーが好きです"), and each script
needs its own term scheme. Japanese has no segmenter here, so kana become character bigrams; Korean is
spaced but particles attach to words (커피를 = 커피 + 를), so a Hangul word also gives its syllable bigrams.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from typing import Literal

from openclaw_cli.memory.text.stopwords import LATIN_STOPWORDS

HAN_CLASS = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
# Hiragana, Katakana (with the prolonged sound mark ー, without the middle dot ・ which is punctuation),
# the phonetic extensions; half-width katakana are full-width after NFKC.
KANA_CLASS = r"\u3041-\u309f\u30a0-\u30fa\u30fc-\u30ff\u31f0-\u31ff"
HANGUL_CLASS = r"\uac00-\ud7af\u1100-\u11ff\u3131-\u318e\ua960-\ua97f\ud7b0-\ud7ff"

RunKind = Literal["han", "japanese", "hangul", "other"]


@lru_cache(maxsize=1)
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(a CJK-or-Hangul run, one kana char, kana/Han sub-runs), compiled on first use (astral ranges
    make compiling cost milliseconds, which every CLI start would otherwise pay)."""
    return (
        re.compile(f"(?P<cjk>[{HAN_CLASS}{KANA_CLASS}]+)|(?P<hangul>[{HANGUL_CLASS}]+)"),
        re.compile(f"[{KANA_CLASS}]"),
        re.compile(f"(?P<han>[{HAN_CLASS}]+)|(?P<kana>[{KANA_CLASS}]+)"),
    )


def runs(text: str) -> Iterator[tuple[RunKind, str]]:
    """Split folded text into runs: Han-only, Japanese (kana, possibly with Han), Hangul, and the rest."""
    run_pattern, kana, _ = _patterns()
    position = 0
    for match in run_pattern.finditer(text):
        if match.start() > position:
            yield "other", text[position : match.start()]
        if match.lastgroup == "hangul":
            yield "hangul", match.group()
        else:
            yield ("japanese" if kana.search(match.group()) else "han"), match.group()
        position = match.end()
    if position < len(text):
        yield "other", text[position:]


# --------------------------------------------------------------------------- Japanese


def japanese_subruns(run: str) -> Iterator[tuple[bool, str]]:
    """(is_kana, sub-run) of a Japanese run, in order."""
    for match in _patterns()[2].finditer(run):
        yield match.lastgroup == "kana", match.group()


def kana_bigrams(run: str) -> list[str]:
    """Adjacent pairs of a Japanese run that involve at least one kana character.

    Pairs across a Han/kana boundary (好き, 食べ) are what make an inflected word findable; pairs of two
    Han characters are left to the Han path, which already emits them on the index side.
    """
    is_kana = _patterns()[1].fullmatch
    return [run[i : i + 2] for i in range(len(run) - 1) if is_kana(run[i]) or is_kana(run[i + 1])]


# --------------------------------------------------------------------------- Korean


def hangul_terms(word: str) -> list[str]:
    """The word and its syllable bigrams: 커피를 -> 커피를, 커피, 피를, so 커피 meets it."""
    pairs = [word[i : i + 2] for i in range(len(word) - 1)] if len(word) > 2 else []
    return list(dict.fromkeys([word, *pairs]))


# --------------------------------------------------------------------------- Latin languages

# Letters that point to one language when seen in a word (shared ones like é, á, ç are no evidence).
_DIACRITIC_HINTS: dict[str, str] = {
    **dict.fromkeys("äöü", "de"),  # ß is "ss" after casefolding
    **dict.fromkeys("èêëîïœùûÿ", "fr"),
    **dict.fromkeys("ñ¿¡", "es"),
    **dict.fromkeys("ãõ", "pt"),
}
_LATIN_WORD = re.compile(r"[^\W\d_]+")
# word -> the languages it is a stopword of: one lookup per word instead of one per language
_STOPWORD_LANGUAGES: dict[str, tuple[str, ...]] = {
    word: tuple(lang for lang, words in LATIN_STOPWORDS.items() if word in words)
    for word in set().union(*LATIN_STOPWORDS.values())
}
SNOWBALL_NAMES: dict[str, str] = {
    "en": "english",
    "fr": "french",
    "de": "german",
    "es": "spanish",
    "it": "italian",
    "pt": "portuguese",
    "nl": "dutch",
}


def latin_language(segment: str) -> str | None:
    """The language of a run of (casefolded) Latin words, or None when the evidence does not decide.

    Evidence is stopwords and language-specific letters. A language is chosen when it has evidence and at
    least twice that of any other: a sentence decides, a one-word query ("maisons", "running") usually
    does not, and text/analysis.py makes both sides meet in that case.
    """
    scores = dict.fromkeys(SNOWBALL_NAMES, 0)
    for word in _LATIN_WORD.findall(segment):
        for language in _STOPWORD_LANGUAGES.get(word, ()):
            scores[language] += 1
        if not word.isascii():
            for language in {_DIACRITIC_HINTS[ch] for ch in word if ch in _DIACRITIC_HINTS}:
                scores[language] += 1
    ranked = sorted(scores.items(), key=lambda item: -item[1])
    (best, top), (_, second) = ranked[0], ranked[1]
    return best if top > 0 and top >= 2 * second else None


def strip_diacritics(word: str) -> str:
    """naïve -> naive, häuser -> hauser; a word that is not Latin after stripping keeps its marks."""
    if word.isascii():
        return word
    stripped = "".join(ch for ch in unicodedata.normalize("NFD", word) if unicodedata.category(ch) != "Mn")
    stripped = unicodedata.normalize("NFC", stripped).replace("ß", "ss").replace("œ", "oe")
    return stripped if stripped.isascii() else word
