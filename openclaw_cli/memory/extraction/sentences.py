"""Where a message's sentences end, and where a compound statement may be cut into whole facts.

A "." ends a sentence only when a space or the end of the text follows it, so decimals ("3.30pm"),
versions ("v2.3"), addresses ("example.com", "wu@example.com") never cut a fact. Before a space it still
may not end one: after a title ("Dr.", "Mrs.", "e.g.") never, and after an abbreviation that can also
close a sentence ("a.m.", "St.", "U.S.", an initial) only when the next word plainly starts a new one
("I", "My", "Remember"). "。！？；" and a line break always end a sentence; the Chinese comma never does:
"我的牙医是吴医生，在榆树街" is one fact.

A compound statement ("my locker code is 4417 and my doctor is Dr Alvarez", "我喜欢咖啡，我讨厌西兰花")
is cut only where both sides are whole first-person statements; otherwise it stays one fact, because a
cut that leaves "在榆树街" or "and coffee" alone keeps a fragment, and a fragment is not true on its own.
"""

from __future__ import annotations

import re

from openclaw_cli.memory.text.words import words

# Never the end of a sentence before a space: they are followed by what they introduce.
_TITLES = words(
    "dr mr mrs ms mx prof rev hon gen col capt lt sgt fr sr. e.g i.e vs cf approx incl esp viz fig mt"
    " messrs mme mlle"
)
# May end a sentence: only when the next word plainly starts a new one.
_AMBIGUOUS = words(
    "a.m p.m am pm st jr sr etc u.s u.k u.n e.u no nos tel apt ave rd blvd ln inc ltd co corp dept est"
    " jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri sat sun"
    " min max hr hrs ph.d phd m.d b.a m.a"
)
# Words that start a new sentence after an ambiguous abbreviation ("… at 7 a.m. My wife …").
_STARTERS = words(
    "i i'm i've i'd i'll my we our the remember please also and but he she they it this that note don't"
    " do what when where how can could would will thanks thank ok okay so then plus oh hi hello btw"
    " anyway there you your his her their its"
)
# Always the end: CJK terminators and line breaks; "!" and "?" before a space, a quote, a CJK character or
# the end, not inside an address ("…/a.b?c=1"). A run counts once ("?!", "。。"). A semicolon
# joins clauses of one sentence ("remember that A; B" asks for both).
_HARD_END = re.compile(r"[。！？\n]+|[!?]+(?=[\s\"'”’)）」』]|$|[^\x00-\x7f])")
_DOT = re.compile(r"\.+")
# The Latin word a period follows ("是Dr." -> "Dr"): a digit or a Han character before it ends a sentence.
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_WORD_AFTER = re.compile(r"^\s*[\"'“‘(]*([^\s\"'”’)]+)")
_CLOSERS = "\"'”’)）」』"


def sentences(text: str) -> list[str]:
    """The sentences of `text`, stripped, in order; each keeps its final punctuation."""
    out: list[str] = []
    start = 0
    for end in _ends(text):
        piece = text[start:end].strip()
        if piece:
            out.append(piece)
        start = end
    tail = text[start:].strip()
    if tail:
        out.append(tail)
    return out


def _ends(text: str) -> list[int]:
    """Offsets just past each sentence's final punctuation (closing quotes included)."""
    ends: list[int] = []
    for match in _HARD_END.finditer(text):
        ends.append(_past_closers(text, match.end()))
    for match in _DOT.finditer(text):
        after = match.end()
        if after < len(text) and not text[after].isspace() and text[after] not in _CLOSERS:
            continue  # "3.30", "v2.3", "example.com", "a.m" inside the abbreviation
        if _dot_ends(text, match.start(), after):
            ends.append(_past_closers(text, after))
    return sorted(set(ends))


def _past_closers(text: str, at: int) -> int:
    while at < len(text) and text[at] in _CLOSERS:
        at += 1
    return at


def _dot_ends(text: str, dot: int, after: int) -> bool:
    """Whether the period(s) at text[dot:after], followed by a space or the end, end a sentence."""
    if after - dot > 1 or after >= len(text):
        return True  # an ellipsis, or the end of the text
    before = _WORD_BEFORE.search(text[:dot])
    word = before.group(1).lower() if before else ""
    if not word:
        return True
    if word in _TITLES or word + "." in _TITLES:
        return False
    if word in _AMBIGUOUS or re.fullmatch(r"(?:[a-z]\.)+[a-z]", word) or re.fullmatch(r"[a-z]", word):
        following = _WORD_AFTER.match(text[after:])
        nxt = following.group(1) if following else ""
        return bool(nxt) and nxt[0].isupper() and nxt.lower().rstrip(",.:;!?") in _STARTERS
    return True


def is_abbreviation(word: str) -> bool:
    """ "St.", "a.m.", "Dr.": a final period that belongs to the word (kept when a fact ends with it)."""
    bare = word.rstrip(".").lower()
    if not word.endswith(".") or not bare:
        return False
    return (
        bare in _TITLES
        or bare in _AMBIGUOUS
        or bool(re.fullmatch(r"(?:[a-z]\.)+[a-z]", bare))
        or bool(re.fullmatch(r"[a-z]", bare))
    )


# A first-person statement's start: "my …", "I …", "I'm …", "我…" (not 我们: a group, not the person).
_EN_SUBJECT = re.compile(r"^(?:also\s+|and\s+)?(?:my\s+\w|I\s+\w|I'm\s|I've\s|I'd\s|I'll\s|i\s+\w)", re.I)
_ZH_SUBJECT = re.compile(r"^(?:也|还有|另外)?我(?!们)")
_EN_JOINS = re.compile(r"[,;]\s*(?:and|but)\s+|\s+(?:and|but)\s+|[,;]\s+")
_ZH_JOINS = re.compile(r"[，,；;]\s*(?:而且|并且|还有|另外|但是|但|可是)?")


def clauses(sentence: str) -> list[str]:
    """`sentence` cut into whole first-person statements where it joins them, else [sentence]."""
    body = sentence.strip()
    if not body:
        return []
    parts = _split(body, _EN_JOINS, _EN_SUBJECT) if _EN_SUBJECT.match(body) else [body]
    out: list[str] = []
    for part in parts:
        out.extend(_split(part, _ZH_JOINS, _ZH_SUBJECT) if _ZH_SUBJECT.match(part) else [part])
    return out


def _split(text: str, joins: re.Pattern[str], subject: re.Pattern[str]) -> list[str]:
    """Cut at each join that is followed by a new first-person subject; the first part starts with one
    (checked by the caller), so each part is a whole statement."""
    parts: list[str] = []
    start = 0
    for join in joins.finditer(text):
        rest = text[join.end() :]
        if not subject.match(rest) or join.start() <= start:
            continue
        left = text[start : join.start()].strip()
        if not _whole(left):
            continue  # "my wife and I like hiking": "my wife" states nothing
        parts.append(left)
        start = join.end()
    parts.append(text[start:].strip())
    return [_LEAD.sub("", p) for p in parts if p]


# What a part may start with that belongs to the join, not to the statement.
_LEAD = re.compile(r"^(?:also|and|but|还有|另外|而且)\s*", re.I)
# A statement about "my …" has a verb after the noun; "I …" always has one.
_EN_VERB = re.compile(
    r"\b(?:is|are|was|were|has|have|had|will|would|can|could|does|did|'s|\w+(?:s|ed))\b", re.I
)


def _whole(left: str) -> bool:
    left = _LEAD.sub("", left)
    if re.match(r"^my\s", left, re.I):
        return bool(_EN_VERB.search(left.split(None, 2)[2] if len(left.split()) > 2 else ""))
    return len(left) >= 3
