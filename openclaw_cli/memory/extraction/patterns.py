"""Explicit memory statements found without a model, in English and Chinese.

They are what extraction falls back on when no model is configured or the model fails, and what
"remember this" / 记住 uses to write a memory at once. Only plain first-person statements count:
"remember that …", "记住…", "I prefer / like / love / hate …", "我喜欢 / 讨厌 / 偏好 …", "my name is",
"我叫 / 我是". Questions ("do I like tea?", "我喜欢吗") never do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A stated value is one clause: anything longer is not a fact the pattern understood.
MAX_VALUE_CHARS = 200
# A 100,000-character paste must not turn into hundreds of memories.
MAX_PER_TEXT = 20

# Chinese commas separate clauses ("我喜欢咖啡，我讨厌西兰花"); English ones may sit inside a list.
_SENTENCE = re.compile(r"[^.!?。！？;；，\n]+[.!?。！？;；，]*")
_QUESTION_END = re.compile(r"(\?|？|吗|嘛|呢)\W*$")

# "remember that …" at the start of a clause, not "I remember that …" or "do you remember …".
_EN_REMEMBER = re.compile(
    r"(?:^|[,:;]\s*)(?:please\s+|pls\s+)?(?:remember|don'?t\s+forget|do\s+not\s+forget|note)\b"
    r"(?:\s+that\b|\s+this\b|\s*:)?\s*(?P<value>.*)",
    re.IGNORECASE,
)
_ZH_REMEMBER = re.compile(
    r"(?:^|[，,：:；;]\s*)(?:请|麻烦|帮我|你要|要)?记住(?!了)(?:这个|这一点|这件事|一下)?[：:，,\s]*(?P<value>.*)"
)
_EN_NAME = re.compile(r"\bmy\s+name\s+is\s+(?P<value>.+)", re.IGNORECASE)
_ZH_NAME = re.compile(r"我叫(?P<value>[^，,。！？\s]{1,40})")
# 我是说 ("I mean"), 我是不是 ("am I"), 我是在 ("I was …ing") are not statements about who someone is.
_ZH_IDENTITY = re.compile(r"我是(?!说|不是|在|否|个问题|因为|觉得)(?P<value>[^，,。！？]{1,40})")
_EN_LIKING = re.compile(
    r"\bI\s+(?:really\s+|much\s+|do\s+)?(?P<verb>prefer|like|love|enjoy|hate|dislike|don'?t\s+like|do\s+not\s+like"
    r"|can'?t\s+stand)\s+(?P<value>.+)",
    re.IGNORECASE,
)
_ZH_LIKING = re.compile(
    r"我(?:很|最|也|还|非常|比较|更)?(?P<verb>不喜欢|喜欢|讨厌|偏好|爱吃|爱喝|爱)(?P<value>.+)"
)

_EN_VERBS = {
    "prefer": "prefers",
    "like": "likes",
    "love": "loves",
    "enjoy": "enjoys",
    "hate": "hates",
    "dislike": "dislikes",
    "dont like": "does not like",
    "do not like": "does not like",
    "cant stand": "cannot stand",
}


@dataclass(frozen=True)
class PatternMemory:
    """A memory a pattern recognised in one sentence of a message."""

    category: str
    l0: str
    attribute: str | None = None
    # The user asked for it to be remembered; an empty l0 means "remember this" pointed elsewhere.
    explicit: bool = False


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


def clean(value: str) -> str:
    """A stated value without surrounding quotes and final punctuation, within MAX_VALUE_CHARS."""
    value = value.strip().strip(" \"'“”‘’「」").rstrip(".!。！;；,，")
    return value[:MAX_VALUE_CHARS].strip()


def _statement(sentence: str) -> PatternMemory | None:
    """The preference or profile fact a sentence states, if it states one plainly."""
    if match := _EN_NAME.search(sentence):
        name = clean(match["value"])
        return PatternMemory("profile", f"User's name is {name}", "name") if name else None
    if match := _ZH_NAME.search(sentence):
        return PatternMemory("profile", f"用户叫{clean(match['value'])}", "name")
    if match := _EN_LIKING.search(sentence):
        verb = re.sub(r"[^a-z ]", "", " ".join(match["verb"].lower().split()))
        value = clean(match["value"])
        return PatternMemory("preference", f"User {_EN_VERBS.get(verb, verb)} {value}") if value else None
    if match := _ZH_LIKING.search(sentence):
        value = clean(match["value"])
        return PatternMemory("preference", f"用户{match['verb']}{value}") if value else None
    if match := _ZH_IDENTITY.search(sentence):
        value = clean(match["value"])
        return PatternMemory("profile", f"用户是{value}") if value else None
    return None


def third_person(value: str) -> str:
    """ "my locker code is 4411" -> "User's locker code is 4411": memories speak about the user."""
    value = re.sub(r"^my\b", "User's", value, flags=re.IGNORECASE)
    value = re.sub(r"^(?:I'm|I am)\b", "User is", value)
    value = re.sub(r"^I\b", "User", value)
    return re.sub(r"^我(?!们)", "用户", value)


def _remember_request(sentence: str) -> PatternMemory | None:
    match = _EN_REMEMBER.search(sentence) or _ZH_REMEMBER.search(sentence)
    if match is None:
        return None
    value = clean(match["value"])
    inner = _statement(value) if value else None
    if inner is not None:
        return PatternMemory(inner.category, inner.l0, inner.attribute, explicit=True)
    return PatternMemory("profile", third_person(value), explicit=True)


def find_memories(text: str) -> list[PatternMemory]:
    """Every explicit statement in `text`, in order, at most MAX_PER_TEXT; questions are ignored."""
    found: list[PatternMemory] = []
    seen: set[str] = set()
    for sentence in sentences(text):
        if _QUESTION_END.search(sentence):
            continue
        memory = _remember_request(sentence) or _statement(sentence)
        if memory is None or memory.l0 in seen and memory.l0:
            continue
        seen.add(memory.l0)
        found.append(memory)
        if len(found) >= MAX_PER_TEXT:
            break
    return found


def asks_to_remember(text: str) -> bool:
    """The message asks for something to be remembered ("remember that …", "记住…")."""
    return any(memory.explicit for memory in find_memories(text))
