"""Long text cut to a limit for a model prompt, keeping its head and tail and saying how much went."""

from __future__ import annotations


def bounded(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, keeping its head and tail and saying how much went."""
    if len(text) <= limit:
        return text
    marker = f" […{len(text) - limit} characters omitted…] "
    keep = max(limit - len(marker), 0)
    head = keep * 3 // 4
    return text[:head] + marker + text[len(text) - (keep - head) :]
