"""The person's words in the third person, and the category their content calls for.

Memories speak about the user ("User's locker code is 4417", "用户的牙医是吴医生"). The rewrite is
complete or not done at all: every "I / my / me / mine / myself" is rewritten, with the verb after "I"
agreeing ("I leave" -> "the user leaves"), or the words are kept exactly as said. A half rewrite
("User's locker code is 4417 and my doctor is …") reads as if two people were meant. Words that cannot be
rewritten safely keep the whole text as said: "we / our" (a group, not the person), and a verb after "I"
whose present and past look alike ("I quit", "I read": which one was meant is not known).
"""

from __future__ import annotations

import re

from openclaw_cli.memory.text.words import words

# A pronoun that is a word of its own, not part of an address ("my.site.com", "me@x.org").
_EDGE_BEFORE = r"(?<![\w.@/'’-])"
_EDGE_AFTER = r"(?![\w@/'’-]|\.\w)"
_EN_PRONOUN = re.compile(
    _EDGE_BEFORE + r"(I['’](?:m|ve|d|ll)|i['’]m|I|i|[Mm]y|MY|[Mm]e|[Mm]ine|[Mm]yself)" + _EDGE_AFTER
)
_EN_GROUP = re.compile(
    _EDGE_BEFORE + r"(?:we|us|our|ours|ourselves|we['’](?:re|ve|ll|d))" + _EDGE_AFTER, re.I
)
# Verbs after "I" that keep their form: modals and past tenses.
_UNCHANGED = words(
    "can could will would shall should must may might was had did went got made took saw came knew thought"
    " bought brought left met paid said told found gave felt kept lost ran sold sent spent stood understood"
    " wrote ate drank drove flew grew began broke chose fell forgot held became built caught taught fought"
    " sat slept spoke swam won wore rode rang sang sank threw used to"
)
# Present and past alike: "I quit smoking" is either; the words are kept as said.
_AMBIGUOUS_VERBS = words("put read set cut quit let hurt hit cost split spread shut bet cast burst")
_IRREGULAR = {"am": "is", "have": "has", "do": "does", "go": "goes", "be": "is", "'m": "is"}
_NEGATED = {
    "don't": "does not",
    "don’t": "does not",
    "didn't": "did not",
    "didn’t": "did not",
    "can't": "cannot",
    "can’t": "cannot",
    "won't": "will not",
    "won’t": "will not",
    "haven't": "has not",
    "haven’t": "has not",
    "wasn't": "was not",
    "wasn’t": "was not",
    "couldn't": "could not",
    "wouldn't": "would not",
    "shouldn't": "should not",
}
# Adverbs between "I" and its verb ("I really like", "I usually leave").
_ADVERBS = words(
    "really also always usually never often sometimes just still only mostly rarely actually generally"
    " normally totally absolutely definitely already almost much"
)
_CONTRACTED = {"m": "is", "ve": "has", "ll": "will", "d": "would"}


def third_person(text: str) -> str | None:
    """`text` with every first-person word rewritten, or None when that cannot be done completely."""
    if re.search(r"[\u4e00-\u9fff]", text) and "我" in text:
        return _chinese(text)
    if not _EN_PRONOUN.search(text):
        return text
    if _EN_GROUP.search(text):
        return None
    words = _EN_PRONOUN.split(text)
    out: list[str] = [words[0]]
    # split() alternates text and pronouns: words[1], words[3], … are pronouns.
    for at in range(1, len(words), 2):
        before = "".join(out)
        first = not before.strip() or bool(re.search(r"[:;]\s*$", before))
        pronoun, rest = words[at], words[at + 1]
        plural = bool(re.search(r"\b(?:and|or)\s*$", before, re.I))
        subject = bool(re.match(r"\s*User\s(?!.*\b(?:and|or)\b)", before))
        replaced = _pronoun(pronoun, rest, first, plural, subject)
        if replaced is None:
            return None
        word, rest = replaced
        out.extend([word, rest])
    return "".join(out)


def _pronoun(
    pronoun: str, rest: str, first: bool, plural: bool, subject: bool = False
) -> tuple[str, str] | None:
    """The replacement of one pronoun and the text after it (whose verb may change). `subject`: the
    user is the sentence's subject so far ("User prefers … my coffee"), so "their" can only mean them;
    otherwise ("User's kids call me …") "the user" says who."""
    lower = pronoun.lower().replace("’", "'")
    user = "User" if first else "the user"
    if lower == "my":
        return ("User's" if first else "their" if subject else "the user's"), rest
    if lower == "me":
        return ("them" if subject else "the user"), rest
    if lower == "mine":
        return ("theirs" if subject else "the user's"), rest
    if lower == "myself":
        return "themselves", rest
    if lower.startswith("i'"):
        verb = _CONTRACTED[lower[2:]]
        if lower == "i'd" and re.match(r"\s+(?:been|had|\w+ed)\b", rest):
            verb = "had"
        return f"{user} {verb}", rest
    if plural:
        return user, rest  # "my wife and I like …": the verb is already plural
    agreed = _agree(rest)
    return (user, agreed) if agreed is not None else None


def _agree(rest: str) -> str | None:
    """The text after "I" with its verb in the third person, or None when the verb is unclear."""
    match = re.match(r"(\s+)(.*)", rest, re.S)
    if match is None:
        return None
    space, tail = match.groups()
    adverbs = ""
    if stopped := re.match(r"no\s+longer\s+", tail, re.I):  # "I no longer like …"
        adverbs, tail = stopped.group(0), tail[stopped.end() :]
    while (word := re.match(r"(\w+)(\s+)", tail)) and word.group(1).lower() in _ADVERBS:
        adverbs += word.group(0)
        tail = tail[word.end() :]
    found = re.match(r"([\w'’]+)(.*)", tail, re.S)
    if found is None:
        return None
    verb, tail = found.groups()
    lower = verb.lower()
    if lower in _NEGATED:
        return f"{space}{adverbs}{_NEGATED[lower]}{tail}"
    if lower in _IRREGULAR:
        return f"{space}{adverbs}{_IRREGULAR[lower]}{tail}"
    if lower in _AMBIGUOUS_VERBS or not lower.isalpha():
        return None
    if lower in _UNCHANGED or lower.endswith("ed"):
        return f"{space}{adverbs}{verb}{tail}"
    return f"{space}{adverbs}{_third_singular(verb)}{tail}"


def _third_singular(verb: str) -> str:
    if re.search(r"(?:s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def _chinese(text: str) -> str | None:
    """我 -> 用户 everywhere, or None when 我们/咱们 (a group) is in the text."""
    if re.search(r"我们|咱们|咱", text):
        return None
    return text.replace("我", "用户")


# ---------------------------------------------------------------------------------------- categories

_TIME = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|(?:next|this|last)\s+(?:week|month|year|weekend|monday|tuesday"
    r"|wednesday|thursday|friday|saturday|sunday)|on\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|at\s+\d{1,2}(?:[:.]\d{2}|\s*o'clock)|\d{1,2}(?:[:.]\d{2})?\s*(?:a\.m\.|p\.m\.|am|pm)"
    r"|moved\s+to|postponed|cancell?ed|rescheduled|is\s+broken|broke|failed|is\s+down)\b"
    r"|今天|今晚|明天|后天|昨天|下周|下个月|上周|(?:周|星期|礼拜)[一二三四五六日天]|\d+\s*点|[一二三四五六七八九十两]+点"
    r"|上午|下午|改到|推迟|取消|坏了",
    re.I,
)
_LIKING = re.compile(
    r"\b(?:prefers?|likes?|loves?|enjoys?|hates?|dislikes?|favou?rite|can'?t stand)\b|喜欢|讨厌|偏好|爱吃|爱喝|最爱",
    re.I,
)
_LESSON = re.compile(
    r"^(?:always|never|don'?t\s+ever|the\s+lesson|lesson)\b|^(?:永远|千万|一定要|不要再)", re.I
)
TASK = re.compile(r"^(?:to\s+\w|要|得)", re.I)
_ABOUT_USER = re.compile(r"\b(?:my|I|I'm|I've|I'd|me|mine)\b|我(?!们)")


def category_of(value: str) -> str:
    """The category a remembered statement's content calls for: a task or a dated happening is an event,
    a liking a preference, a rule for next time a lesson, a fact about the person profile; a fact about
    something else (the build, a meeting) an event, which is never merged into another memory."""
    text = value.strip()
    if TASK.match(text):
        return "event"
    if _LESSON.match(text):
        return "lesson"
    if _TIME.search(text):
        return "event"
    if _ABOUT_USER.search(text):
        return "preference" if _LIKING.search(text) else "profile"
    return "event"


def task_text(value: str) -> str:
    """ "to buy milk" -> "User needs to buy milk"; "要买牛奶" -> "用户要买牛奶"."""
    text = value.strip()
    if re.match(r"^to\s", text, re.I):
        return f"User needs {text}"
    if re.match(r"^(?:要|得)", text):
        return f"用户{text}"
    return text
