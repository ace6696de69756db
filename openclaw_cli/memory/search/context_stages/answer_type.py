"""What kind of answer a question asks for, and whether a memory could be that answer.

"When is my sister's wedding?" is answered by the turn that holds a date ("The wedding is on October
11"), not by the one that only names the wedding ("About the wedding speech..."), although the second
shares more words and meaning with the question. Four kinds are read, in English and Chinese: a time
(when, which day, 哪天, 什么时候), a quantity (how many, how long, 多少, 几岁), a place (where, which hotel,
在哪, 哪家) and a name (which tailor, what's the title, 叫什么, 哪个牌子). A memory that holds no expression of
the kind asked for is less likely to be the answer.
"""

from __future__ import annotations

import re
from typing import Literal

from openclaw_cli.memory.text.analysis import has_han, without_speaker

AnswerKind = Literal["time", "quantity", "span", "place", "name"]

_TIME_QUESTION = re.compile(
    # "when" as a question word, not as a conjunction ("what did I say when we met").
    r"^\s*when\b|\bwhen\s+(?:is|was|are|were|do|does|did|will|would|should|shall|can|could|has|have|had|am)\b"
    r"|\bwhen\s*\?|\bwhat (?:time|day|date|week|month|year)\b"
    r"|\bwhich (?:day|date|week|month|year|weekend)\b|\bhow soon\b|\bdates?\b"
    r"|哪天|哪一天|几号|几点|什么时候|啥时候|何时|哪[一个]?周|哪个月|哪年|几月|哪个周末|日期",
    re.IGNORECASE,
)
_QUANTITY_QUESTION = re.compile(
    r"\bhow (?:many|much|old|long|far|big|tall|often)\b|\bwhat size\b|\bwhat(?:'s| is| was| are)\b[^?]*\b(?:budget|price|cost)\b"
    r"|多少|几个|几岁|多大|多长|多久|多远|几天|几次|几[个只位台本张]|多高|多重",
    re.IGNORECASE,
)

_PLACE_QUESTION = re.compile(
    # "where" as a question word, not as a conjunction ("the town where she grew up").
    r"^\s*where\b|\bwhere\s+(?:is|was|are|were|do|does|did|will|would|should|can|could|has|have|had|am)\b"
    r"|\bwhere\s*\?|\bwhich (?:city|country|town|restaurant|hotel|place|venue|shop|store|hospital|school"
    r"|university)\b|哪里|哪儿|在哪|什么地方|哪个城市|哪座城市|哪家|哪个地方",
    re.IGNORECASE,
)

_NAME_QUESTION = re.compile(
    # "which X" for any X the kinds above do not cover (a tailor, an editor, a half marathon), except a
    # kind of thing, whose answer is a plain word: "which colour scheme" is answered by "dark".
    r"\bwhich (?!(?:day|date|week|month|year|weekend|city|country|town|restaurant|hotel|place|venue|shop"
    r"|store|hospital|school|university|colou?r|theme|scheme|mode|kind|type|sort|style|flavou?r|genre|size"
    r"|shape|format|way|side|part|option|setting)s?\b)[a-z]+"
    r"|\bwhat(?:'s| is| was) (?:the |his |her |my |our |their )?(?:[a-z]+'s )?(?:name|title|brand|model)\b"
    r"|\bwhat (?:brand|model|app|tool|book|podcast)\b|叫什么|什么名字|哪个牌子|什么牌子|哪款|哪个品牌|哪本|什么书",
    re.IGNORECASE,
)

# How long or how often: answered by a quantity ("three times a week") or a time ("every morning").
_SPAN_QUESTION = re.compile(r"\bhow (?:long|often)\b|多久|多长时间|多少次|多频繁|隔多久", re.IGNORECASE)


# The answer side is read per candidate (~150 a search), so English is matched as a set of words rather
# than one case-insensitive alternation (measured 2.2 ms for 150 memories that way, 0.6 ms this way; a warm searcher caches it).
def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_TIME_WORDS = _word_set(
    "january february march april may june july august september october november december"
    " jan feb mar apr jun jul aug sep sept oct nov dec"
    " monday tuesday wednesday thursday friday saturday sunday weekend weekday"
    " mondays tuesdays wednesdays thursdays fridays saturdays sundays weekends weekdays"
    " today tomorrow yesterday tonight morning afternoon evening noon midnight mornings evenings"
    # Relative times: "in 20 minutes", "two weeks ago", "since March".
    " minute minutes hour hours day days week weeks month months year years"
    " ago since until till soon later daily weekly monthly yearly"
)
_NUMBER_WORDS = _word_set(
    "one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty"
    " hundred thousand million dozen half once twice"
)
_PLACE_WORDS = _word_set(
    "road street avenue lane city town village hotel restaurant cafe bar pub home office near venue station"
    " airport hospital clinic school university park district province country downtown mall shop store gym"
    " studio apartment flat house"
)
_WORD = re.compile(r"[a-z]+")
_DIGIT = re.compile(r"\d")  # a scan in C: a generator over the characters cost ~0.7 ms a search
# A capitalised word after the first of its sentence: most often a name, and names of places are names.
_NAME_INSIDE = re.compile(r"(?<![.!?:]\s)(?<!^)\b[A-Z][a-z]+")
_HAN_PLACE = re.compile(r"[市省区县路街店馆楼园寺山湖江村镇院场站厅里]|[那这]家|在[^，。,.!?！？]{1,10}")
# A name in Chinese text: a Latin-script word (Hoka, Goland), or a word that introduces or ends one.
_HAN_NAME = re.compile(r"[A-Za-z]{2,}|叫|名为|名字|牌子|品牌|公司|店|馆")
_QUOTED = re.compile(r"[\"“”《》「」]")
_DIGIT_TIME = re.compile(
    r"\d{1,2}(?:st|nd|rd|th)\b|\d{1,2}(?::\d\d)?\s?(?:am|pm)\b|\d{1,2}:\d\d|\b(?:19|20)\d\d\b"
)
_HAN_TIME = re.compile(
    r"[0-9一二三四五六七八九十两]+\s*[月日号点年]|周\s*[一二三四五六日天末]|星期|礼拜"
    r"|今天|明天|后天|昨天|前天|今晚|明晚|下周|上周|这周|本周|下个月|上个月|月底|月初|年底|元旦|春节|国庆|中秋"
    r"|早上|上午|中午|下午|晚上|凌晨|周末|以后|之后|以前|之前|后来|马上|刚才"
)
_HAN_QUANTITY = re.compile(
    r"[一二三四五六七八九十两百千万半]+\s*[多余来]?\s*(?:分钟|小时|钟头|星期|公里|千米|厘米|公斤|千克"
    r"|[个只位次天年岁块元分秒米斤克号点周月倍层台本张杯瓶碗遍页篇件双套份间家场节门夜晚步圈趟口人辆])"
)


def _holds_time(text: str, lower: str, words: frozenset[str]) -> bool:
    if words & _TIME_WORDS:
        return True
    if _DIGIT.search(lower) and _DIGIT_TIME.search(lower):
        return True
    return bool(has_han(text) and _HAN_TIME.search(text))


def _holds_quantity(text: str, lower: str, words: frozenset[str]) -> bool:
    if _DIGIT.search(lower) or words & _NUMBER_WORDS:
        return True
    return bool(has_han(text) and _HAN_QUANTITY.search(text))


def _holds_place(text: str, words: frozenset[str]) -> bool:
    if words & _PLACE_WORDS:
        return True
    body = without_speaker(text)
    if _NAME_INSIDE.search(body[1:]):
        return True
    return bool(has_han(text) and _HAN_PLACE.search(text))


def _holds_name(text: str) -> bool:
    """Generous: a title in quotes, a capitalised word inside a sentence, a Chinese name, any digit
    (PR #351, G1374, Clifton 9)."""
    body = without_speaker(text)
    if _QUOTED.search(body) or _NAME_INSIDE.search(body[1:]) or _DIGIT.search(body):
        return True
    return bool(has_han(body) and _HAN_NAME.search(body))


def asked_for(query: str) -> AnswerKind | None:
    """The kind of answer the query asks for, when it is one of the kinds read here."""
    if _SPAN_QUESTION.search(query):
        return "span"
    if _TIME_QUESTION.search(query):
        return "time"
    if _QUANTITY_QUESTION.search(query):
        return "quantity"
    if _PLACE_QUESTION.search(query):
        return "place"
    if _NAME_QUESTION.search(query):
        return "name"
    return None


def could_answer(kind: AnswerKind, text: str) -> bool:
    """Whether the text holds an expression of that kind. Generous on purpose: a text wrongly said to
    hold one only keeps the ranking it had, while one wrongly said to hold none is pushed down. A span
    ("how often") is answered by either a time or a quantity ("every morning", "twice a week"). Only the
    kind asked for is read: a search reads ~150 memories, and reading all four kinds took ~3 ms."""
    if kind == "name":
        return _holds_name(text)
    lower = text.lower()
    words = frozenset(_WORD.findall(lower))
    if kind == "place":
        return _holds_place(text, words)
    if kind == "time":
        return _holds_time(text, lower, words)
    if kind == "quantity":
        return _holds_quantity(text, lower, words)
    return _holds_time(text, lower, words) or _holds_quantity(text, lower, words)
