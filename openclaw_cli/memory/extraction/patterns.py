"""Explicit memory statements found without a model, in English and Chinese.

They are what extraction falls back on when no model is configured or the model fails, and what
"remember this" / 记住 uses to write a memory at once. Only plain first-person statements count:
"remember that …", "记住…", "I prefer / like / love / hate …", "我喜欢 / 讨厌 / 偏好 …", "my name is",
"我叫 / 我是". Questions ("do I like tea?", "我喜欢吗") never do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from openclaw_cli.memory.extraction.person import TASK, category_of, task_text, third_person
from openclaw_cli.memory.extraction.sentences import clauses, is_abbreviation
from openclaw_cli.memory.extraction.sentences import sentences as split_sentences

# A stated value is one clause: anything longer is not a fact the pattern understood.
MAX_VALUE_CHARS = 200
# A 100,000-character paste must not turn into hundreds of memories.
MAX_PER_TEXT = 20

_QUESTION_END = re.compile(r"(\?|？|吗|嘛|呢)\W*$")

# "remember that …" at the start of a clause, not "I remember that …" or "do you remember …".
_EN_REMEMBER = re.compile(
    r"(?:^|[,:;]\s*)(?:please\s+|pls\s+)?(?:remember|don'?t\s+forget|do\s+not\s+forget|note)\b"
    r"(?:\s+that\b|\s+this\b)?\s*:?\s*(?P<value>.*)",
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


@dataclass(frozen=True)
class PatternMemory:
    """A memory a pattern recognised in one sentence of a message."""

    category: str
    l0: str
    attribute: str | None = None
    # The user asked for it to be remembered; an empty l0 means "remember this" pointed elsewhere.
    explicit: bool = False


def sentences(text: str) -> list[str]:
    return split_sentences(text)


def clean(value: str) -> str:
    """A stated value without surrounding quotes and final punctuation, within MAX_VALUE_CHARS. The
    period of a final abbreviation stays ("… on Elm St.", "… at 7 a.m.")."""
    value = value.strip().strip(" \"'“”‘’「」")
    words = value.split()
    if words and is_abbreviation(words[-1]):
        value = value.rstrip("!。！;；,，")
    else:
        value = value.rstrip(".!。！;；,，")
    return value[:MAX_VALUE_CHARS].strip()


def said_of_user(text: str) -> str:
    """`text` in the third person, or as said when it cannot be rewritten completely (person.py)."""
    rewritten = third_person(text)
    out = text if rewritten is None else rewritten
    # "the meeting moved …" -> "The meeting moved …": a memory line reads as a sentence.
    if re.match(r"[a-z][a-z']*\b", out) and not re.match(r"[a-z]+[A-Z]", out):
        out = out[0].upper() + out[1:]
    return out


def _statement(clause: str) -> PatternMemory | None:
    """The preference or profile fact a clause states, if it states one plainly."""
    if match := _EN_NAME.search(clause):
        name = clean(match["value"])
        return PatternMemory("profile", f"User's name is {name}", "name") if name else None
    if match := _ZH_NAME.search(clause):
        return PatternMemory("profile", f"用户叫{clean(match['value'])}", "name")
    if (match := _EN_LIKING.search(clause) or _ZH_LIKING.search(clause)) and _leads(clause, match.start()):
        if not clean(match["value"]):
            return None
        return PatternMemory("preference", said_of_user(clean(clause[match.start() :])))
    if match := _ZH_IDENTITY.search(clause):
        value = clean(match["value"])
        return PatternMemory("profile", f"用户是{said_of_user(value)}") if value else None
    return None


# What may come before "I like …" in its own clause: an interjection, not another subject ("my wife and").
_LEAD_IN = re.compile(
    r"(?:(?:also|oh|well|honestly|actually|and|but|so|yes|yeah|btw|其实|另外|而且|还有)[\s,，:：]*)*$", re.I
)


def _leads(clause: str, at: int) -> bool:
    """The statement found at `at` is the clause's own, not the tail of a longer subject."""
    return bool(_LEAD_IN.fullmatch(clause[:at]))


def _remembered(clause: str) -> PatternMemory:
    """What one clause of a "remember that …" request stores: a statement it holds, else its words
    about the user, in the category its content calls for."""
    inner = _statement(clause)
    if inner is not None:
        return PatternMemory(inner.category, inner.l0, inner.attribute, explicit=True)
    category = category_of(clause)
    text = task_text(clause) if category == "event" and TASK.match(clause) else clause
    return PatternMemory(category, said_of_user(text), explicit=True)


def _remember_request(sentence: str) -> list[PatternMemory] | None:
    match = _EN_REMEMBER.search(sentence) or _ZH_REMEMBER.search(sentence)
    if match is None:
        return None
    value = clean(match["value"])
    if not value:
        return [PatternMemory("profile", "", explicit=True)]  # "remember this": the fact is elsewhere
    return [_remembered(clean(clause)) for clause in clauses(value)]


def find_memories(text: str) -> list[PatternMemory]:
    """Every explicit statement in `text`, in order, at most MAX_PER_TEXT; questions are ignored."""
    found: list[PatternMemory] = []
    seen: set[str] = set()
    for sentence in sentences(text):
        if _QUESTION_END.search(sentence):
            continue
        requested = _remember_request(sentence)
        if requested is None:
            stated = (_statement(clause) for clause in clauses(sentence))
            requested = [memory for memory in stated if memory is not None]
        for memory in requested:
            if memory.l0 and memory.l0 in seen:
                continue
            seen.add(memory.l0)
            found.append(memory)
            if len(found) >= MAX_PER_TEXT:
                return found
    return found


def asks_to_remember(text: str) -> bool:
    """The message asks for something to be remembered ("remember that …", "记住…")."""
    return any(memory.explicit for memory in find_memories(text))
