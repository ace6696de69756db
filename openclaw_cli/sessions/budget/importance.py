"""Importance scoring of session messages (seed 000 §2.5, `context.pruneStrategy: importance`).

When the history does not fit the model's budget, the sliding window drops the oldest messages whatever
they said. With importance, the oldest messages that carry an instruction ("from now on…", "以后…"), a
decision ("we decided…", "就选…") or a fact about a person ("my sister is Lin", "我住在杭州", dates,
numbers, names) outlive small talk ("ok", "thanks", "哈哈"). The rules are plain regular expressions in
English and Chinese: no model call and no heavy import, so scoring costs microseconds per message
(benchmarks/test_bench_importance.py) and is done at trim time, memoised by text like the token counts.

The weights were tuned on the tuning half of fixtures/importance (tests/importance_eval.py) and are
reported on the other half.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# -- the rules ----------------------------------------------------------------------------------------------

# Each rule is a pair of patterns: English, matched against the lower-cased text when it has Latin
# letters, and Chinese, matched only when it has Han characters. Split so, a message pays only for its
# own language's alternations (one mixed pattern with IGNORECASE cost ~4 times as much).


@dataclass(frozen=True)
class _Rule:
    en: re.Pattern[str]
    zh: re.Pattern[str]

    def found(self, lower: str, latin: bool, han: bool) -> bool:
        return bool((latin and self.en.search(lower)) or (han and self.zh.search(lower)))


# "from now on", "always", "don't": a standing instruction outlives the turn it was said in.
_INSTRUCTION = _Rule(
    re.compile(
        r"\b(?:from now on|going forward|in (?:the )?future|always|never|don'?t|do not|please remember|"
        r"remember (?:that|to)|make sure|keep in mind|stop \w+ing|no more)\b"
    ),
    re.compile(
        r"以后|从现在起|从现在开始|今后|往后|总是|一律|永远|每次|千万|别|不要|务必|记住|记得|请用|请叫"
    ),
)
# "we decided", "let's go with", "booked": what was settled.
_DECISION = _Rule(
    re.compile(
        r"\b(?:decided?|decision|let'?s go with|go(?:ing)? with|settled? on|chose|choose|picked|agreed|"
        r"booked|reserved|confirmed|final(?:ly)?|the plan is|we'?ll use|i'?ll take)\b"
    ),
    re.compile(r"决定|定了|定下|就选|选了|就用|就定|敲定|确定|约好|订了|预订|预约|说好了|最终"),
)
# A fact about a person: "my X is Y", "I'm allergic", "I live in", "我叫", "我的…是".
_PERSONAL = _Rule(
    re.compile(
        r"\bmy\s+(?:[\w'-]+\s+){0,3}(?:is|are|was|were|'s)\b|\bi(?:'m| am) (?:a|an|allergic|from|married|"
        r"vegetarian|vegan)\b|\bi (?:live|work|was born|moved|have|grew up|study)\b|\b(?:called|named)\b|"
        r"\b(?:birthday|anniversary|allergic|allergy|address|phone|passport|wife|husband|sister|brother|"
        r"daughter|son|kid|kids|mother|father|mom|dad|boss|manager|partner|doctor|dentist|moved|moving|"
        r"flying|flight|makes me|can'?t (?:eat|have|drink|stand))\b"
    ),
    re.compile(
        r"我的.{0,12}?(?:是|叫|在)|我叫|我是|我住|我在.{0,10}?(?:工作|上班|住|读)|过敏|生日|纪念日|地址|电话|"
        r"护照|密码|老婆|老公|妻子|丈夫|姐姐|妹妹|哥哥|弟弟|女儿|闺女|儿子|妈妈|爸爸|老板|经理|医生|牙医|搬到|"
        r"搬家|航班|机票|起飞|我.{0,4}(?:飞|吃|不能|老忘)|不能(?:吃|喝|碰)"
    ),
)
# Specifics: a number, a date or time, a capitalised name inside a sentence (matched on the original
# text, where the capitals are).
_SPECIFIC = re.compile(
    r"\d|(?i:\b(?:january|february|march|april|may|june|july|august|september|october|november|december|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b)|(?<=[a-z,] )[A-Z][a-z]{2,}"
    r"|[一二三四五六七八九十两]+(?:月|号|日|点|岁|个|年)|周[一二三四五六日天]|星期[一二三四五六日天]",
)
# Small talk: the whole message is a greeting, a thanks, a laugh or an acknowledgement.
_SMALL_TALK = _Rule(
    re.compile(
        r"^(?:(?:ok(?:ay)?|k|sure|yes|yeah|yep|no|nope|thanks?(?: you)?(?: so much)?|thx|ty|cool|nice|great|"
        r"awesome|perfect|got it|sounds good|haha+|hehe+|lol|lmao|hi|hello|hey|good (?:morning|night|evening)|"
        r"morning|night|bye|see you|you'?re welcome|no problem|np|wow|oh|ah|hmm+|alright|fine|right|indeed|"
        r"glad to help|any ?time|my pleasure|same|me too|true)(?:[\s,!.~?:)(]|there)*)+$"
    ),
    re.compile(
        r"^(?:好的?|好哒|好滴|嗯+|哦+|噢+|哈+|呵+|嘿+|谢谢(?:你|啦)?|多谢|感谢|早(?:上好|安)?|晚安|你好|您好|"
        r"在吗|在的|收到|行|可以|没事|没问题|拜拜|再见|不客气|不用谢|对|是的|确实|厉害|棒|好吧|了解|明白|"
        r"知道了|辛苦了|哈喽|嗨)(?:[\s,，!！。~～?？、.…]|呀|啊|哦|啦|了)*$"
    ),
)
# The speaker talking about themselves (weaker than a stated fact: "I think so" is not one).
_FIRST_PERSON = _Rule(re.compile(r"\b(?:i|i'm|i've|i'll|i'd|my|me|mine|we|our|us)\b"), re.compile(r"我|咱"))
_LATIN = re.compile(r"[A-Za-z]")
_HAN = re.compile(r"[\u4e00-\u9fff]")
# Words that make a short message more than small talk in one language or the other.
_WORD = re.compile(r"[A-Za-z']+|[\u4e00-\u9fff]")

# The weights (tuned on the tuning half of fixtures/importance; see the module docstring).
INSTRUCTION_WEIGHT = 3.0
DECISION_WEIGHT = 2.0
PERSONAL_WEIGHT = 2.5
SPECIFIC_WEIGHT = 1.0
FIRST_PERSON_WEIGHT = 1.0
# The user's own words carry their facts and instructions; the assistant's carry its decisions, while
# its "don't…" is advice about a task, not a standing instruction (so it does not count there).
ROLE_WEIGHT = {"user": 1.0, "assistant": 0.5, "tool": 0.3}
INSTRUCTING_ROLES = ("user", "system")
SMALL_TALK_SCORE = 0.0
QUESTION_FACTOR = 0.5  # "what was my sister's name?" asks for a fact, it does not state one


def categories(text: str) -> frozenset[str]:
    """What a message carries: instruction, decision, personal, specific, first-person, or small-talk
    (alone)."""
    stripped = text.strip()
    lower = stripped.lower()
    latin, han = bool(_LATIN.search(stripped)), bool(_HAN.search(stripped))
    if not stripped or _SMALL_TALK.found(lower, latin, han):
        return frozenset({"small-talk"})
    found = set()
    if _INSTRUCTION.found(lower, latin, han):
        found.add("instruction")
    if _DECISION.found(lower, latin, han):
        found.add("decision")
    if _PERSONAL.found(lower, latin, han):
        found.add("personal")
    if _SPECIFIC.search(stripped):
        found.add("specific")
    if _FIRST_PERSON.found(lower, latin, han):
        found.add("first-person")
    if not found - {"first-person"} and len(_WORD.findall(stripped)) <= 3:
        found.add("small-talk")  # "lol same", "哈哈好" : too short to say anything that lasts
    return frozenset(found)


@lru_cache(maxsize=8192)
def score_text(role: str, text: str) -> float:
    """A message's importance: 0 for small talk, else its role's weight times 1 + what it carries."""
    found = categories(text)
    if "small-talk" in found:
        return SMALL_TALK_SCORE
    value = 1.0
    instructs = "instruction" in found and role in INSTRUCTING_ROLES
    value += INSTRUCTION_WEIGHT if instructs else 0.0
    value += DECISION_WEIGHT if "decision" in found else 0.0
    value += PERSONAL_WEIGHT if "personal" in found else 0.0
    value += SPECIFIC_WEIGHT if "specific" in found else 0.0
    value += FIRST_PERSON_WEIGHT if "first-person" in found else 0.0
    if _is_question(text) and not instructs:
        value *= QUESTION_FACTOR
    return ROLE_WEIGHT.get(role, 0.3) * value


def _is_question(text: str) -> bool:
    stripped = text.rstrip()
    return stripped.endswith(("?", "？", "吗", "呢", "吗？", "呢？"))


def score_message(message: dict[str, Any]) -> float:
    role = str(message.get("role", ""))
    return score_text(role, str(message.get("content") or ""))


def unit_score(unit: Sequence[dict[str, Any]]) -> float:
    """A tool call with its results is scored by its most important message (they go or stay together)."""
    return max((score_message(m) for m in unit), default=0.0)


def select_units(
    costs: Sequence[int],
    scores: Sequence[float],
    starts_turn: Sequence[bool],
    budget: int,
    keep_recent_turns: int,
) -> list[int]:
    """Which units (by position) fit `budget`: the last `keep_recent_turns` turns first, newest first, as the
    sliding window would; then the older units by score (the newer first on a tie), each that still fits.

    If the recent turns alone do not fit, the newest units that fit are kept as the sliding window would
    keep them (the conversation going on comes first), and only what the window leaves unused goes to
    older important units. The positions come back in their original order.
    """
    count = len(costs)
    turns_seen = 0
    tail_start = count
    while tail_start > 0 and turns_seen < keep_recent_turns:
        tail_start -= 1
        turns_seen += 1 if starts_turn[tail_start] else 0
    kept: list[int] = []
    remaining = budget
    for position in range(count - 1, tail_start - 1, -1):
        if costs[position] > remaining:
            tail_start = position + 1  # the recent part stops here, as a sliding window would; what is
            break  # left goes to older messages that are important and short enough
        kept.append(position)
        remaining -= costs[position]
    for position in sorted(range(tail_start), key=lambda p: (-scores[p], -p)):
        if costs[position] <= remaining:
            kept.append(position)
            remaining -= costs[position]
    return sorted(kept)
