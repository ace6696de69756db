"""The values a memory states, and whether two memories state different ones.

A cosine cannot see that "passport number is ALICEHKPASS4417" and "… ALICEWSPASS4417" differ: one token
in ten, 0.97 apart. Two texts whose value tokens differ are never the same meaning (issue 48 item 1,
seed 000 §6.2 trap 1): a number (decimals, times, amounts with their currency, Chinese numerals), an
identifier mixing letters and digits, an e-mail address or URL, a date word, a proper name, a negation.
When the rest of the two texts is the same, the second is a new value of the same fact
(`ValueChange.same_fact`); the write path then replaces a profile fact (with a history row) or keeps the
new value beside the old one, and never drops it as a duplicate.

Tokens that one language cannot write are compared only between texts that can both write them: Latin
proper names only when both texts have Latin words ("Lives in Berlin" / "住在柏林" is a translation, not a
new city), Chinese names only between Chinese texts, and a negation by polarity across languages.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from openclaw_cli.memory.text.analysis import normalise_l0
from openclaw_cli.memory.text.subject import SURNAMES
from openclaw_cli.memory.text.words import words

# What each kind of token is replaced with when the rest of two texts is compared.
_PLACEHOLDER = {"address": "§a", "amount": "§m", "time": "§t", "number": "§n", "id": "§i", "date": "§d"}

_ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|https?://\S+|www\.\S+", re.I)
_CURRENCY = {"$": "$", "€": "€", "£": "£", "¥": "¥", "￥": "¥"}
_CURRENCY_WORDS = {
    "元": "¥",
    "块": "¥",
    "块钱": "¥",
    "人民币": "¥",
    "rmb": "¥",
    "yuan": "¥",
    "美元": "$",
    "dollars": "$",
    "dollar": "$",
    "usd": "$",
    "欧元": "€",
    "euros": "€",
    "euro": "€",
    "eur": "€",
    "英镑": "£",
    "pounds": "£",
    "gbp": "£",
}
_NUM = r"\d+(?:[.,]\d+)*"
_AMOUNT = re.compile(
    rf"(?P<sym>[$€£¥￥])\s*(?P<a>{_NUM})(?P<k>[kKmM]\b)?"
    rf"|(?P<b>{_NUM})\s*(?P<word>块钱|元|块|人民币|美元|欧元|英镑|(?i:rmb|yuan|dollars?|usd|euros?|eur|pounds|gbp)\b)"
)
_TIME = re.compile(
    r"(?P<h>\d{1,2})(?:[:.](?P<m>\d{2}))?\s*(?P<ap>[ap])\.?\s?m\b\.?|(?P<h24>\d{1,2}):(?P<m24>\d{2})", re.I
)
# An identifier mixes letters and digits ("ALICEV1PASS4417", "B-12", "14C", "UA123"); a number with a
# unit or an ordinal ("72.5kg", "3rd") is a number.
_WORDISH = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_NUMBER_WITH_UNIT = re.compile(r"(\d+(?:[.,]\d+)*)(?:st|nd|rd|th|[a-z]{1,3})", re.I)
_NUMBER = re.compile(_NUM)
_CN_VALUES = {
    ch: n
    for n, chars in enumerate(("零〇", "一", "二两", "三", "四", "五", "六", "七", "八", "九"))
    for ch in chars
}
_CN_DIGITS = "".join(_CN_VALUES)
_CN_NUMBER = re.compile(rf"[{_CN_DIGITS}十百千万亿]+(?=[点时号日月年岁元块分个位次周天倍斤只条张本件台辆])")
# Date words: the relative ones in any case, months and weekdays when capitalised ("may", "march",
# "sun" in lower case are other words).
_EN_RELATIVE = words(
    "today tonight tomorrow yesterday weekend morning afternoon evening noon midnight"
    " monday tuesday wednesday thursday friday saturday sunday"
)
_EN_CALENDAR = _EN_RELATIVE | words(
    "january february march april may june july august september october november december"
    " jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun"
)
_EN_RELATIVE_DATE = re.compile(r"(?<![A-Za-z])(?:" + "|".join(sorted(_EN_RELATIVE)) + r")(?![A-Za-z])", re.I)
_ZH_DATE = re.compile(r"(?:周|星期|礼拜)[一二三四五六日天]|今天|明天|后天|昨天|前天|今晚|明晚|上午|下午")
# Negations, longest first; "n't" folds to "not".
_EN_NEGATION = re.compile(
    r"\b(?:no\s+longer|not|never|no|none|nobody|nothing|neither|nor|cannot|without|anymore)\b|n[’']t\b", re.I
)
_ZH_NEGATION = re.compile(
    r"不再|再也不|从不|从没|从未|没有|没|(?<!得)不(?!错|过|少|久|同|断|仅|管|然|论|如|得不)|别|未|无(?!论)"
)
# Capitalised words that are grammar or the user, not a name.
_NOT_NAMES = words(
    "User User's Users The A An I My He She They It This That These Those Their His Her Our We"
)
# A capitalised Latin word, also inside Chinese text ("用Go写"), where \b sees no boundary.
_LATIN_NAME = re.compile(r"(?<![A-Za-z0-9_'’-])[A-Z][A-Za-z0-9_'’-]*")
_HAN = re.compile(r"[\u4e00-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_ZH_SURNAMES = "".join(sorted(SURNAMES | set("兰蓝岳文柳童骆阎葛洪包左石")))
_HONORIFIC = r"先生|女士|小姐|医生|大夫|老师|经理|律师|教授|师傅|总|阿姨|叔叔|太太|同学"
_ZH_NAME = re.compile(
    rf"(?:姓|名叫|叫)(?P<after>[\u4e00-\u9fff]{{1,3}})|(?P<title>(?:老)?[{_ZH_SURNAMES}])(?={_HONORIFIC})|老(?P<old>[{_ZH_SURNAMES}])"
)
_NOT_A_NAME = set("叫是在住说和跟与也都要会就还又才今明昨每这那去来有对最很不没把被给让从的了着过们上下，。")


@dataclass(frozen=True)
class Token:
    kind: str  # address, amount, time, number, id, date, name, negation
    value: str  # folded: compared as is


@dataclass(frozen=True)
class ValueChange:
    """What differs between an old and a new text's values."""

    old: tuple[str, ...]
    new: tuple[str, ...]
    same_fact: bool  # the rest of the two texts is the same: a new value of one fact

    def describe(self) -> str:
        old = ", ".join(self.old) or "nothing"
        new = ", ".join(self.new) or "nothing"
        return f"{old} -> {new}"


def value_change(new: str, old: str) -> ValueChange | None:
    """How `new` states other values than `old`, or None when they state the same ones."""
    a, b = _analysed(new), _analysed(old)
    latin = bool(_LATIN_WORD.search(new)) and bool(_LATIN_WORD.search(old))
    han = bool(_HAN.search(new)) and bool(_HAN.search(old))
    mono = _script(new) == _script(old)
    mine = [t for t in a.tokens if _comparable(t, latin, han, mono)]
    theirs = [t for t in b.tokens if _comparable(t, latin, han, mono)]
    mine, theirs = _without_shared_words(mine, old), _without_shared_words(theirs, new)
    if not mono:  # across languages a negation counts by its presence alone
        mine = [Token("negation", "neg") if t.kind == "negation" else t for t in mine]
        theirs = [Token("negation", "neg") if t.kind == "negation" else t for t in theirs]
        mine = list(dict.fromkeys(mine))
        theirs = list(dict.fromkeys(theirs))
    # The same fact needs more than a bare value: "Lin" / "Lan" alone say nothing about what they are.
    same_rest = mono and a.skeleton == b.skeleton
    same = same_rest and len(a.skeleton.split()) + len(a.skeleton) // 4 >= 2
    if same_rest and a.head and b.head and a.head != b.head:  # "Lin is my manager" / "Lan is my manager"
        mine, theirs = [*mine, Token("name", a.head)], [*theirs, Token("name", b.head)]
    gained, lost = Counter(mine) - Counter(theirs), Counter(theirs) - Counter(mine)
    if not gained and not lost:
        return None
    return ValueChange(
        tuple(_shown(t) for t in lost.elements()), tuple(_shown(t) for t in gained.elements()), same
    )


def _shown(token: Token) -> str:
    return "not" if token.kind == "negation" and token.value == "neg" else token.value


def _script(text: str) -> str:
    return "han" if _HAN.search(text) else "latin"


def _comparable(token: Token, latin: bool, han: bool, mono: bool) -> bool:
    if token.kind == "name":
        return latin if not _HAN.search(token.value) else han
    if token.kind == "date" and not _HAN.search(token.value):
        return latin
    if token.kind == "date":
        return han
    return True


def _without_shared_words(tokens: list[Token], other: str) -> list[Token]:
    """A capitalised word the other text has in lower case ("Prefers" / "the user prefers") is the start
    of a sentence, not a name."""
    lowered = set(re.findall(r"[a-z][a-z0-9'’-]*", other.lower()))
    return [t for t in tokens if t.kind != "name" or _HAN.search(t.value) or t.value.lower() not in lowered]


@dataclass(frozen=True)
class _Analysis:
    tokens: tuple[Token, ...]
    skeleton: str  # the text with each value replaced by its kind, normalised
    head: str | None = None  # a capitalised first word, compared only when the rest is the same


@lru_cache(maxsize=4096)
def _analysed(text: str) -> _Analysis:
    """The value tokens of `text`, in order, and the text with each replaced by its kind."""
    # Chinese numerals as digits first: "三千块" is "3000块" (an amount), "三点" is "3点".
    rest = _CN_NUMBER.sub(lambda m: _chinese_number(m.group(0)), unicodedata.normalize("NFKC", text))
    tokens: list[Token] = []

    def take(pattern: re.Pattern[str], kind: str, fold: object) -> None:
        nonlocal rest

        def replace(match: re.Match[str]) -> str:
            value = fold(match)  # type: ignore[operator]
            if value is None:
                return match.group(0)
            tokens.append(Token(kind, value))
            return f" {_PLACEHOLDER.get(kind, '')} " if kind in _PLACEHOLDER else " "

        rest = pattern.sub(replace, rest)

    take(_ADDRESS, "address", lambda m: m.group(0).lower().rstrip(".,;"))
    take(_AMOUNT, "amount", _amount)
    take(_TIME, "time", _time)
    take(_WORDISH, "id", _identifier)
    take(_NUMBER_WITH_UNIT, "number", lambda m: _number(m.group(1)))
    take(_NUMBER, "number", lambda m: _number(m.group(0)))
    take(
        _ZH_DATE, "date", lambda m: m.group(0).replace("星期", "周").replace("礼拜", "周").replace("天", "日")
    )
    take(_EN_RELATIVE_DATE, "date", lambda m: m.group(0).lower())
    take(_ZH_NAME, "name", _chinese_name)
    take(
        _EN_NEGATION,
        "negation",
        lambda m: "not" if m.group(0).lower() in ("n't", "n’t", "cannot") else m.group(0).lower(),
    )
    take(_ZH_NEGATION, "negation", lambda m: m.group(0))
    head: str | None = None
    for match in _LATIN_NAME.finditer(rest):
        word = match.group(0)
        bare = word[:-2] if word.endswith(("'s", "’s")) else word
        if word in _NOT_NAMES or bare in _NOT_NAMES:
            continue
        if bare.lower() in _EN_CALENDAR:
            tokens.append(Token("date", bare.lower()))
        elif rest[: match.start()].strip():
            tokens.append(Token("name", bare))
        else:
            head = bare  # the first word: a name ("Lin is …") or a capitalised verb ("Prefers …")
    names = {t.value for t in tokens if t.kind == "name"}
    skeleton = _LATIN_NAME.sub(lambda m: "§p" if _named(m.group(0), names) else m.group(0), rest.strip())
    if head is not None:
        skeleton = re.sub(r"^\s*" + re.escape(head), "§h", skeleton)
    # A sentence-final particle changes no fact: "不再喜欢咖啡了" / "喜欢咖啡".
    return _Analysis(tuple(tokens), normalise_l0(_ZH_FINAL.sub("", skeleton)), head)


_ZH_FINAL = re.compile(r"[了啦呢吧啊呀哦]+(?=[\s。！!.，,]*$)")


def _named(word: str, names: set[str]) -> bool:
    bare = word[:-2] if word.endswith(("'s", "’s")) else word
    return bare in names or bare.lower() in _EN_CALENDAR


def _amount(match: re.Match[str]) -> str:
    if match.group("sym"):
        scale = {"k": "000", "m": "000000"}.get((match.group("k") or "").lower(), "")
        return _CURRENCY[match.group("sym")] + _number(match.group("a")) + scale
    return _CURRENCY_WORDS[match.group("word").lower()] + _number(match.group("b"))


def _time(match: re.Match[str]) -> str:
    if match.group("h24") is not None:
        return f"{int(match.group('h24'))}:{match.group('m24')}"
    hour = int(match.group("h")) % 12 + (12 if match.group("ap").lower() == "p" else 0)
    return f"{hour}:{match.group('m') or '00'}"


def _identifier(match: re.Match[str]) -> str | None:
    token = match.group(0).strip("-_")
    if not (re.search(r"\d", token) and re.search(r"[A-Za-z]", token)):
        return None
    if _NUMBER_WITH_UNIT.fullmatch(token):
        return None  # "72kg", "3rd": a number, taken next
    return token.upper()


def _number(text: str) -> str:
    """ "1,250.50" -> "1250.5", "03" -> "3": written differently, the same number."""
    digits = text.replace(",", "") if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", text) else text
    digits = digits.replace(",", ".")
    if "." in digits:
        whole, _, fraction = digits.partition(".")
        fraction = fraction.rstrip("0")
        return f"{int(whole) if whole.isdigit() else whole}" + (f".{fraction}" if fraction else "")
    return str(int(digits)) if digits.isdigit() else digits


def _chinese_number(text: str) -> str:
    """ "三" -> "3", "三千" -> "3000", "十五" -> "15"."""
    units = {"十": 10, "百": 100, "千": 1000, "万": 10_000, "亿": 100_000_000}
    total, section, digit = 0, 0, 0
    for ch in text:
        if ch in _CN_DIGITS:
            digit = _CN_VALUES[ch]
        elif ch in ("万", "亿"):
            total += (section + digit) * units[ch]
            section, digit = 0, 0
        else:
            section += (digit or 1) * units[ch]
            digit = 0
    return str(total + section + digit)


def _chinese_name(match: re.Match[str]) -> str | None:
    if match.group("title"):
        return match.group("title").lstrip("老")
    if match.group("old"):
        return match.group("old")
    name = ""
    for ch in match.group("after"):
        if ch in _NOT_A_NAME:
            break
        name += ch
    return name or None
