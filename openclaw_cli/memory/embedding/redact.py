"""What an API embedder is sent: the text with e-mail addresses, phone numbers and card- or id-like numbers
masked (seed 000 §12 [3], "embedding privacy").

A vector of "[email]" is as useful for finding a memory as one of "wu@example.com": what the memory is about
is in its words, not in the address. The stored text keeps every character; only the copy that leaves the
machine is masked. Local embedders never send anything, so they embed the text as it is.

The patterns aim at what identifies a person, not at every number: a date, a price, a year, a time or a
short count stays ("paid 120 on 2026-03-01 at 14:30"), since masking them would blur the memories people
search for by them. What counts, in the order tried (the first to claim a span keeps it):
- an e-mail address: local@domain.tld;
- a card-like number: 13 to 19 digits, optionally grouped by single spaces or dashes;
- an id-like number: 9 or more digits in a row (a national id, an account or passport number; a Chinese
  resident id ends in X), or the US social security shape ddd-dd-dddd;
- a phone number: an optional +country code, then 7 or more digits in groups separated by spaces, dots,
  dashes or parentheses (+1 (415) 555-0134, 138 0013 8000, 020-7946-0958).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

EMAIL = "[email]"
CARD = "[card]"
ID = "[id]"
PHONE = "[phone]"

# (?<![\w.+-]) / (?![\w-]): whole tokens only, never the digits inside a longer word or address.
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (EMAIL, re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+")),
    (CARD, re.compile(r"(?<![\w-])\d{4}(?:[ -]?\d{3,4}){2,3}(?:[ -]?\d{1,3})?(?![\w-])")),
    (ID, re.compile(r"(?<![\w-])(?:\d{9,}[Xx]?|\d{17}[Xx]|\d{3}-\d{2}-\d{4})(?![\w-])")),
    (
        PHONE,
        re.compile(r"(?<![\w+-])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]\d{2,4}){1,4}(?![\w-])"),
    ),
)
_DIGITS = re.compile(r"\d")
# A phone number has at least this many digits; fewer is a date (2026-03-01), a time or an amount.
_PHONE_MIN_DIGITS = 7
_CARD_DIGITS = range(13, 20)
_DATE_LIKE = re.compile(r"^\d{4}[-./ ]\d{1,2}[-./ ]\d{1,2}$|^\d{1,2}[-./ ]\d{1,2}[-./ ]\d{2,4}$")


def _masks(kind: str, span: str) -> bool:
    digits = len(_DIGITS.findall(span))
    if kind == CARD:
        return digits in _CARD_DIGITS
    if kind == PHONE:
        return digits >= _PHONE_MIN_DIGITS and not _DATE_LIKE.match(span)
    return True


def redact(text: str) -> str:
    """`text` with every e-mail address, phone, card- and id-like number replaced by a placeholder."""
    if "@" not in text and _DIGITS.search(text) is None:
        return text  # most memories: nothing to look for
    for placeholder, pattern in _PATTERNS:
        text = pattern.sub(_replacer(placeholder), text)
    return text


def _replacer(placeholder: str) -> Callable[[re.Match[str]], str]:
    def replace(match: re.Match[str]) -> str:
        span = match.group(0)
        return placeholder if _masks(placeholder, span) else span

    return replace


def redact_all(texts: Sequence[str]) -> list[str]:
    return [redact(text) for text in texts]
