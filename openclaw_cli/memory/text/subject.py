"""Whose memory is it: the user's own, or about someone in the user's life.

A user's store holds facts about the user ("Has a ginger cat named Niangao") beside facts about the
people around them ("Lin's neighbour Wang Hao has a grey cat named Mochi", "同事老周每天早上一杯气泡水").
Both embedders and keywords see the second as a near-perfect answer to "what is the name of his cat", so
search asks who each memory is about and who the query asks about, and a memory about somebody else
counts for less unless the query names that person or that relation (seed 000 §4.5: the user-vs-other
confusions are the typical failure of memory retrieval).

The subject is read from the head of the memory, in English or Chinese: an optional owner ("Lin's",
"His", "The user's", "林伟的"), a few modifiers ("old", "new", "组里的"), then a relation word from the
lexicon below ("friend", "同事") and usually a name. Names introduced that way make up the store's cast,
so that a later memory starting with the bare name ("高峰每天早上一杯冷萃", "Nina's wedding is ...") is
known to be about that person too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from openclaw_cli.memory.text.analysis import SPEAKER_LABEL, without_speaker

# Relation groups: a query naming one surface form is about every memory naming another of the group.
RELATIONS: dict[str, tuple[str, ...]] = {
    "spouse": ("wife", "husband", "spouse", "妻子", "老婆", "太太", "爱人", "丈夫", "老公"),
    "partner": (
        "partner",
        "girlfriend",
        "boyfriend",
        "fiancé",
        "fiancée",
        "fiance",
        "fiancee",
        "女朋友",
        "男朋友",
        "女友",
        "男友",
        "未婚妻",
        "未婚夫",
        "对象",
    ),
    "sibling": ("sister", "brother", "sibling", "姐姐", "妹妹", "哥哥", "弟弟", "姐妹", "兄弟姐妹"),
    "parent": (
        "parent",
        "mother",
        "father",
        "mum",
        "mom",
        "dad",
        "父母",
        "爸妈",
        "妈妈",
        "母亲",
        "爸爸",
        "父亲",
        "老妈",
        "老爸",
    ),
    # 小朋友 (a child) before 朋友 (a friend): the longer form is tried first.
    "child": ("daughter", "son", "kid", "child", "children", "女儿", "儿子", "孩子", "小孩", "小朋友"),
    "in-law": (
        "mother-in-law",
        "father-in-law",
        "sister-in-law",
        "brother-in-law",
        "岳母",
        "丈母娘",
        "岳父",
        "老丈人",
        "婆婆",
        "公公",
        "嫂子",
        "姐夫",
        "妹夫",
        "小舅子",
    ),
    "grandparent": (
        "grandmother",
        "grandfather",
        "grandma",
        "grandpa",
        "奶奶",
        "爷爷",
        "外婆",
        "外公",
        "姥姥",
        "姥爷",
    ),
    "relative": (
        "cousin",
        "uncle",
        "aunt",
        "niece",
        "nephew",
        "relative",
        "表哥",
        "表姐",
        "表妹",
        "表弟",
        "堂哥",
        "堂姐",
        "叔叔",
        "舅舅",
        "阿姨",
        "姑姑",
        "侄子",
        "侄女",
        "外甥女",
        "外甥",
        "亲戚",
    ),
    "friend": (
        "friend",
        "buddy",
        "roommate",
        "flatmate",
        "朋友",
        "好友",
        "室友",
        "闺蜜",
        "搭子",
        "发小",
        "哥们",
    ),
    "colleague": (
        "colleague",
        "coworker",
        "co-worker",
        "teammate",
        "manager",
        "boss",
        "hire",
        "intern",
        "同事",
        "领导",
        "老板",
        "上司",
        "组长",
        "实习生",
        "下属",
        "队友",
    ),
    "classmate": ("classmate", "schoolmate", "同学", "校友"),
    "neighbour": ("neighbour", "neighbor", "邻居"),
    "landlord": ("landlord", "landlady", "tenant", "房东", "房客", "租客"),
}

# A query naming the first group also asks about the second: "my partner" is often the spouse.
COVERS: dict[str, tuple[str, ...]] = {"partner": ("spouse",)}

# Leading words of a Chinese name that are grammar, not a name: "女儿叫朵朵" names 朵朵, not 叫朵.
NOT_A_NAME = set("叫是在住说和跟与也都要会就还又才今明昨每这那去来有对最很不没把被给让从的了着过们上下")
# The most common Chinese surnames (about nine in ten people carry one of them).
SURNAMES = set(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈"
    "姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
    "欧"
)
# Owners and modifiers allowed before the relation word.
_EN_OWNER = r"(?:(?i:(?:the\s+)?user's|his|her|their|my|our)|(?P<owner>[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?)'s)"
_EN_MODIFIERS = r"(?:[a-z][a-z-]*\s+){0,2}"
# \w rather than the Han class: compiling four repeats of the Han ranges cost ~15 ms on every cold search.
_ZH_OWNER = r"(?:(?P<owner>\w{1,4}?)的)?"
_ZH_MODIFIERS = r"(?:\w{1,3}?的|\w{0,2}?)"


@dataclass(frozen=True)
class Subject:
    """Who a text is about: `relation` (a RELATIONS key) and/or `name`; both None for the user. `owner`
    is a known person whose relation it is (何静的孩子: somebody else's child, not the user's)."""

    relation: str | None = None
    name: str | None = None
    owner: str | None = None

    @property
    def is_user(self) -> bool:
        return self.relation is None and self.name is None


USER = Subject()


# A Latin-script word ends where Latin letters end: "Bob住在哪里" names Bob, although \b (and \w)
# count Han characters as letters too.
_LATIN_LETTER = r"A-Za-z\u00c0-\u024f"
_NOT_AFTER_LATIN = rf"(?<![{_LATIN_LETTER}])"
_NOT_BEFORE_LATIN = rf"(?![{_LATIN_LETTER}])"


@lru_cache(maxsize=1)
def _surface_groups() -> dict[str, str]:
    return {form.lower(): group for group, forms in RELATIONS.items() for form in forms}


@lru_cache(maxsize=1)
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    forms = sorted(_surface_groups(), key=len, reverse=True)
    english = "|".join(re.escape(f) for f in forms if f.isascii())
    chinese = "|".join(re.escape(f) for f in forms if not f.isascii())
    en_head = re.compile(
        rf"^{_EN_OWNER}\s+{_EN_MODIFIERS}(?P<rel>(?i:{english}))(?:e?s)?\b"
        rf"(?:\s+(?:from|at|in)\s+[a-z]+)?(?:\s+(?P<name>[A-Z][\w-]*(?:\s+[A-Z][\w-]*)?))?"
    )
    zh_head = re.compile(rf"^{_ZH_OWNER}{_ZH_MODIFIERS}(?P<rel>{chinese})(?P<name>\w{{2}})?")
    en_any = re.compile(rf"{_NOT_AFTER_LATIN}(?P<rel>{english})(?:e?s)?{_NOT_BEFORE_LATIN}", re.IGNORECASE)
    zh_any = re.compile(rf"(?P<rel>{chinese})")
    return en_head, zh_head, en_any, zh_any


def _clean_name(name: str | None) -> str | None:
    """A Chinese name after a relation word, if it looks like one: a common surname, or 老/小/阿 and a
    character ("同事老周"). Without a segmenter this is what tells 邻居高峰 from 父母住在宁波."""
    if not name or name[0] in NOT_A_NAME:
        return None
    return name if name[0] in SURNAMES or name[0] in "老小阿" else None


def subject_of(text: str, cast: re.Pattern[str] | None = None) -> Subject:
    """Who a memory is about: a relation (and name) at its head, else a known name in it, else the user.
    `cast` is `cast_pattern(names)` of the store's known names."""
    head = without_speaker(text).strip()
    en_head, zh_head, _, _ = _patterns()
    for pattern in (en_head, zh_head):
        match = pattern.match(head)
        if match:
            group = _surface_groups()[match.group("rel").lower()]
            name = match.group("name")
            # "His friend from university Nina" vs "His friend is moving": a name is capitalised.
            if name and pattern is en_head and name.split()[0].lower() in _surface_groups():
                name = None
            owner = match.group("owner")
            known = owner if owner and cast is not None and cast.fullmatch(owner) else None
            return Subject(group, _clean_name(name) if pattern is zh_head else name, known)
    for mention in cast.finditer(head) if cast is not None else ():
        # A Latin name is capitalised and whole, so it is a person wherever it stands; a Chinese one has
        # no boundary (小组 would match 小组会议), so it counts only where a sentence starts with it.
        if mention.start() == 0 or not _han_name(mention.group(0)):
            return Subject(None, mention.group(0))
    return USER


def owner_of(text: str) -> str | None:
    """The name whose relation a memory's head names: "Lin" in "Lin's neighbour Wang Hao", 林伟 in
    林伟的同事老周. In a user's own store that is usually the user (store/people.py counts them)."""
    head = without_speaker(text).strip()
    en_head, zh_head, _, _ = _patterns()
    match = en_head.match(head)
    if match:
        return match.group("owner")
    match = zh_head.match(head)
    if match and match.group("owner"):
        owner = match.group("owner")
        return owner if _han_name(owner) and 2 <= len(owner) <= 3 and owner[0] in SURNAMES else None
    return None


@lru_cache(maxsize=16)
def cast_pattern(names: frozenset[str], ignore_case: bool = False) -> re.Pattern[str] | None:
    """One pattern finding any of `names`: a Latin name as a whole word, a Chinese one anywhere."""
    if not names:
        return None
    parts = [
        re.escape(name) if _han_name(name) else rf"{_NOT_AFTER_LATIN}{re.escape(name)}{_NOT_BEFORE_LATIN}"
        for name in sorted(names, key=len, reverse=True)
    ]
    return re.compile("|".join(parts), re.IGNORECASE if ignore_case else 0)


def _han_name(name: str) -> bool:
    return all("\u3400" <= ch <= "\u9fff" for ch in name)


@dataclass
class QuerySubject:
    """Who a query asks about: the relation groups and cast names it mentions (none: the user), and
    whether it refers to the user at all (a pronoun, "the user", one of the user's own names)."""

    relations: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    about_user: bool = True

    @property
    def is_user(self) -> bool:
        return not self.relations and not self.names


# Words by which a query refers to the user (or, from the assistant, "you"). A query with none of them
# and nobody named ("钢琴", "dark mode") asks about a topic: search_context.weigh_subjects spares a
# memory holding every word of it, whoever it is about.
_EN_PERSON = re.compile(
    r"\b(?:i|me|my|mine|myself|we|us|our|you|your|yours|he|him|his|himself|she|her|hers|herself|user)\b",
    re.IGNORECASE,
)
_ZH_PERSON = re.compile(r"我|你|您|咱|(?<!其)他|她|自己|用户|本人")


def refers_to_user(query: str, own: frozenset[str] = frozenset()) -> bool:
    """Whether the query refers to a person at all: a personal pronoun, "the user", or an own name."""
    if _EN_PERSON.search(query) or _ZH_PERSON.search(query):
        return True
    pattern = cast_pattern(own, ignore_case=True)
    return pattern is not None and pattern.search(query) is not None


def query_subject(
    query: str, names: frozenset[str] = frozenset(), own: frozenset[str] = frozenset()
) -> QuerySubject:
    _, _, en_any, zh_any = _patterns()
    groups = _surface_groups()
    found = QuerySubject(about_user=refers_to_user(query, own))
    for pattern in (en_any, zh_any):
        for match in pattern.finditer(query):
            group = groups[match.group("rel").lower()]
            found.relations.update((group, *COVERS.get(group, ())))
    cast = cast_pattern(names, ignore_case=True)
    if cast is not None:
        by_folded = {name.casefold(): name for name in names}
        found.names.update(by_folded.get(m.group(0).casefold(), m.group(0)) for m in cast.finditer(query))
    return found


def mismatch(query: QuerySubject, memory: Subject) -> bool:
    """True when the memory is about somebody the query does not ask about."""
    if memory.is_user:
        return False
    if query.is_user:
        return True
    if memory.owner is not None and memory.owner not in query.names:
        return True  # the relation asked about, but of somebody else: "他家孩子" is not 何静的孩子
    if memory.relation is not None and memory.relation in query.relations:
        return False
    return not (memory.name is not None and memory.name in query.names)


def introduced_names(texts: Iterable[str]) -> set[str]:
    """The names that memories introduce with a relation ("neighbour Gao Feng", "邻居高峰")."""
    names: set[str] = set()
    for text in texts:
        subject = subject_of(text)
        if subject.name:
            names.add(subject.name)
    return names


QUESTION_END = re.compile(r"[?？]\s*$|[吗呢][。.!！]?\s*$")


def is_question(text: str) -> bool:
    """A memory that only asks something ("Assistant: Kevin is the groom?") states no fact."""
    return bool(QUESTION_END.search(text))


ASSISTANT_TURN = re.compile(r"^\s*(?:assistant|助手)\s*[:：]", re.IGNORECASE)


def is_turn(text: str) -> bool:
    """A stored dialogue turn ("User: …", "Assistant: …") rather than a fact written about someone."""
    return bool(SPEAKER_LABEL.match(text))


def said_by_assistant(text: str) -> bool:
    """A stored turn the assistant said: it repeats or asks, the user's own words are the evidence."""
    return bool(ASSISTANT_TURN.match(text))
